"""Object sets to grammar: declared properties, the other names, and which may appear when.

*Declared* names are those in ``properties``, ``required`` and ``dependentRequired``. Every other
name falls in a *region* by the patterns it matches; each region is a string language (built
with the same machinery as ``pattern``, excluding the declared names, so a declared property can
never sneak in with another schema) with the value schema its patterns or
``additionalProperties`` give.

Which properties appear is a small automaton over *presence states*:

* ``property_order="schema"``: declared properties in declaration order, each present or not,
  then the other names in any order;
* ``property_order="any"``: entries in any order, tracking which of the names that ``required``
  or ``dependentRequired`` mention have been seen (while that stays small).

Either way the state also counts properties for ``minProperties``/``maxProperties`` and knows
whether a separator is due. States reached from several places become rules, others inline.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING

from grammarkit.convert.json_schema.digits import choice, sequence
from grammarkit.convert.json_schema.json_text import quoted, spell_text
from grammarkit.convert.json_schema.model import (
    ANY,
    Child,
    Literals,
    ObjectSet,
    Pattern,
    StringSet,
    conjoin,
)
from grammarkit.convert.json_schema.reader import property_value, string_admits
from grammarkit.convert.json_schema.report import ORDER_NOT_ENFORCED, TOO_COMPLEX
from grammarkit.convert.json_schema.strings import string_expr
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.convert.json_schema.emitter import Emitter
    from grammarkit.convert.json_schema.layout import Layout

MAX_PATTERN_REGIONS = 3
"""With more distinct ``patternProperties`` than this, other names are not told apart."""

MAX_PRESENCE_STATES = 2000
"""The most presence states one object may have before its counting constraints are relaxed."""

MAX_TRACKED_ANY_ORDER = 8
"""In any property order, at most this many names are tracked to enforce ``required``."""


@dataclass(frozen=True)
class _Slot:
    """A declared property that may appear."""

    name: str
    required: bool
    entry: ast.Expr


@dataclass(frozen=True)
class _Plan:
    """What one object set needs: its declared slots, the expression of one other entry (or
    ``None``), the dependencies between names, and the property count bounds."""

    slots: tuple[_Slot, ...]
    other: ast.Expr | None
    companions: dict[str, frozenset[str]]
    forbidden: frozenset[str]
    low: int
    high: int | None


def object_expr(o: ObjectSet, emitter: Emitter, name: str, depth: int) -> ast.Expr | None:
    """The objects in ``o``, or ``None`` if there are none."""
    plan = _plan(o, emitter, name, depth)
    if plan is None:
        return None
    layout = emitter.layout_at(depth)
    builder = _any_order if emitter.property_order == "any" else _schema_order
    result = builder(plan, emitter, name, depth, layout, o.pointer)
    if result is None:
        emitter.reporter.relax(o.pointer, "the combination of required, dependentRequired, "
                               "minProperties and maxProperties here needs too many states; "
                               "only required is enforced", code=TOO_COMPLEX)
        result = builder(replace(plan, companions={}, low=0, high=None), emitter, name, depth,
                         layout, o.pointer)
    assert result is not None
    nonempty, empty_allowed = result
    alternatives = []
    if empty_allowed:
        alternatives.append(layout.empty("{}"))
    if nonempty is not None:
        alternatives.append(sequence([layout.open("{", depth), nonempty,
                                      layout.close("}", depth)]))
    return choice(alternatives) if alternatives else None


# -- what may appear ---------------------------------------------------------------------------
def _declared(o: ObjectSet) -> list[str]:
    names: dict[str, None] = {}
    for clause in o.clauses:
        names.update(dict.fromkeys(n for n, _ in clause.properties))
    names.update(dict.fromkeys(o.required))
    for source, companions in o.dependent_required:
        names[source] = None
        names.update(dict.fromkeys(companions))
    return list(names)


def _name_allowed(o: ObjectSet, name: str) -> bool:
    """Whether ``propertyNames`` allows ``name`` (when undecidable, it is allowed)."""
    if o.names is None:
        return True
    return any(string_admits(s, name) is not False for s in o.names)


def _plan(o: ObjectSet, emitter: Emitter, name: str, depth: int) -> _Plan | None:
    reader = emitter.reader
    layout = emitter.layout_at(depth)
    declared = _declared(o)
    required = set(o.required)
    slots = []
    forbidden = set()
    for prop in declared:
        value = property_value(o, prop)
        if not _name_allowed(o, prop) or reader.child_is_empty(value):
            if prop in required:
                return None
            forbidden.add(prop)
            continue
        entry = sequence([quoted(spell_text(prop)), layout.colon(),
                          emitter.value(value, depth + 1, f"{name}.{prop}")])
        slots.append(_Slot(prop, prop in required, entry))
    companions = {source: frozenset(c) for source, c in o.dependent_required}
    if o.max_properties is not None and len(required) > o.max_properties:
        return None
    return _Plan(tuple(slots), _other_entry(o, declared, emitter, name, depth, layout),
                 companions, frozenset(forbidden), o.min_properties, o.max_properties)


def _other_entry(o: ObjectSet, declared: list[str], emitter: Emitter, name: str, depth: int,
                 layout: Layout) -> ast.Expr | None:
    """One property with an undeclared name: a choice over the pattern regions."""
    patterns = list(dict.fromkeys(p for c in o.clauses for p, _ in c.patterns))
    key_sets = o.names if o.names is not None else (StringSet(),)
    exclusion = (Literals.of(declared),) if declared else ()
    if len(patterns) > MAX_PATTERN_REGIONS:
        emitter.reporter.relax(o.pointer, f"{len(patterns)} patternProperties are too many to "
                               "tell other property names apart; their values are not "
                               "checked", code=TOO_COMPLEX)
        regions = [((), (), ANY)]
    else:
        regions = []
        for size in range(len(patterns) + 1):
            for chosen in combinations(patterns, size):
                others = tuple(p for p in patterns if p not in chosen)
                regions.append((chosen, others, _region_value(o, chosen)))
    alternatives = []
    for index, (chosen, others, value) in enumerate(regions):
        if emitter.reader.child_is_empty(value):
            continue
        hint = f"{name}.additional" if not chosen else f"{name}.pattern{index}"
        keys = [string_expr(replace(keys, languages=keys.languages + chosen,
                                    excluded=keys.excluded + others + exclusion,
                                    pointer=o.pointer), emitter, f"{name}.name")
                for keys in key_sets]
        keys = [k for k in keys if not (isinstance(k, ast.CharClass) and not k.ranges)]
        if keys:
            alternatives.append(sequence([choice(keys), layout.colon(),
                                          emitter.value(value, depth + 1, hint)]))
    return choice(alternatives) if alternatives else None


def _region_value(o: ObjectSet, chosen: tuple[Pattern, ...]) -> Child:
    """The value schema of names matching exactly the ``chosen`` patterns (and no declared
    name): per clause, the schemas of its matching patterns, else its ``additional``."""
    parts: list[Child] = []
    for clause in o.clauses:
        matched = [child for pattern, child in clause.patterns if pattern in chosen]
        parts.extend(matched if matched else [clause.additional])
    return conjoin(*parts)


# -- presence automata -------------------------------------------------------------------------
_Entry = tuple[ast.Expr, Hashable]
"""One way to go on: the entry's expression and the state after it."""


