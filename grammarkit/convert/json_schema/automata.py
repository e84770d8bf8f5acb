"""Regular languages over Unicode scalar values, as finite automata.

JSON Schema needs a few operations on string languages that grammar expressions can't do
directly: intersection (``pattern`` beside ``format``), complement (property names other than the
declared ones), and length bounds (``minLength`` beside ``pattern``). This module builds NFAs from
grammar expressions (:func:`nfa_from_expr`), determinizes them, performs those operations on DFAs,
and turns a DFA back into right-linear grammar rules (:func:`dfa_to_rules`).

Edges carry sets of code points (:data:`Ranges`), so automata stay small whatever the alphabet.
Every construction counts its states and raises :class:`TooComplex` past a limit, which keeps
hostile patterns within bounded time and memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

from grammarkit import codepoints
from grammarkit.codepoints import Ranges
from grammarkit.ebnf import ast

"""A set of code points: sorted, disjoint, non-adjacent inclusive ranges."""

SCALARS: Ranges = ((0, 0xD7FF), (0xE000, 0x10FFFF))
"""Every Unicode scalar value (code points other than surrogates): the alphabet."""

MAX_STATES = 4000
"""The most states any automaton built here may have."""

MAX_EXPR_DEPTH = 200
"""The deepest expression :func:`nfa_from_expr` accepts."""


class TooComplex(Exception):
    """An automaton would exceed :data:`MAX_STATES` (or an expression is too deep)."""


# -- code-point sets ---------------------------------------------------------------------------
def subtract_ranges(a: Ranges, b: Ranges) -> Ranges:
    """``a - b``."""
    return codepoints.intersect(a, complement_ranges(b))


def complement_ranges(a: Ranges) -> Ranges:
    """The scalar values outside ``a``."""
    result: list[tuple[int, int]] = []
    next_low = 0
    for low, high in a:
        if low > next_low:
            result.append((next_low, low - 1))
        next_low = max(next_low, high + 1)
    if next_low <= 0x10FFFF:
        result.append((next_low, 0x10FFFF))
    return codepoints.intersect(tuple(result), SCALARS)


def in_ranges(point: int, ranges: Ranges) -> bool:
    """Whether ``point`` is in ``ranges``."""
    return any(low <= point <= high for low, high in ranges)


def _partition(edges: Iterable[tuple[Ranges, int]]) -> list[tuple[Ranges, frozenset[int]]]:
    """Split overlapping edge sets into disjoint pieces, each with every target it leads to."""
    by_ranges: dict[Ranges, set[int]] = {}
    for ranges, target in edges:
        by_ranges.setdefault(ranges, set()).add(target)
    if len(by_ranges) == 1:
        ((only, reached),) = by_ranges.items()
        return [(only, frozenset(reached))]
    keys = list(by_ranges)
    events: dict[int, list[tuple[int, bool]]] = {}
    for key, ranges in enumerate(keys):
        for low, high in ranges:
            events.setdefault(low, []).append((key, True))
            events.setdefault(high + 1, []).append((key, False))
    active: set[int] = set()
    pieces: dict[frozenset[int], list[tuple[int, int]]] = {}
    points = sorted(events)
    for index, point in enumerate(points):
        for key, opening in events[point]:
            if opening:
                active.add(key)
            else:
                active.discard(key)
        if active and index + 1 < len(points):
            targets = frozenset().union(*(by_ranges[keys[key]] for key in active))
            pieces.setdefault(targets, []).append((point, points[index + 1] - 1))
    return [(codepoints.merge(spans), targets) for targets, spans in pieces.items()]


# -- NFA ---------------------------------------------------------------------------------------
class NFA:
    """A nondeterministic automaton with ε-moves, built incrementally by :func:`nfa_from_expr`."""

    def __init__(self) -> None:
        self.edges: list[list[tuple[Ranges, int]]] = []
        self.epsilon: list[list[int]] = []
        self.start = self.add_state()
        self.accept = self.add_state()

    def add_state(self) -> int:
        if len(self.edges) >= 8 * MAX_STATES:
            raise TooComplex("the expression needs too many automaton states")
        self.edges.append([])
        self.epsilon.append([])
        return len(self.edges) - 1

    def closure(self, states: Iterable[int]) -> frozenset[int]:
        """The states reachable from ``states`` by ε-moves alone."""
        seen = set(states)
        stack = list(seen)
        while stack:
            for target in self.epsilon[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return frozenset(seen)


def nfa_from_expr(expr: ast.Expr) -> NFA:
    """Thompson's construction for an expression of literals, classes, sequences, choices and
    repetitions (what :func:`grammarkit.convert.regex.regex_to_ast` produces).

    Raises
    ------
    TooComplex
        For rule references and macros, expressions nested deeper than :data:`MAX_EXPR_DEPTH`,
        and automata beyond the state limit.
    """
    nfa = NFA()
    _build(nfa, expr, nfa.start, nfa.accept, 0)
    return nfa


def _build(nfa: NFA, expr: ast.Expr, start: int, end: int, depth: int) -> None:
    if depth > MAX_EXPR_DEPTH:
        raise TooComplex("the expression is nested too deeply")
    if isinstance(expr, ast.Literal):
        current = start
        for index, char in enumerate(expr.value):
            target = end if index == len(expr.value) - 1 else nfa.add_state()
            nfa.edges[current].append((((ord(char), ord(char)),), target))
            current = target
        if not expr.value:
            nfa.epsilon[start].append(end)
    elif isinstance(expr, ast.CharClass):
        ranges = codepoints.merge(expr.ranges)
        ranges = complement_ranges(ranges) if expr.negated else codepoints.intersect(ranges, SCALARS)
        if ranges:
            nfa.edges[start].append((ranges, end))
    elif isinstance(expr, ast.Sequence):
        current = start
        for index, item in enumerate(expr.items):
            target = end if index == len(expr.items) - 1 else nfa.add_state()
            _build(nfa, item, current, target, depth + 1)
            current = target
        if not expr.items:
            nfa.epsilon[start].append(end)
    elif isinstance(expr, ast.Choice):
        for alternative in expr.alternatives:
            _build(nfa, alternative, start, end, depth + 1)
    elif isinstance(expr, ast.Repeat):
        _build_repeat(nfa, expr, start, end, depth)
    else:
        raise TooComplex(f"{type(expr).__name__} can't be part of a regular language")


def _build_repeat(nfa: NFA, expr: ast.Repeat, start: int, end: int, depth: int) -> None:
    current = start
    for _ in range(expr.min):
        target = nfa.add_state()
        _build(nfa, expr.item, current, target, depth + 1)
        current = target
    if expr.max is None:
        loop = nfa.add_state()
        nfa.epsilon[current].append(loop)
        after = nfa.add_state()
        _build(nfa, expr.item, loop, after, depth + 1)
        nfa.epsilon[after].append(loop)
        nfa.epsilon[loop].append(end)
        return
    for _ in range(expr.max - expr.min):
        nfa.epsilon[current].append(end)
        target = nfa.add_state()
        _build(nfa, expr.item, current, target, depth + 1)
        current = target
    nfa.epsilon[current].append(end)


# -- DFA ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DFA:
    """A deterministic automaton; a missing edge rejects.

    Attributes
    ----------
    start
        The initial state.
    accepting
        The final states.
    edges
        Per state, disjoint code-point sets and the state each leads to.
    """

    start: int
    accepting: frozenset[int]
    edges: tuple[tuple[tuple[Ranges, int], ...], ...]

    @property
    def size(self) -> int:
        return len(self.edges)

    def step(self, state: int, point: int) -> int | None:
        """The state after reading ``point`` in ``state``, or ``None`` if rejected."""
        for ranges, target in self.edges[state]:
            if in_ranges(point, ranges):
                return target
        return None

    def accepts(self, text: str) -> bool:
        """Whether the whole of ``text`` is in the language."""
        state: int | None = self.start
        for char in text:
            assert state is not None
            state = self.step(state, ord(char))
            if state is None:
                return False
        return state in self.accepting

    def is_empty(self) -> bool:
        """Whether the language is empty."""
        return not (self._reachable() & self.accepting)

    def _reachable(self) -> set[int]:
        seen = {self.start}
        stack = [self.start]
        while stack:
            for _, target in self.edges[stack.pop()]:
                if target not in seen:
                    seen.add(target)
                    stack.append(target)
        return seen

    def length_bounds(self) -> tuple[int, int | None] | None:
        """The shortest and longest word lengths (``None`` for unbounded), or ``None`` if empty."""
        trimmed = trim(self)
        if trimmed.is_empty():
            return None
        shortest = {trimmed.start: 0}
        frontier = [trimmed.start]
        while frontier:
            following = []
            for state in frontier:
                for _, target in trimmed.edges[state]:
                    if target not in shortest:
                        shortest[target] = shortest[state] + 1
                        following.append(target)
            frontier = following
        low = min(shortest[state] for state in trimmed.accepting)
        order = _topological_order(trimmed)
        if order is None:
            return low, None
        longest = {state: -1 for state in order}
        longest[trimmed.start] = 0
        for state in order:
            if longest[state] >= 0:
                for _, target in trimmed.edges[state]:
                    longest[target] = max(longest[target], longest[state] + 1)
        return low, max(longest[state] for state in trimmed.accepting)


def _topological_order(dfa: DFA) -> list[int] | None:
    """States in an order where every edge goes forward, or ``None`` if there is a cycle."""
    indegree = [0] * dfa.size
    for edges in dfa.edges:
        for _, target in edges:
            indegree[target] += 1
    ready = [state for state in range(dfa.size) if indegree[state] == 0]
    order: list[int] = []
    while ready:
        state = ready.pop()
        order.append(state)
        for _, target in dfa.edges[state]:
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    return order if len(order) == dfa.size else None


class StateBuilder:
    """Numbers the states of a DFA under construction, keyed by any hashable description.

    ``state(key)`` returns the number of the state described by ``key``, creating it (and
    queueing it in ``pending``) the first time; ``finish`` freezes the result.
    """

    def __init__(self) -> None:
        self.ids: dict[object, int] = {}
        self.edges: list[list[tuple[Ranges, int]]] = []
        self.accepting: set[int] = set()
        self.pending: list[object] = []

    def state(self, key: object) -> int:
        found = self.ids.get(key)
        if found is not None:
            return found
        if len(self.edges) >= MAX_STATES:
            raise TooComplex(f"the automaton needs more than {MAX_STATES} states")
        self.ids[key] = len(self.edges)
        self.edges.append([])
        self.pending.append(key)
        return self.ids[key]

    def finish(self, start: int = 0) -> DFA:
        return DFA(start, frozenset(self.accepting), tuple(tuple(e) for e in self.edges))


def determinize(nfa: NFA) -> DFA:
    """The subset construction."""
    builder = StateBuilder()
    builder.state(nfa.closure([nfa.start]))
    # Each state's ε-closure once (unanchored patterns put the same loop states in every
    # subset), and each target set's closure once.
    closures: dict[int, frozenset[int]] = {}
    closed: dict[frozenset[int], frozenset[int]] = {}

    def closure(targets: frozenset[int]) -> frozenset[int]:
        found = closed.get(targets)
        if found is None:
            parts = []
            for state in targets:
                part = closures.get(state)
                if part is None:
                    part = closures[state] = nfa.closure((state,))
                parts.append(part)
            found = closed[targets] = frozenset().union(*parts)
        return found

    while builder.pending:
        subset = builder.pending.pop()
        assert isinstance(subset, frozenset)
        source = builder.ids[subset]
        if nfa.accept in subset:
            builder.accepting.add(source)
        moves = [edge for state in subset for edge in nfa.edges[state]]
        for ranges, targets in _partition(moves):
            builder.edges[source].append((ranges, builder.state(closure(targets))))
    return minimize(builder.finish())


def dfa_from_expr(expr: ast.Expr) -> DFA:
    """The minimal DFA of a regular grammar expression (see :func:`nfa_from_expr`)."""
    return determinize(nfa_from_expr(expr))


def literals_dfa(words: Iterable[str]) -> DFA:
    """The DFA of a finite set of strings (a trie)."""
    children: list[dict[int, int]] = [{}]
    accepting: set[int] = set()
    for word in words:
        node = 0
        for char in word:
            following = children[node].get(ord(char))
            if following is None:
                if len(children) >= MAX_STATES:
                    raise TooComplex(f"the word list needs more than {MAX_STATES} states")
                children.append({})
                following = children[node][ord(char)] = len(children) - 1
            node = following
        accepting.add(node)
    edges = tuple(
        tuple((((point, point),), target) for point, target in sorted(node.items()))
        for node in children
    )
    return DFA(0, frozenset(accepting), edges)


def excluded_words_dfa(words: Iterable[str]) -> DFA:
    """The minimal DFA of every string of scalar values except ``words``.

    Built in linear time without :func:`minimize`: the complement of a trie is acyclic but
    for the state that accepts everything, so merging equal states bottom-up (leaves first)
    makes it minimal.
    """
    children: list[dict[int, int]] = [{}]
    ends: set[int] = set()
    for word in words:
        node = 0
        for char in word:
            following = children[node].get(ord(char))
            if following is None:
                following = children[node][ord(char)] = len(children)
                children.append({})
            node = following
        ends.add(node)
    # Class 0 accepts everything; a trie node can't join it (a word below it is rejected).
    classes: dict[tuple[bool, tuple[tuple[int, Ranges], ...]], int] = {(True, ()): 0}
    signatures: list[tuple[bool, tuple[tuple[int, Ranges], ...]]] = [(True, ())]
    class_of = [0] * len(children)
    for node in reversed(range(len(children))):
        groups: dict[int, list[tuple[int, int]]] = {}
        for point in sorted(children[node]):
            groups.setdefault(class_of[children[node][point]], []).append((point, point))
        signature = (node not in ends, tuple((target, codepoints.merge(points))
                                             for target, points in groups.items()))
        found = classes.get(signature)
        if found is None:
            found = classes[signature] = len(signatures)
            signatures.append(signature)
        class_of[node] = found
    # Number the classes from the root's, so that the start state is 0.
    order = [class_of[0]] + [c for c in range(len(signatures)) if c != class_of[0]]
    number = {cls: index for index, cls in enumerate(order)}
    edges = []
    for cls in order:
        _, moves = signatures[cls]
        rest = _scalars_except(tuple(sorted(span for _, ranges in moves for span in ranges)))
        state_edges = [(ranges, number[target]) for target, ranges in moves]
        if rest:
            state_edges.append((rest, number[0]))
        edges.append(tuple(sorted(state_edges)))
    accepting = frozenset(number[c] for c, (accepts, _) in enumerate(signatures) if accepts)
    return DFA(0, accepting, tuple(edges))


def without_words(a: DFA, words: Iterable[str]) -> DFA:
    """The minimal DFA of the strings of ``a`` (a minimal DFA) other than ``words``.

    What ``intersect(a, excluded_words_dfa(words))`` accepts, without the product and its
    minimization (a pattern beside hundreds of declared property names made a product of
    thousands of states): ``a``'s states, and one state for each prefix of a word that ``a``
    reads, made bottom-up (longest prefixes first) and merged with any state of the same
    edges, which then accepts the same strings, so the result is minimal.

    Raises
    ------
    TooComplex
        If the result would have more than :data:`MAX_STATES` states (the trie of the words
        is as large as the words themselves).
    """
    state_of = [a.start]  # per node of the words' trie, the state of ``a`` reading its prefix
    children: list[dict[int, int]] = [{}]
    ends: set[int] = set()
    for word in words:
        node = 0
        for char in word:
            following = children[node].get(ord(char))
            if following is None:
                target = a.step(state_of[node], ord(char))
                if target is None:
                    break  # ``a`` rejects the word: nothing to take out
                following = children[node][ord(char)] = len(children)
                children.append({})
                state_of.append(target)
            node = following
        else:
            ends.add(node)

    def signature(accepts: bool, moves: dict[int, list[tuple[int, int]]]
                  ) -> tuple[bool, tuple[tuple[Ranges, int], ...]]:
        return accepts, tuple(sorted((codepoints.merge(spans), target)
                                     for target, spans in moves.items()))

    known: dict[tuple[bool, tuple[tuple[Ranges, int], ...]], int] = {}
    for state, state_edges in enumerate(a.edges):
        moves: dict[int, list[tuple[int, int]]] = {}
        for ranges, target in state_edges:
            moves.setdefault(target, []).extend(ranges)
        known[signature(state in a.accepting, moves)] = state
    added: list[tuple[bool, tuple[tuple[Ranges, int], ...]]] = []
    number_of: list[int | None] = [None] * len(children)
    for node in reversed(range(len(children))):
        moves = {}
        below = children[node]
        for ranges, target in a.edges[state_of[node]]:
            inside = tuple((point, point) for point in sorted(below) if in_ranges(point, ranges))
            rest = subtract_ranges(ranges, inside) if inside else ranges
            if rest:
                moves.setdefault(target, []).extend(rest)
            for point, _ in inside:
                child = number_of[below[point]]
                if child is not None:  # the child accepts nothing
                    moves.setdefault(child, []).append((point, point))
        accepts = state_of[node] in a.accepting and node not in ends
        if not accepts and not moves:
            continue
        shape = signature(accepts, moves)
        found = known.get(shape)
        if found is None:
            if a.size + len(added) >= MAX_STATES:
                raise TooComplex(f"the automaton needs more than {MAX_STATES} states")
            found = known[shape] = a.size + len(added)
            added.append(shape)
        number_of[node] = found
    start = number_of[0]
    if start is None:
        return DFA(0, frozenset(), ((),))
    accepting = [state in a.accepting for state in range(a.size)] + [s[0] for s in added]
    edges_of = [*a.edges, *(shape[1] for shape in added)]
    # Renumbered from the start in the order a search meets them; unreachable states go.
    number = {start: 0}
    order = [start]
    for state in order:
        for _, target in edges_of[state]:
            if target not in number:
                number[target] = len(order)
                order.append(target)
    return DFA(0, frozenset(number[state] for state in order if accepting[state]),
               tuple(tuple((ranges, number[target]) for ranges, target in edges_of[state])
                     for state in order))


@lru_cache(maxsize=4096)
def _scalars_except(spans: tuple[tuple[int, int], ...]) -> Ranges:
    """The scalar values in none of the sorted ``spans`` (the same few letters are left out
    of the names of thousands of objects)."""
    return subtract_ranges(SCALARS, codepoints.merge(spans))


def universal_dfa(alphabet: Ranges = SCALARS) -> DFA:
    """The DFA of every string over ``alphabet``."""
    return DFA(0, frozenset({0}), (((alphabet, 0),),))


def intersect(a: DFA, b: DFA) -> DFA:
    """The product automaton: words in both languages."""
    builder = StateBuilder()
    builder.state((a.start, b.start))
    while builder.pending:
        pair = builder.pending.pop()
        assert isinstance(pair, tuple)
        left, right = pair
        source = builder.ids[pair]
        if left in a.accepting and right in b.accepting:
            builder.accepting.add(source)
        for left_ranges, left_target in a.edges[left]:
            for right_ranges, right_target in b.edges[right]:
                common = codepoints.intersect(left_ranges, right_ranges)
                if common:
                    target = builder.state((left_target, right_target))
                    builder.edges[source].append((common, target))
    return minimize(builder.finish())


def complement(a: DFA) -> DFA:
    """Every string of scalar values not in the language."""
    dead = a.size
    edges: list[tuple[tuple[Ranges, int], ...]] = []
    for state_edges in a.edges:
        covered = codepoints.merge(span for ranges, _ in state_edges for span in ranges)
        missing = subtract_ranges(SCALARS, covered)
        edges.append(state_edges + (((missing, dead),) if missing else ()))
    edges.append(((SCALARS, dead),))
    accepting = frozenset(range(a.size + 1)) - a.accepting
    return minimize(DFA(a.start, accepting, tuple(edges)))


def with_length(a: DFA, low: int, high: int | None) -> DFA:
    """The words of ``a`` whose length (in code points) is within ``[low, high]``."""
    cap = high if high is not None else low
    builder = StateBuilder()
    builder.state((a.start, 0))
    while builder.pending:
        key = builder.pending.pop()
        assert isinstance(key, tuple)
        state, count = key
        source = builder.ids[key]
        if state in a.accepting and count >= low:
            builder.accepting.add(source)
        if high is not None and count >= high:
            continue
        following = min(count + 1, cap)
        for ranges, target in a.edges[state]:
            builder.edges[source].append((ranges, builder.state((target, following))))
    return minimize(builder.finish())


def trim(a: DFA) -> DFA:
    """``a`` without the states that are unreachable or can't reach a final state."""
    forward = a._reachable()
    reverse: dict[int, list[int]] = {}
    for state, state_edges in enumerate(a.edges):
        for _, target in state_edges:
            reverse.setdefault(target, []).append(state)
    live = set(a.accepting & forward)
    stack = list(live)
    while stack:
        for source in reverse.get(stack.pop(), ()):
            if source in forward and source not in live:
                live.add(source)
                stack.append(source)
    if a.start not in live:
        return DFA(0, frozenset(), ((),))
    order = sorted(live, key=lambda s: (s != a.start, s))
    number = {state: index for index, state in enumerate(order)}
    edges = tuple(
        tuple((ranges, number[target]) for ranges, target in a.edges[state] if target in live)
        for state in order
    )
    return DFA(0, frozenset(number[s] for s in a.accepting if s in live), edges)


