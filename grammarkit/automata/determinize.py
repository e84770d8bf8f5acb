"""NFA to DFA at once (subset construction over byte ranges and call/token symbols), minimization.

A rule's calls and tokens are symbols like bytes: the DFA has at most one edge per byte, per
called rule and per token set from each state. This eager construction serves small rules
without counted repetitions; when it would grow past a limit (``(a|b)*a(a|b){20}`` explodes)
the rule is determinized lazily instead (:mod:`grammarkit.automata.lazy_dfa`).

The result is an :class:`Automaton` with local state numbers; unreachable states and states
that can never reach a final state are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from grammarkit.automata.lazy_dfa import split_ranges
from grammarkit.automata.nfa import NFA, TokenEdge

ByteEdges = tuple[tuple[int, int, int], ...]
CallEdges = tuple[tuple[int, int], ...]
TokenEdges = tuple[tuple[TokenEdge, int], ...]


@dataclass
class Automaton:
    """One rule's automaton, epsilon-free, with local state numbers ``0..n-1``.

    ``byte_edges[s]`` are ``(lo, hi, target)`` sorted by ``lo``; in a deterministic automaton
    they do not overlap and each ``call_edges[s]`` names a rule at most once.
    """

    start: int
    finals: frozenset[int]
    byte_edges: list[ByteEdges]
    call_edges: list[CallEdges]
    token_edges: list[TokenEdges]
    deterministic: bool

    @property
    def num_states(self) -> int:
        return len(self.byte_edges)

    def to_nfa(self, nfa: NFA) -> tuple[int, set[int]]:
        """Copy into ``nfa``; return the copy's start state and final states."""
        shift = nfa.num_states
        for s in range(self.num_states):
            state = nfa.add_state()
            for lo, hi, t in self.byte_edges[s]:
                nfa.add_bytes(state, lo, hi, t + shift)
            for rule, t in self.call_edges[s]:
                nfa.add_call(state, rule, t + shift)
            for token, t in self.token_edges[s]:
                nfa.add_token(state, token, t + shift)
        return self.start + shift, {f + shift for f in self.finals}


def determinize(nfa: NFA, limit: int, max_work: int | None = None) -> Automaton | None:
    """The DFA of ``nfa``, or ``None`` if it needs more than ``limit`` states.

    Also ``None`` when the subsets to examine hold more than ``max_work`` NFA states in all
    (default: proportional to the NFA), which bounds the time deeply nested choices take.
    """
    found = _subset_automaton(nfa, limit, max_work)
    return None if found is None else trim(found[0])


def minimal_dfa(nfa: NFA, limit: int) -> tuple[Automaton, dict[frozenset[int], int]] | None:
    """The minimal DFA of ``nfa`` (as :func:`determinize` then :func:`minimize`), and the
    state standing for each position set a lazy construction of ``nfa`` reaches, or ``None``
    past ``limit`` states.

    The position sets are those of :class:`~grammarkit.automata.lazy_dfa.PlainSubsets`: the
    NFA states of a subset that consume something or are final. A set whose states can never
    reach a final state has no entry (its DFA state was trimmed).
    """
    found = _subset_automaton(nfa, limit, None)
    if found is None:
        return None
    dfa, sets = found
    alive = _alive_numbering(dfa)
    trimmed = _renumbered(dfa, alive)
    block, minimal = _minimized(trimmed)
    useful = [bool(nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s]
                   or s in nfa.finals) for s in range(nfa.num_states)]
    states = {frozenset(s for s in subset if useful[s]): block[alive[k]]
              for k, subset in enumerate(sets) if k in alive}
    return minimal, states


