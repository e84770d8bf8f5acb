"""Termination: the grammar can complete, the vocabulary can stop, and how soon.

The shortest sentence (every choice its smallest option) is spelled in the fewest tokens of the
vocabulary and replayed through the matcher: its token count plus the stop token is the
shortest completion a model can make.
"""

from __future__ import annotations

from dataclasses import dataclass

from grammarkit.automata import utf8
from grammarkit.check.context import CheckContext
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "termination"
CODES = ("GK310", "GK311")


@dataclass(frozen=True)
class ShortestCompletion:
    """The shortest sentence and the fewest tokens spelling it (the stop token not counted).

    Attributes
    ----------
    text
        The sentence.
    token_ids
        The tokens, accepted one by one by the matcher.
    """

    text: str
    token_ids: tuple[int, ...]


class _Smallest:
    """A `grammarkit.sample.Chooser` taking the smallest option, readable characters first."""

    def index(self, n: int) -> int:
        return 0

    def count(self, low: int, high: int) -> int:
        return low

    def codepoint(self, ranges: utf8.CodepointRanges) -> int:
        for lo, hi in ranges:
            if hi >= 0x21 and lo <= 0x7E:
                return max(lo, 0x21)
        return ranges[0][0]


def run(ctx: CheckContext) -> tuple[list[Diagnostic], ShortestCompletion | None]:
    """GK310 when the root cannot complete; GK311 when nothing can stop the model."""
    found: list[Diagnostic] = []
    graph = ctx.properties.graph
    root = graph.rules.get(ctx.grammar.root)
    if root is not None and not ctx.properties.productive[graph.body[root.name]]:
        found.append(ctx.report(
            "GK310", Severity.ERROR,
            f"the grammar can never complete: rule `{root.name}` has no finite derivation, so "
            "no stop token is ever allowed",
            _name_node(root),
            "give every recursive rule an alternative that ends (e.g. `| \"\"`)"))
    if not ctx.stop_ids:
        found.append(ctx.report(
            "GK311", Severity.ERROR,
            f"the vocabulary {ctx.vocab.source} has no stop token: a model under this grammar "
            "can only end at max_tokens",
            None, "name the end-of-sequence ids (`--stop-token ID`, or stop_token_ids=...)"))
    shortest = None if found or not ctx.matcher_usable else _shortest_completion(ctx)
    return found, shortest


def _name_node(rule: ast.Rule) -> ast.Expr:
    """An expression standing at the rule's name, for the diagnostic's span."""
    return ast.RuleRef(rule.name, rule.name_span or rule.span)


def _shortest_completion(ctx: CheckContext) -> ShortestCompletion | None:
    """The shortest sentence in the fewest tokens, checked against the matcher; None when the
    grammar's sentences need ``Token(...)`` elements or cannot be spelled."""
    from grammarkit.sample import Deriver

    text = Deriver(ctx.grammar, max_length=0).derive(_Smallest())
    if text is None:
        return None
    token_ids = ctx.fewest_tokens(text.encode("utf-8", "surrogatepass"))
    if token_ids is None:
        return None
    matcher = ctx.matcher
    matcher.reset()
    accepted = all(matcher.accept_token(i) for i in token_ids) and matcher.is_completed()
    matcher.reset()
    return ShortestCompletion(text, tuple(token_ids)) if accepted else None
