"""Special-token leaks: grammar text that spells a special token of this vocabulary.

The matcher never allows a special id (``<|im_end|>``, ``<think>``, ...) unless the grammar names
it with ``Token(...)``, but a model can still write the same text as ordinary pieces (``<|``,
``im``, ``_end``, ``|>``) wherever the grammar allows free text: downstream, a chat template or
tool parser then sees a turn end or a tool call inside a string value. Free text is a repetition
whose single-character body covers every character of the special token's text; a
``TagDispatch`` allows any text between tags.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from grammarkit.analysis.charset import ANY_CHAR, CharSet
from grammarkit.check.context import CheckContext, grammar_nodes
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "special-tokens"
CODES = ("GK320", "GK321")

_SHOWN = 4


def run(ctx: CheckContext) -> list[Diagnostic]:
    """GK320 free text that can spell special tokens; GK321 literals that spell one."""
    nodes = grammar_nodes(ctx.reachable_rules)
    named = _named_ids(node for _, node in nodes)
    specials = _special_texts(ctx, named)
    if not specials:
        return []
    found: list[Diagnostic] = []
    by_charset: dict[CharSet, list[tuple[int, str]]] = {}
    for rule, node in nodes:
        if isinstance(node, ast.Literal):
            for token_id, text in specials:
                if text in node.value:
                    found.append(ctx.report(
                        "GK321", Severity.WARNING,
                        f"literal in rule `{rule.name}` spells the special token {text!r} "
                        f"(id {token_id}) as text: the matcher never allows the special id here, "
                        "so a model must spell it in pieces it never saw in training",
                        node, f"name the special token itself: Token({token_id})"))
                    break
            continue
        if isinstance(node, ast.TagDispatch):
            charset = ANY_CHAR
        elif isinstance(node, ast.Repeat) and (node.max is None or node.max >= 2):
            charset = ctx.facts.single_chars(node.item)
        else:
            continue
        if charset not in by_charset:
            by_charset[charset] = [(i, t) for i, t in specials if _spells(charset, t, node)]
        leaking = by_charset[charset]
        if isinstance(node, ast.Repeat) and node.max is not None:
            leaking = [(i, t) for i, t in leaking if len(t) <= node.max]
        if leaking:
            found.append(_free_text(ctx, rule, node, leaking))
    return found


def _free_text(ctx: CheckContext, rule: ast.Rule, node: ast.Expr,
               leaking: list[tuple[int, str]]) -> Diagnostic:
    names = ", ".join(repr(text) for _, text in leaking[:_SHOWN])
    more = f" and {len(leaking) - _SHOWN} more" if len(leaking) > _SHOWN else ""
    first, _ = Counter(text[0] for _, text in leaking).most_common(1)[0]
    count = len(leaking)
    return ctx.report(
        "GK320", Severity.WARNING,
        f"free text in rule `{rule.name}` can spell {count} special token"
        f"{'' if count == 1 else 's'} of this vocabulary as ordinary text: {names}{more} "
        "(the matcher keeps the special ids themselves out)",
        node, f"exclude {first!r} from this text (e.g. [^...{_class_escape(first)}]) if a "
        "special token's text must never appear in it")


def _spells(charset: CharSet, text: str, node: ast.Expr) -> bool:
    if isinstance(node, ast.TagDispatch):
        return not any(tag in text for tag, _ in node.tags)
    return all(ord(c) in charset for c in text)


def _class_escape(char: str) -> str:
    return "\\" + char if char in "]\\^-" else char


def _named_ids(nodes: Iterable[ast.Expr]) -> set[int]:
    """Ids the grammar names with ``Token(...)`` or ``TokenTagDispatch``: allowed on purpose."""
    named: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.TokenSet) and not node.exclude:
            named.update(node.ids)
        elif isinstance(node, ast.TokenTagDispatch):
            named.update(token_id for token_id, _ in node.tags)
    return named


def _special_texts(ctx: CheckContext, named: set[int]) -> list[tuple[int, str]]:
    """(id, text) of the special tokens with text, not named by the grammar, by id."""
    vocab = ctx.vocab
    found = []
    for token_id in sorted(vocab.special_ids | ctx.stop_ids):
        data = vocab.tokens[token_id] if token_id < vocab.vocab_size else b""
        if data and token_id not in named:
            found.append((token_id, data.decode("utf-8", "replace")))
    return found
