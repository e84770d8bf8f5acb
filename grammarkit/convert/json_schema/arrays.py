"""Array sets to grammar: positional items, length bounds, ``contains`` counts.

Without ``contains`` an array is its prefix items, each optional from ``minItems`` on, then a
bounded repetition of ``items``. With ``contains``, an automaton over (position, matches so far)
decides per item whether it is one of the counted matches; with ``maxContains`` the others must
*not* match (the complement of the ``contains`` schema), without it they are unconstrained.
``uniqueItems`` is beyond a grammar in general; it is enforced when at most one item fits, or
when the arrays are few enough to list (each position a handful of scalar values).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from grammarkit.convert.json_schema.automata import TooComplex
from grammarkit.convert.json_schema.digits import choice, repeat, sequence
from grammarkit.convert.json_schema.model import ArraySet, Child, Contains, Not, conjoin, inline
from grammarkit.convert.json_schema.report import NOT_ENFORCEABLE, TOO_COMPLEX, join
from grammarkit.convert.json_schema.values import finite_values, json_equal, value_node
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.convert.json_schema.emitter import Emitter
    from grammarkit.convert.json_schema.layout import Layout

MAX_CONTAINS_STATES = 2000
"""The most (position, count) states a ``contains`` automaton may have."""

MAX_DISTINCT_LENGTH = 8
"""``uniqueItems`` is enforced by listing the arrays only when they have at most this many
items..."""

MAX_DISTINCT_ARRAYS = 1000
"""... and there are at most this many of them."""

_NESTING_STEP = 32
"""Optional prefix items nest; every this many levels the rest moves to a rule of its own."""


def array_expr(a: ArraySet, emitter: Emitter, name: str, depth: int) -> ast.Expr | None:
    """The arrays in ``a``, or ``None`` if there are none."""
    reader = emitter.reader
    high = a.max_items
    for index in range(len(a.prefix) + 1):
        if reader.child_is_empty(a.item(index), 1):
            high = index if high is None else min(high, index)
            break
    if high is not None and a.min_items > high:
        return None
    layout = emitter.layout_at(depth)
    if a.unique and (high is None or high > 1):
        arrays = _distinct_arrays(a, high, emitter) if not a.contains else None
        if arrays is not None:
            return _enumerated(arrays, emitter, name, depth, layout)
        emitter.reporter.relax(join(a.pointer, "uniqueItems"), "`uniqueItems` can't be "
                               "enforced by a grammar unless the arrays are few; repeated items "
                               "are accepted", "check uniqueness after generation",
                               NOT_ENFORCEABLE)
    counted = [c for c in a.contains if c.minimum > 0 or c.maximum is not None]
    for extra in counted[1:]:
        emitter.reporter.relax(extra.pointer, "only one `contains` per array is enforced; "
                               "this one is not", code=NOT_ENFORCEABLE)
    if counted:
        try:
            return _counted(a, counted[0], high, emitter, name, depth, layout)
        except TooComplex:
            emitter.reporter.relax(counted[0].pointer, "counting `contains` matches needs more "
                                   f"than {MAX_CONTAINS_STATES} states; it is not enforced",
                                   "lower maxItems or maxContains", TOO_COMPLEX)
    return _plain(a, high, emitter, name, depth, layout)


def _distinct_arrays(a: ArraySet, high: int | None, emitter: Emitter
                     ) -> list[tuple[Any, ...]] | None:
    """Every array of ``a`` (whose items are all distinct), when each position allows a few
    scalar values and there are at most :data:`MAX_DISTINCT_ARRAYS`; else ``None``."""
    if high is None or high > MAX_DISTINCT_LENGTH:
        return None
    options = []
    for index in range(high):
        values = finite_values(emitter.reader.resolve(a.item(index)))
        if values is None:
            return None
        options.append(values)
    arrays: list[tuple[Any, ...]] = []
    frontier: list[tuple[Any, ...]] = [()]
    for length in range(high + 1):
        if length >= a.min_items:
            arrays.extend(frontier)
        if length == high:
            break
        frontier = [array + (value,) for array in frontier for value in options[length]
                    if not any(json_equal(value, other) for other in array)]
        if len(arrays) + len(frontier) > MAX_DISTINCT_ARRAYS:
            return None
    return arrays


def _enumerated(arrays: list[tuple[Any, ...]], emitter: Emitter, name: str, depth: int,
                layout: Layout) -> ast.Expr | None:
    alternatives = []
    # Each value once, not once per array it is in (by type too: True == 1 in Python).
    spelled: dict[tuple[type, Any], ast.Expr] = {}
    for array in arrays:
        if not array:
            alternatives.append(layout.empty("[]"))
            continue
        items: list[ast.Expr] = [layout.open("[", depth)]
        for index, value in enumerate(array):
            if index:
                items.append(layout.comma(depth))
            key = (type(value), value)
            if key not in spelled:
                spelled[key] = emitter.value(inline(value_node(value)), depth + 1,
                                             f"{name}.item")
            items.append(spelled[key])
        items.append(layout.close("]", depth))
        alternatives.append(sequence(items))
    return choice(alternatives) if alternatives else None


def _item_hint(a: ArraySet, name: str, index: int) -> str:
    return f"{name}.{index}" if index < len(a.prefix) else f"{name}.items"


def _plain(a: ArraySet, high: int | None, emitter: Emitter, name: str, depth: int,
           layout: Layout) -> ast.Expr | None:
    low = a.min_items
    width = len(a.prefix) if high is None else min(len(a.prefix), high)
    comma = layout.comma(depth)

    def item(index: int) -> ast.Expr:
        return emitter.value(a.item(index), depth + 1, _item_hint(a, name, index))

    rest_low = max(0, low - width)
    rest_high = None if high is None else high - width
    if width == 0:
        if rest_high == 0:
            nonempty: ast.Expr | None = None
        else:
            first = item(0)
            nonempty = sequence([first, repeat(sequence([comma, first]), max(rest_low, 1) - 1,
                                                None if rest_high is None else rest_high - 1)])
    else:
        tail = ast.Literal("") if rest_high == 0 else repeat(
            sequence([comma, item(width)]), rest_low, rest_high)
        expr: ast.Expr = tail
        for index in reversed(range(width)):
            body = sequence([item(index), expr])
            if index == 0:
                expr = body
                break
            piece = sequence([comma, body])
            expr = piece if index < low else ast.Repeat(piece, 0, 1, "?")
            if (width - index) % _NESTING_STEP == 0:
                expr = emitter.add_rule(emitter.fresh_name(f"{name}.from{index}"), expr)
        nonempty = expr
    alternatives = []
    if low == 0:
        alternatives.append(layout.empty("[]"))
    if nonempty is not None:
        alternatives.append(sequence([layout.open("[", depth), nonempty,
                                      layout.close("]", depth)]))
    return choice(alternatives) if alternatives else None


def _counted(a: ArraySet, contains: Contains, high: int | None, emitter: Emitter, name: str,
             depth: int, layout: Layout) -> ast.Expr | None:
    """The arrays with the right number of ``contains`` matches.

    Raises
    ------
    TooComplex
        If the automaton needs more than :data:`MAX_CONTAINS_STATES` states.
    """
    low = a.min_items
    most = contains.maximum
    cap = most if most is not None else contains.minimum
    horizon = max(len(a.prefix), low, contains.start, 1) if high is None else high
    not_matching: Child = conjoin((Not(contains.child, contains.pointer, "contains"),))

    def following(position: int, count: int, matched: bool) -> tuple[int, int] | None:
        count += matched
        if most is not None and count > most:
            return None
        return min(position + 1, horizon), min(count, cap)

    transitions: dict[tuple[int, int], list[tuple[Child, tuple[int, int]]]] = {}
    queue = deque([(0, 0)])
    while queue:
        state = queue.popleft()
        if state in transitions:
            continue
        position, count = state
        moves: list[tuple[Child, tuple[int, int]]] = []
        if high is None or position < high:
            child = a.item(position)
            options: list[tuple[Child, bool]] = [(child, False)]
            if position >= contains.start:
                options = [(conjoin(child, contains.child), True)]
                options.append((conjoin(child, not_matching) if most is not None else child,
                                False))
            for option, matched in options:
                target = following(position, count, matched)
                if target is not None and not emitter.reader.child_is_empty(option, 1):
                    moves.append((option, target))
                    queue.append(target)
        transitions[state] = moves
        if len(transitions) > MAX_CONTAINS_STATES:
            raise TooComplex(f"more than {MAX_CONTAINS_STATES} states")

    def accepting(state: tuple[int, int]) -> bool:
        return state[0] >= low and state[1] >= contains.minimum

    live = _live(transitions, accepting)
    if (0, 0) not in live:
        return None
    names: dict[tuple[int, int], str] = {}
    for state in transitions:
        if state in live and state != (0, 0):
            names[state] = emitter.fresh_name(f"{name}.seq")
    comma = layout.comma(depth)

    def body(state: tuple[int, int]) -> ast.Expr:
        position = state[0]
        alternatives: list[ast.Expr] = []
        for option, target in transitions[state]:
            if target in live:
                hint = _item_hint(a, name, position)
                alternatives.append(sequence([
                    comma if position else ast.Literal(""),
                    emitter.value(option, depth + 1, hint),
                    ast.RuleRef(names[target]),
                ]))
        if position and accepting(state):
            alternatives.append(ast.Literal(""))
        # A matching and a non-matching item may read alike and lead alike (past the count).
        return choice(list(dict.fromkeys(alternatives)))

    for state, rule_name in names.items():
        emitter.add_rule(rule_name, body(state))
    result = []
    if accepting((0, 0)):
        result.append(layout.empty("[]"))
    first = body((0, 0))
    if not (isinstance(first, ast.CharClass) and not first.ranges):
        result.append(sequence([layout.open("[", depth), first, layout.close("]", depth)]))
    return choice(result) if result else None


def _live(transitions: dict[tuple[int, int], list[tuple[Child, tuple[int, int]]]],
          accepting: object) -> set[tuple[int, int]]:
    """The states from which an accepting state is reachable."""
    assert callable(accepting)
    reverse: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for state, moves in transitions.items():
        for _, target in moves:
            reverse.setdefault(target, []).append(state)
    live = {state for state in transitions if accepting(state)}
    stack = list(live)
    while stack:
        for source in reverse.get(stack.pop(), ()):
            if source not in live:
                live.add(source)
                stack.append(source)
    return live
