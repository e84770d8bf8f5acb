"""Lazy subset construction over an NFA with counted repetitions.

A *position* is ``(nfa_state, counters)``: ``counters`` holds one ``(loop, low, high,
progressed)`` frame per counted :class:`~grammarkit.automata.nfa.Loop` the state is nested in,
innermost last. A position stands for every count combination in the box ``low..high`` of its
frames: a loop whose body has several lengths (``("a" | "aa"){1000,100000}``) has after *k*
bytes made any count from *k/2* to *k*, one interval instead of *k/2* positions, so a state
stays a few positions long however far the input goes. ``progressed`` tells whether the
current iteration consumed anything (a byte, a rule call or a token); an iteration that
consumed nothing cannot loop again, it may only leave (its body is then nullable, so any
missing count can be made up by empty iterations). A DFA state is the ``frozenset`` of
positions closed under epsilon moves (keeping only positions with edges that consume
something, or that end the rule), with boxes that differ in one frame's adjacent intervals
merged (:func:`merged_boxes`); :class:`SubsetBuilder` computes its closure and its
transitions on demand, so only the states an input reaches are ever built. An NFA with
deferred parts (:attr:`~grammarkit.automata.nfa.NFA.deferred`) has them expanded as closures
reach them, so only the parts an input reaches are ever built either.
"""

from __future__ import annotations

import gc
import itertools
from collections import Counter
from collections.abc import Hashable, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, TypeVar

from grammarkit.automata.nfa import NFA, Loop, TokenEdge

Frame = tuple[Loop, int, int, bool]
"""``(loop, low, high, progressed)``: the counts ``low..high`` of one enclosing loop."""
Counters = tuple[Frame, ...]
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
        """The builder for ``nfa``: with counters, unless it has none and defers no part (a
        deferred part may hold counted repetitions)."""
        return SubsetBuilder(nfa) if nfa.counted or nfa.deferred else PlainSubsets(nfa)

    def __init__(self, nfa: NFA):
        self.nfa = nfa
        self._useful = [bool(nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s]
                             or s in nfa.finals) for s in range(nfa.num_states)]
        """Positions worth keeping in a closed set: they consume something or end the rule."""
        self._plain: dict[int, frozenset[int]] = {}  # epsilon closures of single NFA states

    def _epsilon_closure(self, state: int) -> frozenset[int]:
        """The epsilon closure of NFA ``state``, deferred parts it reaches expanded first."""
        nfa = self.nfa
        deferred = nfa.deferred
        if not deferred:
            return nfa.epsilon_closure((state,))
        epsilon = nfa.epsilon
        seen = {state}
        stack = [state]
        expanded = []
        collecting = gc.isenabled()
        gc.disable()  # many small lists, no cycles (as when rules are compiled)
        try:
            while stack:
                s = stack.pop()
                if s in deferred:
                    nfa.expand(s)
                    expanded.append(s)
                for t in epsilon[s]:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
        finally:
            if collecting:
                gc.enable()
        if expanded:
            useful = self._useful
            useful += [bool(nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s]
                            or s in nfa.finals) for s in range(len(useful), nfa.num_states)]
            for s in expanded:
                useful[s] = bool(nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s])
        return frozenset(seen)

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
                reach = self._epsilon_closure(s)
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
                    stack.append((body, (*counters, (loop, 0, 0, False))))
                if t in step:
                    loop, body, exit_ = step[t]
                    _, low, high, progressed = counters[-1]
                    outer = counters[:-1]
                    if not progressed:
                        stack.append((exit_, outer))
                        continue
                    if loop.max is None:  # counts past min behave alike: they saturate
                        low, high = min(low + 1, loop.min), min(high + 1, loop.min)
                        top = high
                    else:
                        low, high = low + 1, high + 1
                        top = min(high, loop.max - 1)
                    if low <= top:
                        stack.append((body, (*outer, (loop, low, top, False))))
                    if high >= loop.min or loop.nullable:
                        stack.append((exit_, outer))
        useful = self._useful
        return merged_boxes([p for p in seen if useful[p[0]]])

    @staticmethod
    def progressed(counters: Counters) -> Counters:
        """``counters`` after consuming something: every iteration has progressed."""
        if not counters or counters[-1][3] and all(frame[3] for frame in counters):
            return counters
        return tuple((loop, low, high, True) for loop, low, high, _ in counters)

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

    @staticmethod
    def run_frame(positions: Positions) -> Frame | None:
        """The innermost frame of the deepest counters in ``positions``, if every position
        whose counters mention its loop has it innermost with the same counts (whether the
        iteration has progressed may differ); else ``None``."""
        deepest = max((counters for _, counters in positions), key=len)
        if not deepest:
            return None
        frame = deepest[-1]
        loop, low, high, _ = frame
        for _, counters in positions:
            for i, other in enumerate(counters):
                if other[0] is loop and (other[1] != low or other[2] != high
                                         or i != len(counters) - 1):
                    return None
        return frame

    def run_limit(self, positions: Positions) -> int | None:
        """How many iterations of the :meth:`run_frame` loop run uniformly from ``positions``.

        Every count of the frame must be in a stretch where each iteration decides alike
        (below ``min - 1``, or from there below ``max - 1``); ``None`` when there is no such
        frame or fewer than 2 iterations are left.
        """
        frame = self.run_frame(positions)
        if frame is None:
            return None
        loop, low, high, _ = frame
        if high + 1 < loop.min:
            limit = loop.min - high - 1
        elif loop.max is not None and low + 1 >= loop.min and high + 1 < loop.max:
            limit = loop.max - high - 1
        else:
            return None
        return limit if limit >= 2 else None

    def shifted(self, positions: Positions, iterations: int) -> Positions:
        """``positions`` with the counts of the :meth:`run_frame` loop raised by ``iterations``."""
        frame = self.run_frame(positions)
        assert frame is not None
        loop = frame[0]
        return frozenset((s, _raised(counters, iterations))
                         if counters and counters[-1][0] is loop else (s, counters)
                         for s, counters in positions)


