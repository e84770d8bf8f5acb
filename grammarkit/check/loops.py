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

from grammarkit.analysis.charset import CharSet
from grammarkit.automata import utf8
from grammarkit.check.context import CheckContext, SingleChars, expanded, grammar_nodes
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast

NAME = "loops"
CODES = ("GK330",)

WHITESPACE = " \t\n\r"
_WHITESPACE_SET = CharSet.of_string(WHITESPACE)
MAX_SUGGESTED_BOUND = 32
"""Suggested bounds are at most this (8 levels of 4-space indentation)."""


def run(ctx: CheckContext) -> tuple[list[Diagnostic], float]:
    """GK330 unbounded whitespace loops, and the worst-case token count (``inf``: unbounded)."""
    rules = ctx.grammar.ast.rule_map()
    whitespace = _Whitespace(rules)
    single = SingleChars(rules)
    found = []
    for rule, node in grammar_nodes(ctx.reachable_rules):
        if (isinstance(node, ast.Repeat) and node.max is None and whitespace.run(node.item)
                and single(node.item).is_subset(_WHITESPACE_SET)):
            chars = whitespace.chars(node.item)
            longest = _longest_token(ctx, chars)
            bound = max(1, min(longest, MAX_SUGGESTED_BOUND))
            shown = "".join(chars).encode("unicode_escape").decode()
            found.append(ctx.report(
                "GK330", Severity.WARNING,
                f"unbounded whitespace loop in rule `{rule.name}`: a model can emit "
                f"whitespace here until max_tokens (one token of this vocabulary holds up to "
                f"{longest} of these characters)",
                node, f"bound it: [{shown}]{{0,{bound}}}" if isinstance(node.item, ast.CharClass)
                else f"bound the repetition: ...{{0,{bound}}}, or make its parts required"))
    root = rules.get(ctx.grammar.root)
    worst = _MaxTokens(rules)(root.body) + 1 if root is not None else math.inf
    return found, worst


def _longest_token(ctx: CheckContext, chars: list[str]) -> int:
    allowed = set("".join(chars).encode())
    return max((len(t) for t in ctx.ordinary_ids if allowed.issuperset(t)), default=1)


class _Whitespace:
    """Whether expressions can match a non-empty run of whitespace alone (rules followed)."""

    def __init__(self, rules: dict[str, ast.Rule]):
        self.rules = rules

    def run(self, expr: ast.Expr) -> bool:
        """Matches some non-empty whitespace-only string."""
        return bool(self.chars(expr)) and self.only(expr, frozenset())

    def only(self, expr: ast.Expr, active: frozenset[str]) -> bool:
        """Matches some whitespace-only string (possibly empty)."""
        expr = expanded(expr)
        if isinstance(expr, ast.Literal):
            return all(c in WHITESPACE for c in expr.value)
        if isinstance(expr, ast.CharClass):
            return bool(self.chars(expr))
        if isinstance(expr, ast.Sequence):
            return all(self.only(item, active) for item in expr.items)
        if isinstance(expr, ast.Choice):
            return any(self.only(alt, active) for alt in expr.alternatives)
        if isinstance(expr, ast.Repeat):
            return expr.min == 0 or self.only(expr.item, active)
        if isinstance(expr, ast.RuleRef) and expr.name in self.rules and expr.name not in active:
            return self.only(self.rules[expr.name].body, active | {expr.name})
        return False

    def chars(self, expr: ast.Expr, active: frozenset[str] = frozenset()) -> list[str]:
        """The whitespace characters whitespace-only matches of ``expr`` can contain."""
        expr = expanded(expr)
        if isinstance(expr, ast.Literal):
            return sorted(set(expr.value)) if self.only(expr, active) else []
        if isinstance(expr, ast.CharClass):
            ranges = utf8.class_codepoints(expr.ranges, expr.negated)
            return [c for c in WHITESPACE if any(lo <= ord(c) <= hi for lo, hi in ranges)]
        kids: tuple[ast.Expr, ...] = ()
        if isinstance(expr, ast.Sequence):
            if not all(self.only(item, active) for item in expr.items):
                return []
            kids = expr.items
        elif isinstance(expr, (ast.Choice, ast.Repeat)):
            kids = ast.children(expr)
        elif isinstance(expr, ast.RuleRef) and expr.name in self.rules:
            if expr.name in active:
                return []
            kids = (self.rules[expr.name].body,)
            active = active | {expr.name}
        found: set[str] = set()
        for kid in kids:
            found.update(self.chars(kid, active))
        return [c for c in WHITESPACE if c in found]


class _MaxTokens:
    """The most tokens an expression can take (a byte per token; ``inf`` when unbounded)."""

    def __init__(self, rules: dict[str, ast.Rule]):
        self.rules = rules
        self.known: dict[str, float] = {}
        self.active: set[str] = set()

    def __call__(self, expr: ast.Expr) -> float:
        expr = expanded(expr)
        if isinstance(expr, ast.Literal):
            return len(utf8.encode(expr.value))
        if isinstance(expr, ast.CharClass):
            ranges = utf8.class_codepoints(expr.ranges, expr.negated)
            return len(utf8.encode(chr(ranges[-1][1]))) if ranges else 0
        if isinstance(expr, ast.Sequence):
            return sum(self(item) for item in expr.items)
        if isinstance(expr, ast.Choice):
            return max(self(alt) for alt in expr.alternatives)
        if isinstance(expr, ast.Repeat):
            item = self(expr.item)
            if item == 0 or expr.max == 0:
                return 0
            return math.inf if expr.max is None else expr.max * item
        if isinstance(expr, ast.Substring):
            return max((len(utf8.encode(s)) for s in expr.strings), default=0)
        if isinstance(expr, ast.TokenSet):
            return 1
        if isinstance(expr, ast.RuleRef):
            return self._rule(expr.name)
        return math.inf  # TagDispatch / TokenTagDispatch: free text between tags

    def _rule(self, name: str) -> float:
        if name not in self.rules or name in self.active:
            return math.inf  # undefined (not compiled) or recursive
        if name not in self.known:
            self.active.add(name)
            self.known[name] = self(self.rules[name].body)
            self.active.discard(name)
        return self.known[name]
