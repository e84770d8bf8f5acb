"""Lazy subset construction whose position sets are intervals of ranked NFA states.

A long sequence of optional items (``"a"? "a"? ...``, ``"x"* "y"* "z"* ...``, the regex
``a?{5000}a{5000}`` written out) has DFA states holding a whole suffix of the sequence: every
state is new and as large as the rule, so enumerating them (as
:class:`~grammarkit.automata.lazy_dfa.PlainSubsets` does) costs the rule's length per byte,
and their sum exhausts memory. Here the NFA states worth keeping (those consuming something or
ending the rule) get *ranks*, grouped by what they consume and in construction order inside a
group, so such a suffix is a handful of rank intervals. A set is a flat tuple
``(lo0, hi0, lo1, hi1, ...)`` of disjoint inclusive intervals in ascending order.

Transitions of a set are unions of the transitions of aligned blocks of ranks (a segment tree
over the ranks, nodes built on first use and memoized), and epsilon closures of single states
are memoized per strongly connected component, so one step costs a few blocks per interval
instead of one visit per position.

The memoized tables are bounded (:data:`TABLE_BUDGET` ints per NFA state); a rule whose sets
do not compress (they stay fragmented) exceeds it and :class:`Fragmented` is raised, after
which the caller continues with plain sets (:meth:`IntervalSubsets.expand` converts).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from grammarkit.automata.lazy_dfa import split_ranges
from grammarkit.automata.nfa import NFA, TokenEdge

Intervals = tuple[int, ...]
"""Disjoint inclusive rank intervals, flattened: ``(lo0, hi0, lo1, hi1, ...)``, ascending."""

Moves = tuple[tuple[tuple[int, int, Intervals], ...], tuple[tuple[int, Intervals], ...],
              tuple[tuple[TokenEdge, Intervals], ...]]
"""Byte moves ``(lo, hi, target)`` (disjoint, by ``lo``), call moves by rule, token moves."""

TABLE_BUDGET = 64
"""Memoized interval ints allowed per NFA state (plus :data:`_TABLE_BASE`) before giving up."""

_TABLE_BASE = 200_000


class Fragmented(Exception):
    """The rule's position sets do not compress into few intervals (memo budget exceeded)."""


def union(parts: Sequence[Intervals]) -> Intervals:
    """The union of interval sets."""
    if len(parts) == 1:
        return parts[0]
    pairs = sorted((part[i], part[i + 1]) for part in parts for i in range(0, len(part), 2))
    out: list[int] = []
    for lo, hi in pairs:
        if out and lo <= out[-1] + 1:
            out[-1] = max(out[-1], hi)
        else:
            out += (lo, hi)
    return tuple(out)