def _subset_automaton(nfa: NFA, limit: int, max_work: int | None
                      ) -> tuple[Automaton, list[frozenset[int]]] | None:
    """The subset construction of ``nfa`` before trimming, and each state's NFA states."""
    if max_work is None:
        max_work = 100_000 + 10 * nfa.num_states
    work = 0
    closure = _ClosureCache(nfa)
    start = closure.of(frozenset((nfa.start,)))
    index = {start: 0}
    sets = [start]
    byte_edges: list[ByteEdges] = []
    call_edges: list[CallEdges] = []
    token_edges: list[TokenEdges] = []

    def intern(states: frozenset[int]) -> int:
        found = index.get(states)
        if found is None:
            found = index[states] = len(sets)
            sets.append(states)
        return found

    k = 0
    while k < len(sets):
        current = sets[k]
        work += len(current)
        if len(sets) > limit or work + closure.work > max_work:
            return None
        ranges: list[tuple[int, int, int]] = []
        for lo, hi, targets in split_ranges([e for s in current for e in nfa.byte_edges[s]]):
            t = intern(closure.of(targets))
            if ranges and ranges[-1][2] == t and ranges[-1][1] + 1 == lo:
                ranges[-1] = (ranges[-1][0], hi, t)
            else:
                ranges.append((lo, hi, t))
        byte_edges.append(tuple(ranges))
        calls: dict[int, set[int]] = {}
        for s in current:
            for rule, t in nfa.call_edges[s]:
                calls.setdefault(rule, set()).add(t)
        call_edges.append(tuple((rule, intern(closure.of(frozenset(ts))))
                                for rule, ts in sorted(calls.items())))
        tokens: dict[TokenEdge, set[int]] = {}
        for s in current:
            for token, t in nfa.token_edges[s]:
                tokens.setdefault(token, set()).add(t)
        token_edges.append(tuple((token, intern(closure.of(frozenset(ts))))
                                 for token, ts in tokens.items()))
        k += 1
    finals = frozenset(i for i, states in enumerate(sets) if not states.isdisjoint(nfa.finals))
    return Automaton(0, finals, byte_edges, call_edges, token_edges, True), sets


def trim(automaton: Automaton) -> Automaton:
    """Drop states unreachable from the start or unable to reach a final state."""
    return _renumbered(automaton, _alive_numbering(automaton))


def _alive_numbering(automaton: Automaton) -> dict[int, int]:
    """The new number of each state :func:`trim` keeps."""
    n = automaton.num_states
    successors: list[set[int]] = [set() for _ in range(n)]
    for s in range(n):
        successors[s].update(t for _, _, t in automaton.byte_edges[s])
        successors[s].update(t for _, t in automaton.call_edges[s])
        successors[s].update(t for _, t in automaton.token_edges[s])
    forward = _reach([automaton.start], successors)
    predecessors: list[set[int]] = [set() for _ in range(n)]
    for s in range(n):
        for t in successors[s]:
            predecessors[t].add(s)
    backward = _reach(list(automaton.finals), predecessors)
    alive = [s for s in range(n) if s in forward and (s in backward or s == automaton.start)]
    return {s: i for i, s in enumerate(alive)}


def _renumbered(automaton: Automaton, number: dict[int, int]) -> Automaton:
    """``automaton`` restricted to the states of ``number``, renumbered so."""
    alive = sorted(number, key=number.__getitem__)
    return Automaton(
        number[automaton.start],
        frozenset(number[f] for f in automaton.finals if f in number),
        [tuple((lo, hi, number[t]) for lo, hi, t in automaton.byte_edges[s] if t in number)
         for s in alive],
        [tuple((r, number[t]) for r, t in automaton.call_edges[s] if t in number)
         for s in alive],
        [tuple((k, number[t]) for k, t in automaton.token_edges[s] if t in number)
         for s in alive],
        automaton.deterministic,
    )


def minimize(dfa: Automaton) -> Automaton:
    """Merge equivalent states of a deterministic ``dfa`` (Hopcroft's partition refinement).

    Symbols are the DFA's byte classes (bytes no edge tells apart), called rules and token sets.
    Missing transitions are handled as in Valmari & Lehtinen: every initial block starts in the
    worklist, so no explicit dead state is needed.
    """
    return _minimized(dfa)[1]


