"""Tokenization boundaries: the tokenizer's own tokenization of grammar sentences is accepted.

A model writes text as its tokenizer would (special-token text as the special id, the
tokenizer's normalization applied). For sampled sentences the canonical token ids are fed to
the matcher one by one; a refused token means the grammar forces a split the model never saw
in training (GK340), and tokens that spell other text than the sentence mean the tokenizer
rewrites it (GK341). One finding per refused token, with the first sentence that shows it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from grammarkit.check.context import CheckContext, grammar_nodes
from grammarkit.check.tokenizers import Encoder
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "boundaries"
CODES = ("GK340", "GK341")

MAX_FINDINGS = 5
MAX_REPLAYED_TOKENS = 20_000
"""Fewer sentences are replayed when they are long: about this many tokens in all."""
_SHOWN_TOKENS = 12


@dataclass(frozen=True)
class BoundaryStatistics:
    """How many sampled sentences were tokenized and replayed, and how many were refused.

    Long sentences are replayed up to about `MAX_REPLAYED_TOKENS` tokens in all."""

    sentences: int
    refused: int


def run(ctx: CheckContext) -> tuple[list[Diagnostic], BoundaryStatistics | None]:
    """Replay the canonical tokenization of each sampled sentence through the matcher."""
    encode = ctx.encoder
    if encode is None:
        ctx.notes.append(f"{NAME}: skipped, no tokenizer encoder for {ctx.vocab.source} "
                         "(install the tokenizer's package, or `tokenizers` for tokenizer.json)")
        return [], None
    sentences = _sentences(ctx, encode)
    matcher = ctx.matcher
    found: list[Diagnostic] = []
    seen: set[tuple[str, int]] = set()
    refused = 0
    for done, (sentence, ids) in enumerate(sentences):
        ctx.tick(NAME, done, len(sentences))
        matcher.reset()
        position = next((k for k, i in enumerate(ids) if not matcher.accept_token(i)), None)
        if position is None:
            continue
        refused += 1
        spelled = b"".join(ctx.vocab.tokens[i] for i in ids if 0 <= i < ctx.vocab.vocab_size)
        code = "GK341" if spelled != sentence.encode("utf-8", "surrogatepass") else "GK340"
        key = (code, ids[position])
        if key in seen or len(found) >= MAX_FINDINGS:
            continue
        seen.add(key)
        found.append(_finding(ctx, code, sentence, ids, position))
    matcher.reset()
    return found, BoundaryStatistics(len(sentences), refused)


def _sentences(ctx: CheckContext, encode: Encoder) -> list[tuple[str, list[int]]]:
    """Up to ``ctx.samples`` sampled sentences with their canonical ids, stopping once about
    `MAX_REPLAYED_TOKENS` tokens are collected."""
    from grammarkit.sample import samples

    found: list[tuple[str, list[int]]] = []
    tokens = 0
    for sentence in itertools.islice(samples(ctx.grammar, seed=ctx.seed), ctx.samples):
        ids = encode(sentence)
        found.append((sentence, ids))
        tokens += len(ids)
        if tokens >= MAX_REPLAYED_TOKENS:
            break
    return found


def _finding(ctx: CheckContext, code: str, sentence: str, ids: list[int],
             position: int) -> Diagnostic:
    vocab = ctx.vocab
    token = ids[position]
    text = vocab.tokens[token].decode("utf-8", "replace") if token < vocab.vocab_size else "?"
    kind = "special token" if token in vocab.special_ids else "token"
    shown = ids[:_SHOWN_TOKENS]
    tokens = " ".join(f"{i}:{vocab.tokens[i].decode('utf-8', 'replace')!r}"
                      for i in shown if 0 <= i < vocab.vocab_size)
    more = " ..." if len(ids) > len(shown) else ""
    if code == "GK341":
        message = (f"the tokenizer rewrites the sentence {sentence!r}: its tokens [{tokens}{more}] "
                   f"spell other text, and the matcher refuses {kind} {token} ({text!r}) at "
                   f"position {position}")
        hint = ("the model sees this text only as the tokenizer rewrites it (normalization, "
                "an added prefix space): write the grammar for the rewritten form")
    else:
        message = (f"the tokenizer's own tokenization of the sentence {sentence!r} is refused at "
                   f"position {position}: {kind} {token} ({text!r}) in [{tokens}{more}]; the "
                   "grammar forces a split the model never saw in training")
        hint = (f"name the special token with Token({token}) where the grammar means it"
                if token in vocab.special_ids else
                "allow the tokenizer's own split of this text")
    return ctx.report(code, Severity.WARNING, message, _literal_spelling(ctx, text), hint)


def _literal_spelling(ctx: CheckContext, text: str) -> ast.Literal | None:
    """The first literal of the grammar containing ``text`` (where the split is forced)."""
    for _, node in grammar_nodes(ctx.reachable_rules):
        if isinstance(node, ast.Literal) and text and text in node.value:
            return node
    return None