def _raised(counters: Counters, iterations: int) -> Counters:
    """``counters`` with the innermost counts raised by ``iterations``."""
    loop, low, high, progressed = counters[-1]
    return (*counters[:-1], (loop, low + iterations, high + iterations, progressed))


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
    """``positions`` with every count replaced by one behaving alike for ``horizon`` bytes
    (:meth:`~grammarkit.automata.nfa.Loop.clamp`, applied to each count of each interval)."""
    boxes = []
    for s, counters in positions:
        choices = [[(loop, low, high, progressed)
                    for low, high in _clamped_interval(loop, low, high, horizon)]
                   for loop, low, high, progressed in counters]
        boxes += [(s, product) for product in itertools.product(*choices)]
    return merged_boxes(boxes)


def _clamped_interval(loop: Loop, low: int, high: int, horizon: int) -> list[tuple[int, int]]:
    """The counts ``loop.clamp`` maps ``low..high`` to, as intervals (it is monotone)."""
    if not loop.solid:
        return [(low, high)]
    # pieces of low..high on which clamp is constant or the identity
    cuts = [loop.min - horizon - 1, loop.min]
    if loop.max is not None:
        cuts.append(loop.max - horizon - 1)
    pieces: list[tuple[int, int]] = []
    start = low
    for cut in sorted(cuts):
        if start <= cut - 1 and cut <= high:
            pieces.append((start, cut - 1))
            start = cut
    pieces.append((start, high))
    result: list[tuple[int, int]] = []
    for a, b in pieces:
        ca, cb = loop.clamp(a, horizon), loop.clamp(b, horizon)
        if result and result[-1][1] + 1 >= ca:
            result[-1] = (result[-1][0], max(result[-1][1], cb))
        else:
            result.append((ca, cb))
    return result


def merged_boxes(boxes: Iterable[Position]) -> Positions:
    """``boxes`` as a closed set of positions with the same future, in fewer, smaller boxes.

    Per frame level (innermost first, repeated until nothing changes), boxes that differ
    only in that frame's interval are taken together: touching intervals merge, and counts
    another count of the group *dominates* are dropped (:func:`_undominated`). A position
    whose every continuation another position also has adds nothing to the set's future.
    """
    result = boxes if isinstance(boxes, set) else set(boxes)
    if len({s for s, _ in result}) == len(result) and all(
            low == high or not _reducible(loop, (low, high))
            for _, counters in result for loop, low, high, _ in counters):
        return frozenset(result)  # no two boxes to take together, none to shrink
    depth = max((len(counters) for _, counters in result), default=0)
    level = depth - 1
    unchanged = 0  # levels in a row where nothing changed
    while depth and unchanged < depth:
        groups: dict[tuple[Any, ...], list[tuple[int, int]]] = {}
        for s, counters in result:
            if len(counters) > level:
                loop, low, high, progressed = counters[level]
                key = (s, counters[:level], loop, progressed, counters[level + 1:])
                found = groups.get(key)
                if found is None:
                    groups[key] = [(low, high)]
                else:
                    found.append((low, high))
        unchanged += 1
        if any(len(intervals) > 1 or _reducible(key[2], intervals[0])
               for key, intervals in groups.items()):
            reduced: set[Position] = {p for p in result if len(p[1]) <= level}
            for (s, before, loop, progressed, after), intervals in groups.items():
                for low, high in _undominated(loop, _merged_intervals(intervals)):
                    reduced.add((s, (*before, (loop, low, high, progressed), *after)))
            if reduced != result:
                unchanged = 0
                result = reduced
        level = (level - 1) % depth
    return frozenset(result)


def _reducible(loop: Loop, interval: tuple[int, int]) -> bool:
    """Whether :func:`_undominated` shrinks the single ``interval``."""
    low, high = interval
    return high > (low if loop.nullable else max(low, loop.min))


def _undominated(loop: Loop, intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``intervals`` (sorted, disjoint) without the counts a smaller one dominates.

    Where a loop may be left whatever the count (its body is nullable, or the count has
    reached ``min``), a smaller count can do all a larger one can (the larger reaches ``max``
    first), the rest of the position being equal: only the smallest such count is kept.
    """
    floor = 0 if loop.nullable else loop.min  # counts from here on are dominated by smaller
    result = []
    for low, high in intervals:
        if high >= floor:
            result.append((low, max(low, floor)))
            break
        result.append((low, high))
    return result


def _merged_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted disjoint intervals covering ``intervals``, touching ones joined."""
    intervals.sort()
    result = [intervals[0]]
    for low, high in intervals[1:]:
        last_low, last_high = result[-1]
        if low <= last_high + 1:
            if high > last_high:
                result[-1] = (last_low, high)
        else:
            result.append((low, high))
    return result


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
