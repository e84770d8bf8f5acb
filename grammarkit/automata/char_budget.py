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
references, and refuses (GK116) a budgeted rule that is recursive, uses another budgeted rule,
is used by a ``lazy`` rule or matches vocabulary tokens. xgrammar's enforcement is a runtime
rule of its whole parser (before a character, derivations that spent their budget are dropped
while another one is alive or the input could end, and all kept otherwise), which equals
``L'(v)`` when the budgeted occurrence is the only live derivation where its budget runs out;
``docs/diagnostics.md`` (GK116) lists where they differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from grammarkit.automata.lazy_dfa import Positions, SubsetBuilder, clamped
from grammarkit.ebnf import ast

Content = tuple[Any, ...]
"""A state of a budgeted rule: ``(positions, count)``, the positions of its own subset
construction and how many code points it has matched (capped at the budget)."""

_CONTINUATION = (0x80, 0xBF)
"""Bytes that continue a UTF-8 character (every other byte starts a code point)."""


def char_budget(rule: ast.Rule) -> int | None:
    """The rule's ``max_chars`` value, or ``None`` if it has none."""
    for attribute in rule.attributes:
        if attribute.key == "max_chars" and isinstance(attribute.value, int):
            return attribute.value  # the parser allows only integers from 0
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

    __slots__ = ("_moves", "budget", "inner")

    def __init__(self, inner: SubsetBuilder, budget: int):
        self.inner = inner
        self.budget = budget
        self._moves: dict[Positions, list[tuple[int, int, Positions, int]]] = {}

    def start(self) -> Content:
        """The state where the rule begins: nothing matched yet."""
        return (self.inner.start(), 0)

    def is_final(self, content: Content) -> bool:
        """Whether the rule may end here."""
        return self.inner.is_final(content[0])

    def byte_moves(self, content: Content) -> list[tuple[int, int, Content]]:
        """Byte ranges ``(lo, hi, target)``, disjoint and sorted by ``lo``.

        There are no call or token moves: a budgeted rule is flattened (it calls no rule) and
        one matching vocabulary tokens is refused (GK116).
        """
        positions, count = content
        ended = count >= self.budget and self.inner.is_final(positions)
        budget = self.budget
        return [(lo, hi, (targets, min(count + starts, budget)))
                for lo, hi, targets, starts in self._inner_moves(positions)
                if not (starts and ended)]  # a spent budget ends the rule where it can end

    def _inner_moves(self, positions: Positions) -> list[tuple[int, int, Positions, int]]:
        """The inner automaton's byte moves, split where bytes start code points (``1``)."""
        found = self._moves.get(positions)
        if found is None:
            found = self._moves[positions] = [
                (a, b, targets, starts) for lo, hi, targets in self.inner.byte_moves(positions)
                for a, b, starts in _split_at_code_point_starts(lo, hi)]
        return found

    def clamped(self, content: Content, horizon: int) -> Content:
        """A state accepting the same byte strings as ``content`` up to ``horizon`` bytes.

        Within ``horizon`` bytes the count grows by ``horizon`` at most, so every count below
        ``N - horizon`` behaves like ``N - horizon - 1``.
        """
        positions, count = content
        if self.inner.counted:
            positions = clamped(positions, horizon)
        return (positions, max(count, self.budget - horizon - 1))

    def run_limit(self, content: Content) -> int | None:
        """How many code points from ``content`` behave alike (the count stays below ``N``).

        ``None`` when the rule has counted repetitions of its own or fewer than 2 are left.
        """
        limit = self.budget - 1 - content[1]
        return limit if limit >= 2 and not self.inner.counted else None

    def shifted(self, content: Content, iterations: int) -> Content:
        """``content`` with ``iterations`` more code points counted."""
        return (content[0], min(content[1] + iterations, self.budget))


def size_of(content: Any) -> int:
    """How many positions a budgeted rule's state (a :data:`Content`) holds, for the memory
    ceiling."""
    return len(content[0])


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