def minimize(a: DFA) -> DFA:
    """The minimal trimmed DFA of the same language (Hopcroft's partition refinement over the
    elementary intervals of the edge sets)."""
    a = trim(a)
    if a.size <= 1:
        return a
    atoms = _atoms(a)
    dead = a.size
    table = [[dead] * len(atoms) for _ in range(a.size + 1)]
    for state, state_edges in enumerate(a.edges):
        for ranges, target in state_edges:
            for low, high in ranges:
                for atom in range(_atom_index(atoms, low), _atom_index(atoms, high) + 1):
                    table[state][atom] = target
    inverse: list[dict[int, list[int]]] = [{} for _ in atoms]
    for state, row in enumerate(table):
        for atom, target in enumerate(row):
            inverse[atom].setdefault(target, []).append(state)
    # Block 0 holds the rejecting states (the dead one included), block 1 the accepting ones.
    block_of = [1 if state in a.accepting else 0 for state in range(a.size + 1)]
    blocks: list[set[int]] = [set(), set()]
    for state, block in enumerate(block_of):
        blocks[block].add(state)
    work = {0 if len(blocks[0]) <= len(blocks[1]) else 1}
    while work:
        splitter = set(blocks[work.pop()])
        for atom_inverse in inverse:
            touched: dict[int, set[int]] = {}
            for target in splitter:
                for source in atom_inverse.get(target, ()):
                    touched.setdefault(block_of[source], set()).add(source)
            for block, inside in touched.items():
                if len(inside) == len(blocks[block]):
                    continue
                blocks[block] -= inside
                blocks.append(inside)
                new_block = len(blocks) - 1
                for state in inside:
                    block_of[state] = new_block
                if block in work or len(inside) <= len(blocks[block]):
                    work.add(new_block)
                else:
                    work.add(block)
    return _quotient(a, atoms, table, block_of)


