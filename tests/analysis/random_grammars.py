"""Random small grammars over the alphabet {a, b}, and random derivations that record rules."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from grammarkit.ebnf import ast

RULE_NAMES = ("root", "r1", "r2")
ATOMS = ('"a"', '"b"', '"ab"', '""', "()", "[a]", "[ab]", "[]", "[^a]", *RULE_NAMES)
QUANTIFIERS = ("?", "*", "+", "{2}", "{0,2}", "{1,}", "{0}")

expressions = st.recursive(
    st.sampled_from(ATOMS),
    lambda inner: st.one_of(
        st.lists(inner, min_size=2, max_size=3).map(" ".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + " | ".join(xs) + ")"),
        st.tuples(inner, st.sampled_from(QUANTIFIERS)).map(lambda t: f"({t[0]}){t[1]}"),
    ),
    max_leaves=6,
)

grammars = st.tuples(expressions, expressions, expressions).map(
    lambda bodies: "\n".join(f"{name} ::= {body}" for name, body in zip(RULE_NAMES, bodies)))
"""Grammar texts defining ``root``, ``r1`` and ``r2``; xgrammar accepts all of them."""


class Stuck(Exception):
    """The derivation hit an empty class or ran out of budget."""


class Derivation:
    """One random derivation: its text and every rule occurrence as ``(name, start, end)``."""

    def __init__(self, grammar: ast.GrammarAST, rng: random.Random, budget: int = 60):
        self.rules = grammar.rule_map()
        self.rng = rng
        self.budget = budget
        self.out: list[str] = []
        self.occurrences: list[tuple[str, int, int]] = []

    def run(self, root: str) -> str:
        self._expand(ast.RuleRef(root))
        return "".join(self.out)

    def _expand(self, expr: ast.Expr) -> None:
        self.budget -= 1
        if self.budget < 0:
            raise Stuck
        if isinstance(expr, ast.Literal):
            self.out.extend(expr.value)
        elif isinstance(expr, ast.CharClass):
            choices = [c for c in "ab" if any(lo <= ord(c) <= hi for lo, hi in expr.ranges)
                       != expr.negated]
            if not choices:
                raise Stuck
            self.out.append(self.rng.choice(choices))
        elif isinstance(expr, ast.RuleRef):
            start = len(self.out)
            self._expand(self.rules[expr.name].body)
            self.occurrences.append((expr.name, start, len(self.out)))
        elif isinstance(expr, ast.Sequence):
            for item in expr.items:
                self._expand(item)
        elif isinstance(expr, ast.Choice):
            self._expand(self.rng.choice(expr.alternatives))
        elif isinstance(expr, ast.Repeat):
            high = expr.min + 2 if expr.max is None else min(expr.max, expr.min + 2)
            for _ in range(self.rng.randint(expr.min, high)):
                self._expand(expr.item)
        else:
            raise TypeError(f"unexpected node {expr!r}")