def _minimized(dfa: Automaton) -> tuple[list[int], Automaton]:
    """:func:`minimize`, and the state of the result each state of ``dfa`` became."""
    n = dfa.num_states
    if not dfa.deterministic or n <= 1:
        return list(range(n)), dfa
    block = _coarsest_partition(dfa)
    first: dict[int, int] = {}
    for s in range(n):
        first.setdefault(block[s], s)
    if len(first) == n:
        return list(range(n)), dfa
    order = sorted(first, key=lambda b: (b != block[dfa.start], first[b]))
    number = {b: i for i, b in enumerate(order)}
    return [number[block[s]] for s in range(n)], Automaton(
        0,
        frozenset(number[block[f]] for f in dfa.finals),
        [tuple((lo, hi, number[c]) for lo, hi, c in _merged(dfa.byte_edges[first[b]], block))
         for b in order],
        [tuple((r, number[block[t]]) for r, t in dfa.call_edges[first[b]]) for b in order],
        [tuple((k, number[block[t]]) for k, t in dfa.token_edges[first[b]]) for b in order],
        True,
    )


def _coarsest_partition(dfa: Automaton) -> list[int]:
    """The block number of each state in the coarsest partition compatible with ``dfa``."""
    n = dfa.num_states
    bounds = sorted({lo for edges in dfa.byte_edges for lo, _, _ in edges}
                    | {hi + 1 for edges in dfa.byte_edges for _, hi, _ in edges})
    byte_class = {b: k for k, b in enumerate(bounds)}
    inverse: list[list[tuple[object, int]]] = [[] for _ in range(n)]
    for s in range(n):
        for lo, hi, t in dfa.byte_edges[s]:
            for k in range(byte_class[lo], byte_class[hi + 1]):
                inverse[t].append((k, s))
        for rule, t in dfa.call_edges[s]:
            inverse[t].append((("call", rule), s))
        for token, t in dfa.token_edges[s]:
            inverse[t].append((token, s))
    finals = [s for s in range(n) if s in dfa.finals]
    others = [s for s in range(n) if s not in dfa.finals]
    blocks = [set(part) for part in (finals, others) if part]
    block = [0] * n
    for b, part in enumerate(blocks):
        for s in part:
            block[s] = b
    worklist = list(range(len(blocks)))
    waiting = set(worklist)
    while worklist:
        splitter = worklist.pop()
        waiting.discard(splitter)
        predecessors: dict[object, set[int]] = {}
        for t in list(blocks[splitter]):
            for symbol, s in inverse[t]:
                predecessors.setdefault(symbol, set()).add(s)
        for sources in predecessors.values():
            touched: dict[int, list[int]] = {}
            for s in sources:
                touched.setdefault(block[s], []).append(s)
            for b, members in touched.items():
                if len(members) == len(blocks[b]):
                    continue
                new = len(blocks)
                blocks.append(set(members))
                blocks[b].difference_update(members)
                for s in members:
                    block[s] = new
                if b in waiting or len(blocks[new]) <= len(blocks[b]):
                    worklist.append(new)
                    waiting.add(new)
                else:
                    worklist.append(b)
                    waiting.add(b)
    return block


def _merged(edges: ByteEdges, block: list[int]) -> ByteEdges:
    """``edges`` with targets replaced by blocks and adjacent equal ranges merged."""
    result: list[tuple[int, int, int]] = []
    for lo, hi, t in edges:
        b = block[t]
        if result and result[-1][2] == b and result[-1][1] + 1 == lo:
            result[-1] = (result[-1][0], hi, b)
        else:
            result.append((lo, hi, b))
    return tuple(result)


def _reach(roots: list[int], successors: list[set[int]]) -> set[int]:
    seen = set(roots)
    stack = list(roots)
    while stack:
        for t in successors[stack.pop()]:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return seen


class _ClosureCache:
    """Memoized epsilon closures of state sets."""

    def __init__(self, nfa: NFA):
        self.nfa = nfa
        self.cache: dict[frozenset[int], frozenset[int]] = {}
        self.work = 0
        """Total size of the closures computed so far."""

    def of(self, states: frozenset[int]) -> frozenset[int]:
        found = self.cache.get(states)
        if found is None:
            found = self.cache[states] = self.nfa.epsilon_closure(states)
            self.work += len(found)
        return found