def _atoms(a: DFA) -> list[tuple[int, int]]:
    """The elementary intervals: maximal ranges no edge set splits."""
    cuts = {0, 0x110000}
    for state_edges in a.edges:
        for ranges, _ in state_edges:
            for low, high in ranges:
                cuts.add(low)
                cuts.add(high + 1)
    points = sorted(cuts)
    return [(low, high - 1) for low, high in pairwise(points)]


def _atom_index(atoms: list[tuple[int, int]], point: int) -> int:
    low, high = 0, len(atoms) - 1
    while low < high:
        middle = (low + high) // 2
        if atoms[middle][1] < point:
            low = middle + 1
        else:
            high = middle
    return low


def _quotient(a: DFA, atoms: list[tuple[int, int]], table: list[list[int]],
              block_of: list[int]) -> DFA:
    """The DFA whose states are the blocks of ``block_of``, the start block first."""
    dead_block = block_of[a.size]
    number: dict[int, int] = {}
    for state in [a.start, *range(a.size)]:
        if block_of[state] != dead_block:
            number.setdefault(block_of[state], len(number))
    edges: list[tuple[tuple[Ranges, int], ...]] = [() for _ in number]
    done: set[int] = set()
    for state in range(a.size):
        block = block_of[state]
        if block == dead_block or block in done:
            continue
        done.add(block)
        spans: dict[int, list[tuple[int, int]]] = {}
        for atom, target in enumerate(table[state]):
            if block_of[target] != dead_block:
                spans.setdefault(number[block_of[target]], []).append(atoms[atom])
        edges[number[block]] = tuple(sorted(
            ((codepoints.merge(pieces), target) for target, pieces in spans.items()),
            key=lambda edge: edge[0]))
    accepting = frozenset(number[block_of[s]] for s in a.accepting)
    return trim(DFA(0, accepting, tuple(edges)))


