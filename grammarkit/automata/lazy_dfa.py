"""Lazy subset construction over an NFA with counted repetitions.

A *position* is ``(nfa_state, counters)``: ``counters`` holds one ``(loop, count, progressed)``
frame per counted :class:`~grammarkit.automata.nfa.Loop` the state is nested in, innermost
last. ``progressed`` tells whether the current iteration consumed anything (a byte, a rule call
or a token); an iteration that consumed nothing cannot loop again, it may only leave (its body
is then nullable, so any missing count can be made up by empty iterations). A DFA state is the
``frozenset`` of positions closed under epsilon moves (keeping only positions with edges that
consume something, or that end the rule); :class:`SubsetBuilder` computes its closure and its
transitions on demand, so only the states an input reaches are ever built.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from grammarkit.automata.nfa import NFA, Loop, TokenEdge

Counters = tuple[tuple[Loop, int, bool], ...]
Position = tuple[int, Counters]
Positions = frozenset[Any]
"""A closed set of :data:`Position`, or of bare NFA states for an NFA without counters."""
T = TypeVar("T", bound=Hashable)

_CACHED_CLOSURE = 64
"""Epsilon closures of single NFA states are memoized up to this size (bounding memory)."""


class SubsetBuilder:
    """Closures and transitions of position sets of one rule's NFA.

    An NFA without counted loops uses bare NFA states as positions (the counters would always
    be empty): :meth:`for_nfa` picks the fitting builder.
    """

    __slots__ = ("_plain", "_useful", "nfa")
    counted = True

    @staticmethod
    def for_nfa(nfa: NFA) -> SubsetBuilder:
        return SubsetBuilder(nfa) if nfa.counted else PlainSubsets(nfa)

    def __init__(self, nfa: NFA):
        self.nfa = nfa
        self._useful = [bool(nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s]
                             or s in nfa.finals) for s in range(nfa.num_states)]
        """Positions worth keeping in a closed set: they consume something or end the rule."""
        self._plain: dict[int, frozenset[int]] = {}  # epsilon closures of single NFA states

    def start_position(self) -> Any:
        """The position where the rule begins."""
        return (self.nfa.start, ())

    def start(self) -> Positions:
        """The closed position set where the rule begins."""
        return self.closure([self.start_position()])

    def is_final(self, positions: Positions) -> bool:
        """Whether the rule may end here."""
        finals = self.nfa.finals
        return any(s in finals and not counters for s, counters in positions)

    def closure(self, seeds: Iterable[Any], nullable_calls: AbstractSet[int] = frozenset()
                ) -> Positions:
        """``seeds`` and every position reached from them by epsilon moves.

        Calls of rules in ``nullable_calls`` are also stepped over (consuming nothing), which
        decides nullability of rules.
        """
        nfa = self.nfa
        push, step = nfa.push, nfa.step
        plain = self._plain
        seen: set[Position] = set()
        stack = list(seeds)
        while stack:
            s, counters = stack.pop()
            if (s, counters) in seen:
                continue
            reach = plain.get(s)
            if reach is None:
                reach = nfa.epsilon_closure((s,))
                if len(reach) <= _CACHED_CLOSURE:
                    plain[s] = reach
            for t in reach:
                position = (t, counters)
                if position in seen:
                    continue
                seen.add(position)
                if nullable_calls:
                    stack.extend((u, counters) for r, u in nfa.call_edges[t]
                                 if r in nullable_calls)
                if t in push:
                    loop, body = push[t]
                    stack.append((body, (*counters, (loop, 0, False))))
                if t in step:
                    loop, body, exit_ = step[t]
                    _, count, progressed = counters[-1]
                    outer = counters[:-1]
                    if not progressed:
                        stack.append((exit_, outer))
                        continue
                    count = count + 1 if loop.max is not None else min(count + 1, loop.min)
                    if loop.max is None or count < loop.max:
                        stack.append((body, (*outer, (loop, count, False))))
                    if count >= loop.min or loop.nullable:
                        stack.append((exit_, outer))
        useful = self._useful
        return frozenset(p for p in seen if useful[p[0]])

    @staticmethod
    def progressed(counters: Counters) -> Counters:
        """``counters`` after consuming something: every iteration has progressed."""
        if not counters or counters[-1][2] and all(p for _, _, p in counters):
            return counters
        return tuple((loop, count, True) for loop, count, _ in counters)

    def byte_moves(self, positions: Positions) -> list[tuple[int, int, Positions]]:
        """Byte ranges ``(lo, hi, target positions)``, disjoint and sorted by ``lo``."""
        byte_edges = self.nfa.byte_edges
        edges = [(lo, hi, (t, self.progressed(counters)))
                 for s, counters in positions for lo, hi, t in byte_edges[s]]
        return [(lo, hi, self.closure(targets)) for lo, hi, targets in split_ranges(edges)]

    def call_moves(self, positions: Positions) -> list[tuple[int, Positions]]:
        """Per called rule (ascending), the positions after it completes."""
        calls: dict[int, set[Position]] = {}
        for s, counters in positions:
            for rule, t in self.nfa.call_edges[s]:
                calls.setdefault(rule, set()).add((t, self.progressed(counters)))
        return [(rule, self.closure(targets)) for rule, targets in sorted(calls.items())]

    def token_moves(self, positions: Positions) -> list[tuple[TokenEdge, Positions]]:
        """Per token set, the positions after one token of it."""
        tokens: dict[TokenEdge, set[Position]] = {}
        for s, counters in positions:
            for token, t in self.nfa.token_edges[s]:
                tokens.setdefault(token, set()).add((t, self.progressed(counters)))
        return [(token, self.closure(targets)) for token, targets in tokens.items()]


class PlainSubsets(SubsetBuilder):
    """:class:`SubsetBuilder` for an NFA without counters: positions are NFA states."""

    __slots__ = ()
    counted = False

    def start_position(self) -> Any:
        return self.nfa.start

    def is_final(self, positions: Positions) -> bool:
        return not self.nfa.finals.isdisjoint(positions)

    def closure(self, seeds: Iterable[Any], nullable_calls: AbstractSet[int] = frozenset()
                ) -> Positions:
        nfa = self.nfa
        epsilon, call_edges = nfa.epsilon, nfa.call_edges
        seen: set[int] = set()
        stack: list[int] = []
        for s in seeds:
            if s not in seen:
                seen.add(s)
                stack.append(s)
        while stack:
            s = stack.pop()
            targets = epsilon[s]
            if nullable_calls:
                targets = targets + [t for r, t in call_edges[s] if r in nullable_calls]
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        useful = self._useful
        return frozenset(s for s in seen if useful[s])

    def byte_moves(self, positions: Positions) -> list[tuple[int, int, Positions]]:
        byte_edges = self.nfa.byte_edges
        edges = [e for s in positions for e in byte_edges[s]]
        return [(lo, hi, self.closure(targets)) for lo, hi, targets in split_ranges(edges)]

    def call_moves(self, positions: Positions) -> list[tuple[int, Positions]]:
        calls: dict[int, set[int]] = {}
        call_edges = self.nfa.call_edges
        for s in positions:
            for rule, t in call_edges[s]:
                calls.setdefault(rule, set()).add(t)
        return [(rule, self.closure(targets)) for rule, targets in sorted(calls.items())]

    def token_moves(self, positions: Positions) -> list[tuple[TokenEdge, Positions]]:
        tokens: dict[TokenEdge, set[int]] = {}
        token_edges = self.nfa.token_edges
        for s in positions:
            for token, t in token_edges[s]:
                tokens.setdefault(token, set()).add(t)
        return [(token, self.closure(targets)) for token, targets in tokens.items()]


def clamped(positions: Positions, horizon: int) -> Positions:
    """``positions`` with every count replaced by one behaving alike for ``horizon`` bytes."""
    return frozenset((s, tuple((loop, loop.clamp(count, horizon), progressed)
                               for loop, count, progressed in counters))
                     for s, counters in positions)


def split_ranges(edges: list[tuple[int, int, T]]) -> list[tuple[int, int, frozenset[T]]]:
    """Partition the bytes covered by ``edges`` into ranges with the same set of targets."""
    if not edges:
        return []
    if all(lo == hi for lo, hi, _ in edges):  # single bytes (literals, tries): group by byte
        by_byte: dict[int, list[T]] = {}
        for lo, _, t in edges:
            found = by_byte.get(lo)
            if found is None:
                by_byte[lo] = [t]
            else:
                found.append(t)
        return [(b, b, frozenset(ts)) for b, ts in sorted(by_byte.items())]
    points = sorted({lo for lo, _, _ in edges} | {hi + 1 for _, hi, _ in edges})
    starts: dict[int, list[T]] = {}
    stops: dict[int, list[T]] = {}
    for lo, hi, t in edges:
        starts.setdefault(lo, []).append(t)
        stops.setdefault(hi + 1, []).append(t)
    active: Counter[T] = Counter()
    result = []
    for p, q in itertools.pairwise(points):
        for t in stops.get(p, ()):
            active[t] -= 1
            if not active[t]:
                del active[t]
        for t in starts.get(p, ()):
            active[t] += 1
        if active:
            result.append((p, q - 1, frozenset(active)))
    return result
