"""Producibility: every text the grammar requires can be spelled by this vocabulary's tokens.

A byte-level vocabulary (GPT-2 style, or SentencePiece with byte fallback) has a token for every
byte and can spell anything. A vocabulary without byte fallback spells only the characters its
tokens contain: a literal with another character, or a class with no such member, can never be
produced, and a ``Token(id)`` naming an unused id (padding, a hole) is never sampled. (An id outside the
vocabulary is the matcher's GK170 error.)
"""

from __future__ import annotations

from collections.abc import Iterator

from grammarkit.automata import utf8
from grammarkit.check.context import CheckContext, grammar_nodes
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "producibility"
CODES = ("GK300", "GK301", "GK302")

_SHOWN = 5
"""At most this many missing characters or ids are named in one message."""


class Alphabet:
    """The code points a vocabulary's ordinary tokens can spell."""

    def __init__(self, ctx: CheckContext):
        tokens = ctx.ordinary_ids
        single = {token[0] for token in tokens if len(token) == 1}
        self.every_byte = len(single) == 256
        self.chars: set[str] = set()
        if not self.every_byte:
            for token in tokens:
                self.chars.update(token.decode("utf-8", "ignore"))
            self.chars.update(chr(b) for b in single if b < 0x80)

    def can_spell(self, char: str) -> bool:
        return self.every_byte or char in self.chars

    def spellable_in(self, ranges: utf8.CodepointRanges) -> bool:
        """Whether some code point of ``ranges`` can be spelled."""
        if self.every_byte:
            return True
        return any(lo <= ord(c) <= hi for c in self.chars for lo, hi in ranges)


def run(ctx: CheckContext) -> list[Diagnostic]:
    """GK300 literals and GK301 classes the vocabulary cannot spell; GK302 ``Token`` ids
    with no token."""
    alphabet = Alphabet(ctx)
    found: list[Diagnostic] = []
    for rule, node in grammar_nodes(ctx.reachable_rules):
        if isinstance(node, ast.Literal) and not alphabet.every_byte:
            missing = sorted({c for c in node.value if not alphabet.can_spell(c)})
            if missing:
                found.append(ctx.report(
                    "GK300", Severity.ERROR,
                    f"no token sequence of this vocabulary spells {_quote(node.value)} in rule "
                    f"`{rule.name}`: no token contains {_chars(missing)}",
                    node, "use characters the vocabulary has, or a tokenizer with byte fallback"))
        elif isinstance(node, ast.CharClass):
            ranges = utf8.class_codepoints(node.ranges, node.negated)
            if ranges and not alphabet.spellable_in(ranges):
                found.append(ctx.report(
                    "GK301", Severity.ERROR,
                    f"no token of this vocabulary contains a character of this class "
                    f"(rule `{rule.name}`)",
                    node, "add characters the vocabulary has to the class"))
        elif isinstance(node, (ast.TokenSet, ast.TokenTagDispatch)):
            found.extend(_unused_token_ids(ctx, rule, node))
    return found


def _unused_token_ids(ctx: CheckContext, rule: ast.Rule,
                      node: ast.TokenSet | ast.TokenTagDispatch) -> Iterator[Diagnostic]:
    if isinstance(node, ast.TokenSet):
        if node.exclude:
            return
        ids: tuple[int, ...] = node.ids
    else:
        ids = tuple(token_id for token_id, _ in node.tags)
    vocab = ctx.vocab
    unused = [i for i in ids if 0 <= i < vocab.vocab_size and not vocab.tokens[i]]
    if unused:
        shown = ", ".join(map(str, unused[:_SHOWN])) + (" ..." if len(unused) > _SHOWN else "")
        yield ctx.report(
            "GK302", Severity.ERROR,
            f"token id {shown} in rule `{rule.name}` is an unused id of this vocabulary (no "
            "token: padding of the model's head, or a hole): a model never produces it",
            node, "name ids of real tokens (vocab.token_id(text) gives them)")


def _chars(chars: list[str]) -> str:
    shown = ", ".join(f"{c!r} (U+{ord(c):04X})" for c in chars[:_SHOWN])
    return shown + (f" and {len(chars) - _SHOWN} more" if len(chars) > _SHOWN else "")


def _quote(text: str, limit: int = 40) -> str:
    shown = text if len(text) <= limit else text[:limit] + "..."
    return repr(shown)