# -- back to grammar rules ---------------------------------------------------------------------
def dfa_to_rules(
    a: DFA, name: str, spell: Callable[[Ranges], ast.Expr]
) -> tuple[ast.Expr, list[ast.Rule]]:
    """Right-linear rules for ``a``: an expression for its language and the rules it uses.

    State ``i`` becomes rule ``{name}.s{i}`` (the start state is the returned expression's rule);
    ``spell`` turns each edge's code-point set into the expression that reads one such point.
    An acyclic DFA with a single path shape still becomes rules: callers that want a compact
    expression for simple languages check for those first. ``a`` should be minimal and trimmed
    (every construction here returns it so).
    """
    if a.is_empty():
        return ast.CharClass(()), []
    names = [f"{name}.s{state}" if state else name for state in range(a.size)]
    rules = []
    for state, state_edges in enumerate(a.edges):
        alternatives: list[ast.Expr] = [
            ast.Sequence((spell(ranges), ast.RuleRef(names[target])))
            for ranges, target in state_edges
        ]
        if state in a.accepting:
            alternatives.append(ast.Literal(""))
        body = alternatives[0] if len(alternatives) == 1 else ast.Choice(tuple(alternatives))
        rules.append(ast.Rule(names[state], body))
    return ast.RuleRef(name), rules
