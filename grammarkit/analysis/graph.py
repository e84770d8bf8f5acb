"""Iterative graph algorithms behind the grammar analyses, linear in nodes plus edges.

Graphs are adjacency lists over nodes ``0..n-1``; nothing here recurses, so depth is unbounded.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence

from grammarkit.analysis.charset import EMPTY, CharSet


def strongly_connected_components(successors: Sequence[Sequence[int]],
                                  starts: Iterable[int] | None = None) -> list[list[int]]:
    """Tarjan's strongly connected components, each listed after every component it reaches.

    Only the nodes reachable from ``starts`` (default: every node) are visited.
    """
    count = len(successors)
    index = [-1] * count
    low = [0] * count
    on_stack = [False] * count
    stack: list[int] = []
    components: list[list[int]] = []
    counter = 0
    for start in range(count) if starts is None else starts:
        if index[start] != -1:
            continue
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        work = [(start, 0)]
        while work:
            node, position = work[-1]
            edges = successors[node]
            if position < len(edges):
                work[-1] = (node, position + 1)
                target = edges[position]
                if index[target] == -1:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack[target] = True
                    work.append((target, 0))
                elif on_stack[target]:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[int] = []
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def is_cyclic(component: Sequence[int], successors: Sequence[Sequence[int]]) -> bool:
    """Whether a strongly connected component contains a cycle (several nodes or a self-loop)."""
    return len(component) > 1 or component[0] in successors[component[0]]


def union_fixpoint(successors: Sequence[Sequence[int]],
                   constants: Sequence[CharSet]) -> list[CharSet]:
    """The least sets with ``value[v] ⊇ constants[v]`` and ``value[v] ⊇ value[w]`` per edge v→w."""
    values: list[CharSet] = [EMPTY] * len(successors)
    for component in strongly_connected_components(successors):
        members = set(component)
        value = EMPTY
        for node in component:
            value = value.union(constants[node])
            for target in successors[node]:
                if target not in members:
                    value = value.union(values[target])
        for node in component:
            values[node] = value
    return values


def union_fixpoint_from(
    starts: Iterable[int],
    successors: Callable[[int], Sequence[int]],
    constant: Callable[[int], CharSet],
) -> dict[int, CharSet]:
    """:func:`union_fixpoint` for the nodes reachable from ``starts`` only, by node number.

    ``successors`` and ``constant`` are asked once per reachable node; the values of the
    reachable nodes are those of the whole graph's fixpoint, since none depends on the rest.
    """
    number: dict[int, int] = {}
    order: list[int] = []
    for node in starts:
        if node not in number:
            number[node] = len(order)
            order.append(node)
    edges: list[Sequence[int]] = []
    for node in order:  # grows while it is read: a breadth-first search
        targets = successors(node)
        for target in targets:
            if target not in number:
                number[target] = len(order)
                order.append(target)
        edges.append([number[target] for target in targets])
    values = union_fixpoint(edges, [constant(node) for node in order])
    return dict(zip(order, values))


class Gate(enum.Enum):
    """How a node's truth follows from its successors' in :func:`boolean_fixpoint`."""

    TRUE = "true"
    FALSE = "false"
    ALL = "all"
    ANY = "any"


def reverse(successors: Sequence[Sequence[int]]) -> list[list[int]]:
    """The predecessors of every node."""
    predecessors: list[list[int]] = [[] for _ in successors]
    for node, targets in enumerate(successors):
        for target in targets:
            predecessors[target].append(node)
    return predecessors


def boolean_fixpoint(
    successors: Sequence[Sequence[int]],
    gates: Sequence[Gate],
    predecessors: Sequence[Sequence[int]] | None = None,
) -> list[bool]:
    """The least solution of ``v = gate(v)(values of successors)``, by counting (Horn clauses).

    ``predecessors`` (:func:`reverse` of ``successors``) may be passed when solving several
    systems over one graph.
    """
    count = len(successors)
    if predecessors is None:
        predecessors = reverse(successors)
    missing = [0] * count
    ready: list[int] = []
    for node, gate in enumerate(gates):
        if gate is Gate.TRUE or (gate is Gate.ALL and not successors[node]):
            ready.append(node)
        elif gate is Gate.ALL:
            missing[node] = len(successors[node])
        elif gate is Gate.ANY:
            missing[node] = 1
        else:
            missing[node] = -1
    values = [False] * count
    for node in ready:
        values[node] = True
    while ready:
        node = ready.pop()
        for parent in predecessors[node]:
            if missing[parent] > 0:
                missing[parent] -= 1
                if missing[parent] == 0:
                    values[parent] = True
                    ready.append(parent)
    return values