def _emit_states(start: Hashable, moves: Callable[[Hashable], list[_Entry]],
                 accepting: Callable[[Hashable], bool], emitter: Emitter, name: str,
                 comma: ast.Expr, started: Callable[[Hashable], bool]
                 ) -> tuple[ast.Expr | None, bool] | None:
    """Explore the presence automaton from ``start`` and build its expression.

    Returns ``(nonempty, empty_allowed)``: the non-empty entry lists and whether the empty
    object is allowed; ``None`` if the automaton exceeds :data:`MAX_PRESENCE_STATES`.
    """
    graph: dict[Hashable, list[_Entry]] = {}
    pending = [start]
    while pending:
        state = pending.pop()
        if state in graph:
            continue
        graph[state] = moves(state)
        if len(graph) > MAX_PRESENCE_STATES:
            return None
        pending.extend(target for _, target in graph[state])
    live = {state for state in graph if accepting(state) and started(state)}
    changed = True
    while changed:
        changed = False
        for state, edges in graph.items():
            if state not in live and any(target in live for _, target in edges):
                live.add(state)
                changed = True
    incoming: dict[Hashable, int] = {}
    for state, edges in graph.items():
        for _, target in edges:
            incoming[target] = incoming.get(target, 0) + (1 if state in live else 0)
    names: dict[Hashable, str] = {}
    for state in graph:
        if state in live and state != start and (incoming.get(state, 0) > 1 or
                                                 _loops(graph, state)):
            names[state] = emitter.fresh_name(f"{name}.part")
    built: dict[Hashable, ast.Expr] = {}

    def expr(state: Hashable) -> ast.Expr:
        if state in names:
            return ast.RuleRef(names[state])
        return body(state)

    def body(state: Hashable) -> ast.Expr:
        if state in built:
            return built[state]
        alternatives: list[ast.Expr] = []
        for entry, target in graph[state]:
            if target in live:
                separator = comma if started(state) else ast.Literal("")
                alternatives.append(sequence([separator, entry, expr(target)]))
        if accepting(state) and started(state):
            alternatives.append(ast.Literal(""))
        built[state] = choice(alternatives)
        return built[state]

    for state, rule_name in names.items():
        emitter.add_rule(rule_name, body(state))
    nonempty = body(start) if start in live else None
    return nonempty, accepting(start)


