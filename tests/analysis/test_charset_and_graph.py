"""CharSet against Python sets, and the graph fixpoints against naive iteration."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.analysis.charset import END, MAX_CODEPOINT, CharSet
from grammarkit.analysis.graph import (
    Gate,
    boolean_fixpoint,
    is_cyclic,
    strongly_connected_components,
    union_fixpoint,
)

small_ranges = st.lists(
    st.tuples(st.integers(0, 40), st.integers(0, 6)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=6,
)


def members(ranges: list[tuple[int, int]]) -> set[int]:
    return {p for low, high in ranges for p in range(low, high + 1)}


@given(small_ranges, small_ranges)
def test_charset_matches_python_sets(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> None:
    x, y = CharSet.of(a), CharSet.of(b)
    assert members(list(x.intervals)) == members(a)
    assert all(hi + 1 < lo for (_, hi), (lo, _) in zip(x.intervals, x.intervals[1:]))
    assert members(list(x.union(y).intervals)) == members(a) | members(b)
    assert x.intersects(y) == bool(members(a) & members(b))
    assert x.is_subset(y) == (members(a) <= members(b))
    assert bool(x) == bool(a)
    for point in range(50):
        assert (point in x) == (point in members(a))
        assert (point in x.complement()) == (point not in members(a))


def test_complement_edges() -> None:
    assert CharSet().complement().intervals == ((0, MAX_CODEPOINT),)
    assert not CharSet(((0, MAX_CODEPOINT),)).complement()
    assert CharSet(((5, END),)).complement().intervals == ((0, 4),)


graphs = st.integers(1, 9).flatmap(
    lambda n: st.lists(st.lists(st.integers(0, n - 1), max_size=3), min_size=n, max_size=n))


def closure(successors: list[list[int]]) -> list[set[int]]:
    reach = []
    for start in range(len(successors)):
        seen: set[int] = set()
        stack = list(successors[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(successors[node])
        reach.append(seen)
    return reach


@given(graphs)
def test_components_are_mutual_reachability_in_reverse_topological_order(
        successors: list[list[int]]) -> None:
    reach = closure(successors)
    components = strongly_connected_components(successors)
    assert sorted(n for c in components for n in c) == list(range(len(successors)))
    position = {n: k for k, c in enumerate(components) for n in c}
    for v in range(len(successors)):
        for w in range(len(successors)):
            same = v == w or (w in reach[v] and v in reach[w])
            assert (position[v] == position[w]) == same
        for w in successors[v]:
            assert position[w] <= position[v]
    for component in components:
        assert is_cyclic(component, successors) == (component[0] in reach[component[0]])


@given(graphs, st.data())
def test_boolean_fixpoint_is_the_least_solution(successors: list[list[int]],
                                                data: st.DataObject) -> None:
    gates = data.draw(st.lists(st.sampled_from(Gate), min_size=len(successors),
                               max_size=len(successors)))
    values = [False] * len(successors)
    changed = True
    while changed:
        changed = False
        for v, gate in enumerate(gates):
            kids = [values[w] for w in successors[v]]
            new = {Gate.TRUE: True, Gate.FALSE: False, Gate.ALL: all(kids),
                   Gate.ANY: any(kids)}[gate]
            if new and not values[v]:
                values[v] = changed = True
    assert boolean_fixpoint(successors, gates) == values


@settings(max_examples=60)
@given(graphs, st.data())
def test_union_fixpoint_is_the_least_solution(successors: list[list[int]],
                                              data: st.DataObject) -> None:
    constants = [CharSet.of(data.draw(small_ranges)) for _ in successors]
    values = list(constants)
    changed = True
    while changed:
        changed = False
        for v in range(len(successors)):
            new = values[v]
            for w in successors[v]:
                new = new.union(values[w])
            if new != values[v]:
                values[v], changed = new, True
    assert union_fixpoint(successors, constants) == values
