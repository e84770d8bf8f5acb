"""``name[max_chars=N]``: a rule's character budget, as xgrammar 0.2.8 enforces it.

xgrammar counts the Unicode code points a rule occurrence has matched (its sub-rules' text
included); once there are ``N`` or more, the occurrence must end at the first point where it
can: every continuation of it past that point is dropped. As a language, for a rule ``v``:

    L'(v) = { s in L(v) : no prefix p of s with N <= |p| < |s| is in L(v) }

(``|p|`` in code points). :class:`CharBudgetSubsets` builds that language lazily, state by
state, as a product of the rule's own subset construction with a code-point counter capped at
``N``: a state that is final with a count of ``N`` or more has no edges for a byte that starts
a code point. Nothing is unrolled (``max_chars=100000`` costs the states inputs visit), and
counts far below ``N`` are clamped for the decoder (:meth:`CharBudgetSubsets.clamped`), so the
middle of a long budgeted text is one state to it.

The product needs the rule to be regular: the compiler flattens it, expanding every rule it
references. xgrammar's enforcement is a runtime rule of its parser (its expired derivations are
dropped while *any* other derivation is alive, and kept while none is), which equals
``L'(v)`` when the budgeted occurrence is the only derivation of the input at the point where
its budget runs out; :func:`unsupported_budget` names the rules where grammarkit cannot
reproduce it (see ``docs/diagnostics.md``, GK116).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from grammarkit.automata.lazy_dfa import Positions, SubsetBuilder, clamped
from grammarkit.automata.nfa import TokenEdge
from grammarkit.ebnf import ast

Content = tuple[Positions, int]
"""A state of a budgeted rule: the positions of its own subset construction, and how many code
points it has matched (capped at the budget)."""

_CONTINUATION = (0x80, 0xBF)
"""Bytes that continue a UTF-8 character (every other byte starts a code point)."""


def char_budget(rule: ast.Rule) -> int | None:
    """The rule's ``max_chars`` value, or ``None`` if it has none."""
    for attribute in rule.attributes:
        if attribute.key == "max_chars":
            return int(attribute.value)  # type: ignore[arg-type]  # the parser checked it
    return None


class CharBudgetSubsets:
    """Lazy states of a budgeted rule: ``inner``'s position sets times a code-point count.

    Parameters
    ----------
    inner
        The subset construction of the rule's flattened automaton (no rule calls).
    budget
        ``N`` of ``max_chars=N``.
    """

    __slots__ = ("budget", "inner")

    counted = True
    """States carry a count, so :meth:`clamped` gives canonical states to the decoder."""

    def __init__(self, inner: SubsetBuilder, budget: int):
        self.inner = inner
        self.budget = budget

    def start(self) -> Content:
        """The state where the rule begins: nothing matched yet."""
        return (self.inner.start(), 0)

    def is_final(self, content: Content) -> bool:
        """Whether the rule may end here."""
        return self.inner.is_final(content[0])

    def byte_moves(self, content: Content) -> list[tuple[int, int, Content]]:
        """Byte ranges ``(lo, hi, target)``, disjoint and sorted by ``lo``."""
        positions, count = content
        ended = count >= self.budget and self.inner.is_final(positions)
        moves = []
        for lo, hi, targets in self.inner.byte_moves(positions):
            for a, b, starts in _split_at_code_point_starts(lo, hi):
                if starts and ended:
                    continue  # the budget is spent and the rule can end: it must
                moves.append((a, b, (targets, min(count + starts, self.budget))))
        return moves

    def call_moves(self, content: Content) -> list[tuple[int, Content]]:
        """None: a budgeted rule is flattened, it calls no rule."""
        return []

    def token_moves(self, content: Content) -> list[tuple[TokenEdge, Content]]:
        """None: a budgeted rule matching vocabulary tokens is refused (GK116)."""
        return []

    def clamped(self, content: Content, horizon: int) -> Content:
        """A state accepting the same byte strings as ``content`` up to ``horizon`` bytes.

        Within ``horizon`` bytes the count grows by ``horizon`` at most, so every count below
        ``N - horizon`` behaves like ``N - horizon - 1``.
        """
        positions, count = content
        if self.inner.counted:
            positions = clamped(positions, horizon)
        return (positions, max(count, self.budget - horizon - 1))

    @property
    def nfa(self) -> Any:
        """The flattened automaton of the rule."""
        return self.inner.nfa


def _split_at_code_point_starts(lo: int, hi: int) -> Iterable[tuple[int, int, int]]:
    """``lo..hi`` cut where bytes change between starting and continuing a code point:
    ``(a, b, 1)`` for starting bytes, ``(a, b, 0)`` for continuation bytes."""
    c_lo, c_hi = _CONTINUATION
    if lo < c_lo:
        yield (lo, min(hi, c_lo - 1), 1)
    if hi >= c_lo and lo <= c_hi:
        yield (max(lo, c_lo), min(hi, c_hi), 0)
    if hi > c_hi:
        yield (max(lo, c_hi + 1), hi, 1)


def budgeted_rule_names(rules: Sequence[ast.Rule]) -> dict[str, int]:
    """``{name: N}`` for every rule with ``max_chars=N``."""
    found = {}
    for rule in rules:
        budget = char_budget(rule)
        if budget is not None:
            found[rule.name] = budget
    return found