def _loops(graph: dict[Hashable, list[_Entry]], state: Hashable) -> bool:
    return any(target == state for _, target in graph[state])


def _schema_order(plan: _Plan, emitter: Emitter, name: str, depth: int, layout: Layout,
                  pointer: str) -> tuple[ast.Expr | None, bool] | None:
    """Declared properties in order, each present or absent, then the other names."""
    slots = plan.slots
    index_of = {slot.name: i for i, slot in enumerate(slots)}
    targets = frozenset(c for companions in plan.companions.values() for c in companions)
    cap = plan.high if plan.high is not None else max(plan.low, 1)
    comma = layout.comma(depth)
    other_rest = _other_rest(plan, comma)

    # A state: (slot index, properties so far (capped), names still owed, targets present).
    State = tuple[int, int, frozenset[str], frozenset[str]]

    def moves(raw: Hashable) -> list[_Entry]:
        index, count, owed, present = raw  # type: ignore[misc]
        if index == len(slots):
            return []
        slot = slots[index]
        result: list[_Entry] = []
        companions = plan.companions.get(slot.name, frozenset())
        earlier = {c for c in companions if index_of.get(c, len(slots)) < index}
        feasible = not (companions & plan.forbidden) and earlier <= present and (
            plan.high is None or count < plan.high)
        if feasible:
            later = {c for c in companions if index_of.get(c, -1) > index}
            after: State = (index + 1, min(count + 1, cap), (owed - {slot.name}) | later,
                            present | ({slot.name} & targets))
            result.append((slot.entry, after))
        if not slot.required and slot.name not in owed:
            result.append((ast.Literal(""), (index + 1, count, owed, present)))
        return result

    def end(raw: Hashable) -> bool:
        index, count, owed, _ = raw  # type: ignore[misc]
        return index == len(slots) and not owed and _others_possible(plan, count, other_rest)

    start: State = (0, 0, frozenset(), frozenset())
    # Absent slots contribute an empty entry; the tail after the last slot holds the others.
    emitted = _emit_states_with_tail(start, moves, end, emitter, name, comma, plan, other_rest)
    return emitted


def _other_rest(plan: _Plan, comma: ast.Expr) -> ast.Expr | None:
    return None if plan.other is None else sequence([comma, plan.other])


def _others_possible(plan: _Plan, count: int, other_rest: ast.Expr | None) -> bool:
    low, high = _other_bounds(plan, count)
    return low <= (high if high is not None else low) and (other_rest is not None or low == 0)


def _other_bounds(plan: _Plan, count: int) -> tuple[int, int | None]:
    low = max(0, plan.low - count)
    if count == 0:
        low = max(low, 1)
    high = None if plan.high is None else plan.high - count
    return low, high


def _emit_states_with_tail(start: Hashable, moves: Callable[[Hashable], list[_Entry]],
                           end: Callable[[Hashable], bool], emitter: Emitter, name: str,
                           comma: ast.Expr, plan: _Plan, other_rest: ast.Expr | None
                           ) -> tuple[ast.Expr | None, bool] | None:
    """Schema order: slot moves carry their own separators (an absent slot moves on with an
    empty entry); the final state's tail lists the other properties."""
    graph: dict[Hashable, list[_Entry]] = {}
    pending = [start]
    while pending:
        state = pending.pop()
        if state in graph:
            continue
        graph[state] = moves(state)
        if len(graph) > MAX_PRESENCE_STATES:
            return None
        pending.extend(target for _, target in graph[state])
    live = {state for state in graph if end(state)}
    changed = True
    while changed:
        changed = False
        for state, edges in graph.items():
            if state not in live and any(target in live for _, target in edges):
                live.add(state)
                changed = True
    if start not in live:
        return None, _all_absent_ok(plan)
    incoming: dict[Hashable, int] = {}
    for state in live:
        for _, target in graph[state]:
            if target in live:
                incoming[target] = incoming.get(target, 0) + 1
    names = {state: emitter.fresh_name(f"{name}.part") for state in graph
             if state in live and state != start and incoming.get(state, 0) > 1}
    built: dict[Hashable, ast.Expr] = {}

    def expr(state: Hashable) -> ast.Expr:
        return ast.RuleRef(names[state]) if state in names else body(state)

    def count_of(state: Hashable) -> int:
        return state[1]  # type: ignore[index]

    def body(state: Hashable) -> ast.Expr:
        if state in built:
            return built[state]
        alternatives: list[ast.Expr] = []
        if end(state):
            tail = _tail(plan, count_of(state), other_rest)
            if tail is not None:
                alternatives.append(tail)
        for entry, target in graph[state]:
            if target not in live:
                continue
            if isinstance(entry, ast.Literal) and not entry.value:
                alternatives.append(expr(target))
            else:
                separator = comma if count_of(state) else ast.Literal("")
                alternatives.append(sequence([separator, entry, expr(target)]))
        built[state] = choice(alternatives)
        return built[state]

    for state, rule_name in names.items():
        emitter.add_rule(rule_name, body(state))
    empty_allowed = _all_absent_ok(plan)
    nonempty = body(start)
    if isinstance(nonempty, ast.CharClass) and not nonempty.ranges:
        return None, empty_allowed
    return nonempty, empty_allowed


