"""``name[max_chars=N]``: which rules have a character budget, and how large.

The budgets are enforced as xgrammar 0.2.8's parser enforces them, by deadlines on Earley
items (:mod:`grammarkit.automata.char_deadlines`); the compiler reads them here, before any
rule is compiled, so that a grammar with budgets keeps every rule's items its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from grammarkit.ebnf import ast


def char_budget(rule: ast.Rule) -> int | None:
    """The rule's ``max_chars`` value, or ``None`` if it has none."""
    for attribute in rule.attributes:
        if attribute.key == "max_chars" and isinstance(attribute.value, int):
            return attribute.value  # the parser allows only integers from 0
    return None


def budgeted_rule_names(rules: Sequence[ast.Rule]) -> dict[str, int]:
    """``{name: N}`` for every rule with ``max_chars=N``."""
    found = {}
    for rule in rules:
        budget = char_budget(rule)
        if budget is not None:
            found[rule.name] = budget
    return found
