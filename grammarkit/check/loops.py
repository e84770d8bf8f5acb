"""Unbounded loops: where a model can emit tokens forever without producing content.

A repetition without an upper bound whose body can match whitespace alone (``[ \\t\\n]*``, or
``(ws ","?)*`` whose other parts are optional), and is not free text (a body matching single
characters other than whitespace, as a string's ``char*``), lets a model emit whitespace until
``max_tokens``: a frequent cause of runaway JSON generations. Each finding suggests a bound.
For a grammar with no unbounded loop at all, the worst case of tokens a ``max_tokens`` budget
must cover is computed (every byte its own token, plus the stop token).
"""

from __future__ import annotations

import math

from grammarkit.check.context import CheckContext, grammar_nodes
from grammarkit.check.facts import WHITESPACE
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "loops"
CODES = ("GK330",)

MAX_SUGGESTED_BOUND = 32
"""Suggested bounds are at most this (8 levels of 4-space indentation)."""


def run(ctx: CheckContext) -> tuple[list[Diagnostic], float]:
    """GK330 unbounded whitespace loops, and the worst-case token count (``inf``: unbounded)."""
    facts = ctx.facts
    longest_tokens: dict[str, int] = {}
    found = []
    for rule, node in grammar_nodes(ctx.reachable_rules):
        if not isinstance(node, ast.Repeat) or node.max is not None:
            continue
        run = facts.whitespace_run(node.item)
        if run and facts.single_chars(node.item).is_subset(WHITESPACE):
            chars = [c for c in " \t\n\r" if ord(c) in run]
            key = "".join(chars)
            if key not in longest_tokens:
                longest_tokens[key] = _longest_token(ctx, chars)
            longest = longest_tokens[key]
            bound = max(1, min(longest, MAX_SUGGESTED_BOUND))
            shown = "".join(chars).encode("unicode_escape").decode()
            found.append(ctx.report(
                "GK330", Severity.WARNING,
                f"unbounded whitespace loop in rule `{rule.name}`: a model can emit "
                f"whitespace here until max_tokens (one token of this vocabulary holds up to "
                f"{longest} of these characters)",
                node, f"bound it: [{shown}]{{0,{bound}}}" if isinstance(node.item, ast.CharClass)
                else f"bound the repetition: ...{{0,{bound}}}, or make its parts required"))
    root = ctx.grammar.ast.rule_map().get(ctx.grammar.root)
    worst = facts.max_tokens(root.body) + 1 if root is not None else math.inf
    return found, worst


def _longest_token(ctx: CheckContext, chars: list[str]) -> int:
    allowed = set("".join(chars).encode())
    return max((len(t) for t in ctx.ordinary_ids if allowed.issuperset(t)), default=1)