def _tail(plan: _Plan, count: int, other_rest: ast.Expr | None) -> ast.Expr | None:
    """The other properties after the declared ones, given ``count`` properties so far."""
    low, high = _other_bounds(plan, count)
    if high is not None and low > high:
        return None
    if other_rest is None or plan.other is None:
        return ast.Literal("") if low == 0 else None
    if count == 0:
        rest_high = None if high is None else high - 1
        return sequence([plan.other, _bounded(other_rest, low - 1, rest_high)])
    return _bounded(other_rest, low, high)


def _bounded(item: ast.Expr, low: int, high: int | None) -> ast.Expr:
    if high == 0:
        return ast.Literal("")
    if (low, high) == (0, None):
        return ast.Repeat(item, 0, None, "*")
    if (low, high) == (0, 1):
        return ast.Repeat(item, 0, 1, "?")
    return item if low == high == 1 else ast.Repeat(item, low, high)


def _all_absent_ok(plan: _Plan) -> bool:
    return plan.low == 0 and not any(slot.required for slot in plan.slots)


def _any_order(plan: _Plan, emitter: Emitter, name: str, depth: int, layout: Layout,
               pointer: str) -> tuple[ast.Expr | None, bool] | None:
    """Entries in any order, tracking the names ``required`` and dependencies mention."""
    mentioned = {slot.name for slot in plan.slots if slot.required}
    for source, companions in plan.companions.items():
        mentioned.add(source)
        mentioned |= companions
    tracked = [slot for slot in plan.slots if slot.name in mentioned]
    if len(tracked) > MAX_TRACKED_ANY_ORDER:
        emitter.reporter.warn(pointer, ORDER_NOT_ENFORCED, f"in any property order, "
                              f"{len(tracked)} required or dependent properties are too many "
                              "to track; they are accepted but not required",
                              "use property_order='schema' to enforce them")
        tracked = []
        plan = replace(plan, slots=tuple(replace(s, required=False) for s in plan.slots),
                       companions={})
    free = [slot.entry for slot in plan.slots if slot not in tracked]
    if plan.other is not None:
        free.append(plan.other)
    free_entry = choice(free) if free else None
    cap = plan.high if plan.high is not None else max(plan.low, 1)
    required = frozenset(slot.name for slot in tracked if slot.required)
    comma = layout.comma(depth)

    def moves(raw: Hashable) -> list[_Entry]:
        seen, count = raw  # type: ignore[misc]
        if plan.high is not None and count >= plan.high:
            return []
        after = min(count + 1, cap)
        result: list[_Entry] = []
        for slot in tracked:
            if slot.name not in seen and not (plan.companions.get(slot.name, frozenset())
                                              & plan.forbidden):
                result.append((slot.entry, (seen | {slot.name}, after)))
        if free_entry is not None:
            result.append((free_entry, (seen, after)))
        return result

    def accepting(raw: Hashable) -> bool:
        seen, count = raw  # type: ignore[misc]
        owed = required | frozenset(c for s in seen for c in plan.companions.get(s, ()))
        return owed <= seen and count >= plan.low

    def started(raw: Hashable) -> bool:
        return raw[1] > 0  # type: ignore[index,no-any-return]

    return _emit_states((frozenset(), 0), moves, accepting, emitter, name, comma, started)


__all__ = ["object_expr", "ANY"]