class IntervalSubsets:
    """Closures and transitions of interval-compressed position sets of a counter-free NFA."""

    counted = False

    def __init__(self, nfa: NFA):
        self.nfa = nfa
        n = nfa.num_states
        useful = [s for s in range(n) if nfa.byte_edges[s] or nfa.call_edges[s]
                  or nfa.token_edges[s] or s in nfa.finals]
        useful.sort(key=lambda s: (_signature(nfa, s), s))
        self._states = useful
        """The NFA state of each rank."""
        self._rank = [-1] * n
        for r, s in enumerate(useful):
            self._rank[s] = r
        self._final_ranks = sorted(self._rank[s] for s in nfa.finals)
        self._closures: list[Intervals | None] = [None] * n
        self._nodes: dict[tuple[int, int], Moves] = {}
        self._budget = _TABLE_BASE + TABLE_BUDGET * n

    # -- the builder interface of CompiledGrammar ----------------------------------------------
    def start(self) -> Intervals:
        """The closed set where the rule begins."""
        return self._closure(self.nfa.start)

    def is_final(self, positions: Intervals) -> bool:
        """Whether the rule may end here."""
        finals = self._final_ranks
        for i in range(0, len(positions), 2):
            k = bisect.bisect_left(finals, positions[i])
            if k < len(finals) and finals[k] <= positions[i + 1]:
                return True
        return False

    def moves(self, positions: Intervals) -> Moves:
        """Byte moves ``(lo, hi, target)`` (disjoint, sorted by ``lo``), call moves per rule
        (ascending) and token moves per token set, of the set ``positions``."""
        parts: list[Moves] = []
        node = self._node
        for i in range(0, len(positions), 2):
            lo, hi = positions[i], positions[i + 1] + 1
            while lo < hi:  # aligned blocks covering lo..hi-1
                level = (lo & -lo).bit_length() - 1 if lo else (hi - lo).bit_length() - 1
                while lo + (1 << level) > hi:
                    level -= 1
                parts.append(node(level, lo >> level))
                lo += 1 << level
        return self._combine(parts)

    def compress(self, states: frozenset[int]) -> Intervals:
        """The intervals of a closed set of NFA states (from plain sets)."""
        rank = self._rank
        return union([(r, r) for r in sorted(rank[s] for s in states)] or [()])

    def expand(self, positions: Intervals) -> frozenset[int]:
        """The NFA states of ``positions`` (to continue with plain sets)."""
        states = self._states
        return frozenset(states[r] for i in range(0, len(positions), 2)
                         for r in range(positions[i], positions[i + 1] + 1))

    # -- transitions -----------------------------------------------------------------------------
    def _node(self, level: int, index: int) -> Moves:
        """The moves of ranks ``index << level .. (index + 1 << level) - 1``."""
        key = (level, index)
        found = self._nodes.get(key)
        if found is None:
            if level == 0:
                found = self._leaf(self._states[index])
            else:
                found = self._combine([self._node(level - 1, 2 * index),
                                       self._node(level - 1, 2 * index + 1)])
            self._spend(sum(len(t) for _, _, t in found[0]) + sum(len(t) for _, t in found[1]))
            self._nodes[key] = found
        return found

    def _leaf(self, state: int) -> Moves:
        nfa = self.nfa
        closure = self._closure
        return self._combine([(
            tuple((lo, hi, closure(t)) for lo, hi, t in nfa.byte_edges[state]),
            tuple((r, closure(t)) for r, t in nfa.call_edges[state]),
            tuple((k, closure(t)) for k, t in nfa.token_edges[state]))], always=True)

    @staticmethod
    def _combine(parts: list[Moves], always: bool = False) -> Moves:
        if len(parts) == 1 and not always:
            return parts[0]
        first = parts[0]
        if not always and all(not p[1] and not p[2] and len(p[0]) == len(first[0]) and all(
                a[0] == b[0] and a[1] == b[1] for a, b in zip(p[0], first[0], strict=True))
                for p in parts):  # the same byte ranges everywhere (a long uniform sequence)
            return (tuple((lo, hi, union([p[0][k][2] for p in parts]))
                          for k, (lo, hi, _) in enumerate(first[0])), (), ())
        targets: list[Intervals] = []
        edges = []
        calls: dict[int, list[Intervals]] = {}
        tokens: dict[TokenEdge, list[Intervals]] = {}
        for byte_moves, call_moves, token_moves in parts:
            for lo, hi, t in byte_moves:
                edges.append((lo, hi, len(targets)))
                targets.append(t)
            for rule, t in call_moves:
                calls.setdefault(rule, []).append(t)
            for token, t in token_moves:
                tokens.setdefault(token, []).append(t)
        return (tuple((lo, hi, union([targets[k] for k in sorted(ids)]))
                      for lo, hi, ids in split_ranges(edges)),
                tuple((rule, union(ts)) for rule, ts in sorted(calls.items())),
                tuple((token, union(ts)) for token, ts in tokens.items()))

    # -- closures ------------------------------------------------------------------------------
    def _closure(self, state: int) -> Intervals:
        """The ranks epsilon-reachable from ``state`` (Tarjan's SCCs, memoized per state)."""
        closures = self._closures
        found = closures[state]
        if found is not None:
            return found
        epsilon, rank = self.nfa.epsilon, self._rank
        index = {state: 0}
        low = {state: 0}
        path = [state]
        on_path = {state}
        work = [(state, iter(epsilon[state]))]
        while work:
            v, successors = work[-1]
            for w in successors:
                if closures[w] is not None:
                    continue
                if w not in index:
                    index[w] = low[w] = len(index)
                    path.append(w)
                    on_path.add(w)
                    work.append((w, iter(epsilon[w])))
                    break
                if w in on_path and index[w] < low[v]:
                    low[v] = index[w]
            else:
                work.pop()
                if work and low[v] < low[work[-1][0]]:
                    low[work[-1][0]] = low[v]
                if low[v] == index[v]:
                    members = []
                    while True:
                        w = path.pop()
                        on_path.discard(w)
                        members.append(w)
                        if w == v:
                            break
                    parts: list[Intervals] = [(rank[w], rank[w]) for w in members
                                              if rank[w] >= 0]
                    parts += [found for w in members for t in epsilon[w]
                              if (found := closures[t]) is not None]
                    result = union(parts) if parts else ()
                    self._spend(len(result) + len(members))
                    for w in members:
                        closures[w] = result
        found = closures[state]
        assert found is not None
        return found

    def _spend(self, ints: int) -> None:
        self._budget -= ints
        if self._budget < 0:
            raise Fragmented

    def seeds_closure(self, seeds: Iterable[int]) -> Intervals:
        """The closed set of NFA states ``seeds``."""
        return union([self._closure(s) for s in seeds])


def _signature(nfa: NFA, state: int) -> tuple[object, ...]:
    """What ``state`` consumes: states alike get neighbouring ranks."""
    return (tuple((lo, hi) for lo, hi, _ in nfa.byte_edges[state]),
            tuple(r for r, _ in nfa.call_edges[state]),
            tuple(str(k) for k, _ in nfa.token_edges[state]), state in nfa.finals)
