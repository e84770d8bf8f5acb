"""Object sets to grammar: declared properties, the other names, and which may appear when.

*Declared* names are those in ``properties``, ``required`` and ``dependentRequired``. Every other
name falls in a *region* by the patterns it matches; each region is a string language (built
like ``pattern``, and excluding the declared names, so a declared property can never slip in
under another schema) with the value schema its patterns or ``additionalProperties`` give.

Which properties appear is decided by a small *presence automaton*:

* ``property_order="schema"``: declared properties in declaration order, each present or not,
  then the other names in any order;
* ``property_order="any"``: entries in any order, tracking the names ``required`` and
  ``dependentRequired`` mention (while they are few; beyond that a warning says ``required``
  is not enforced).

Its states also count properties (``minProperties``/``maxProperties``) and know whether a
separator is due. States reached from several places become rules; the others are inlined.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Generic, NamedTuple, TypeVar

from grammarkit.convert.json_schema.absorption import declared_names
from grammarkit.convert.json_schema.automata import TooComplex
from grammarkit.convert.json_schema.digits import choice, prefixed, repeat, sequence
from grammarkit.convert.json_schema.membership import property_value, string_admits
from grammarkit.convert.json_schema.model import (
    ANY,
    Child,
    Literals,
    ObjectSet,
    Pattern,
    StringSet,
    conjoin,
)
from grammarkit.convert.json_schema.report import ORDER_NOT_ENFORCED, TOO_COMPLEX
from grammarkit.convert.json_schema.strings import string_expr
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.convert.json_schema.emitter import Emitter
    from grammarkit.convert.json_schema.layout import Layout

MAX_PATTERN_REGIONS = 3
"""With more distinct ``patternProperties`` than this, other names are not told apart."""

MAX_PRESENCE_STATES = 2000
"""The most presence states one object may have before its counting constraints are relaxed,
beyond :data:`PRESENCE_STATES_PER_PROPERTY` per declared property (an object with thousands of
optional properties needs two states per property)."""

PRESENCE_STATES_PER_PROPERTY = 4
"""Presence states allowed per declared property on top of :data:`MAX_PRESENCE_STATES`."""

SMALL_ENTRY_NODES = 8
"""Entries with at most this many expression nodes are repeated rather than given a rule."""

MAX_INLINE_STATES = 32
"""A presence state whose expression would inline more states than this gets a rule of its own
(so a chain of thousands of required properties is many short rules, built in linear time)."""

MAX_TRACKED_ANY_ORDER = 6
"""In any property order, at most this many names are tracked to enforce ``required``."""

_NOTHING = ast.CharClass(())


@dataclass(frozen=True)
class _Slot:
    """A declared property that may appear."""

    name: str
    required: bool
    entry: ast.Expr


@dataclass(frozen=True)
class _Plan:
    """What one object set needs: its declared slots, one undeclared entry (``None`` if no
    other name may appear), each name's required companions, the names that can't appear, and
    the property count bounds."""

    slots: tuple[_Slot, ...]
    other: ast.Expr | None
    companions: dict[str, frozenset[str]]
    forbidden: frozenset[str]
    low: int
    high: int | None

    def capped(self, count: int) -> int:
        """``count`` saturated where larger counts behave alike."""
        return min(count, self.high if self.high is not None else max(self.low, 1))

    def others(self, count: int) -> tuple[int, int | None]:
        """How many undeclared properties may follow ``count`` properties (at least one if
        there were none: the empty object is handled on its own)."""
        low = max(0, self.low - count, 1 if count == 0 else 0)
        return low, None if self.high is None else self.high - count


def object_expr(o: ObjectSet, emitter: Emitter, name: str, depth: int) -> ast.Expr | None:
    """The objects in ``o``, or ``None`` if there are none."""
    plan = _plan(o, emitter, name, depth)
    if plan is None:
        return None
    layout = emitter.layout_at(depth)
    build = _any_order if emitter.property_order == "any" else _schema_order
    try:
        nonempty, empty_allowed = build(plan, emitter, name, layout.comma(depth), o.pointer)
    except TooComplex:
        emitter.reporter.relax(o.pointer, "the combination of required, dependentRequired, "
                               "minProperties and maxProperties here needs too many states; "
                               "only required is enforced", code=TOO_COMPLEX)
        nonempty, empty_allowed = build(replace(plan, companions={}, low=0, high=None), emitter,
                                        name, layout.comma(depth), o.pointer)
    alternatives = [layout.empty("{}")] if empty_allowed else []
    if nonempty is not None:
        alternatives.append(sequence([layout.open("{", depth), nonempty,
                                      layout.close("}", depth)]))
    return choice(alternatives) if alternatives else None


# -- what may appear ---------------------------------------------------------------------------
def _name_allowed(o: ObjectSet, name: str) -> bool:
    """Whether ``propertyNames`` allows ``name`` (when undecidable, it is allowed)."""
    return o.names is None or any(string_admits(s, name) is not False for s in o.names)


def _plan(o: ObjectSet, emitter: Emitter, name: str, depth: int) -> _Plan | None:
    layout = emitter.layout_at(depth)
    declared = declared_names(o)
    required = set(o.required)
    if o.max_properties is not None and len(required) > o.max_properties:
        return None
    slots = []
    forbidden = set()
    for prop in declared:
        value = property_value(o, prop)
        if not _name_allowed(o, prop) or emitter.reader.child_is_empty(value):
            if prop in required:
                return None
            forbidden.add(prop)
            continue
        entry = sequence([emitter.key(prop), layout.colon(),
                          emitter.value(value, depth + 1, f"{name}.{prop}")])
        slots.append(_Slot(prop, prop in required, entry))
    companions = {source: frozenset(c) for source, c in o.dependent_required}
    other = _other_entry(o, declared, emitter, name, depth, layout)
    return _Plan(tuple(slots), other, companions, frozenset(forbidden), o.min_properties,
                 o.max_properties)


def _other_entry(o: ObjectSet, declared: list[str], emitter: Emitter, name: str, depth: int,
                 layout: Layout) -> ast.Expr | None:
    """One property with an undeclared name: a choice over the pattern regions."""
    patterns = list(dict.fromkeys(p for c in o.clauses for p, _ in c.patterns))
    key_sets = o.names if o.names is not None else (StringSet(),)
    exclusion = (Literals.of(declared),) if declared else ()
    regions: list[tuple[tuple[Pattern, ...], tuple[Pattern, ...], Child]] = []
    if len(patterns) > MAX_PATTERN_REGIONS:
        emitter.reporter.relax(o.pointer, f"{len(patterns)} patternProperties are too many to "
                               "tell other property names apart; their values are not "
                               "checked", code=TOO_COMPLEX)
        regions.append(((), (), ANY))
    else:
        for size in range(len(patterns) + 1):
            for chosen in combinations(patterns, size):
                others = tuple(p for p in patterns if p not in chosen)
                regions.append((chosen, others, _region_value(o, chosen)))
    alternatives = []
    for chosen, others, value in regions:
        if emitter.reader.child_is_empty(value):
            continue
        keys = [string_expr(replace(keys, languages=keys.languages + chosen,
                                    excluded=keys.excluded + others + exclusion,
                                    pointer=o.pointer), emitter, f"{name}.key")
                for keys in key_sets]
        keys = [key for key in keys if key != _NOTHING]
        if keys:
            hint = f"{name}.pattern" if chosen else f"{name}.additional"
            alternatives.append(sequence([choice(keys), layout.colon(),
                                          emitter.value(value, depth + 1, hint)]))
    # Regions whose patterns were relaxed away can come out alike.
    return choice(list(dict.fromkeys(alternatives))) if alternatives else None


def _region_value(o: ObjectSet, chosen: tuple[Pattern, ...]) -> Child:
    """The value schema of undeclared names matching exactly the ``chosen`` patterns: per
    clause, the schemas of its matching patterns, else its ``additional``."""
    parts: list[Child] = []
    for clause in o.clauses:
        matched = [child for pattern, child in clause.patterns if pattern in chosen]
        parts.extend(matched if matched else [clause.additional])
    return conjoin(*parts)


# -- presence automata -------------------------------------------------------------------------
S = TypeVar("S", bound=Hashable)


@dataclass(frozen=True)
class _Automaton(Generic[S]):
    """Which entries may come next in each state.

    ``moves(state)`` lists ``(entry, next state)``, ``entry=None`` moving on without writing
    anything; ``tail(state)`` is what may end the entry list there (``None``: it can't end
    there); ``started(state)`` says whether an entry was written before (a separator is due);
    ``label(state)`` names the rule of a state that needs one.
    """

    start: S
    moves: Callable[[S], list[tuple[ast.Expr | None, S]]]
    tail: Callable[[S], ast.Expr | None]
    started: Callable[[S], bool]
    label: Callable[[S], str]
    properties: int
    entry_labels: dict[int, str]


def _build(automaton: _Automaton[S], emitter: Emitter, name: str,
           comma: ast.Expr) -> ast.Expr | None:
    """The non-empty entry lists the automaton allows (``None`` if there are none).

    Raises
    ------
    TooComplex
        If the automaton has more than :data:`MAX_PRESENCE_STATES` states.
    """
    graph: dict[S, list[tuple[ast.Expr | None, S]]] = {}
    pending = [automaton.start]
    limit = MAX_PRESENCE_STATES + PRESENCE_STATES_PER_PROPERTY * automaton.properties
    while pending:
        state = pending.pop()
        if state not in graph:
            graph[state] = automaton.moves(state)
            if len(graph) > limit:
                raise TooComplex(f"more than {limit} presence states")
            pending.extend(target for _, target in graph[state])
    tails = {state: automaton.tail(state) for state in graph}
    sources: dict[S, list[S]] = {}
    for state, moves in graph.items():
        for _, target in moves:
            sources.setdefault(target, []).append(state)
    live = {state for state, tail in tails.items() if tail is not None}
    frontier = list(live)
    while frontier:
        for source in sources.get(frontier.pop(), ()):
            if source not in live:
                live.add(source)
                frontier.append(source)
    if automaton.start not in live:
        return None
    incoming: dict[S, int] = {}
    for state in live:
        for _, target in graph[state]:
            if target in live:
                incoming[target] = incoming.get(target, 0) + 1
    # A state that loops on itself is named before its body refers to it; the others that
    # need a rule get one once their body is known, shared with any identical state of any
    # object (objects split by `if` or `oneOf` repeat the same trailing properties).
    names = {state: emitter.fresh_name(f"{name}.{automaton.label(state)}") for state in graph
             if state in live and any(t == state for _, t in graph[state])}
    new_rules: list[tuple[str, ast.Expr]] = []
    built: dict[S, ast.Expr] = {}
    weights: dict[S, int] = {}

    def reference(state: S) -> ast.Expr:
        return ast.RuleRef(names[state]) if state in names else built[state]

    # An entry written in several states (a property after a present or an absent optional
    # one) gets a rule of its own, so its name's spellings are written once.
    # In the graph's order, not the set's: helper names must not depend on string hashing.
    live_states = [state for state in graph if state in live]
    uses: dict[int, int] = {}
    for state in live_states:
        for entry, target in graph[state]:
            if entry is not None and target in live:
                uses[id(entry)] = uses.get(id(entry), 0) + 1
    shared: dict[int, ast.Expr] = {}
    for state in live_states:
        for entry, _ in graph[state]:
            if entry is not None and uses.get(id(entry), 0) > 1 and id(entry) not in shared:
                label = automaton.entry_labels.get(id(entry), "other")
                shared[id(entry)] = entry if _is_small(entry) else emitter.helper(
                    f"{name}.{label}.entry", entry)
    # Bodies in post-order (no recursion: objects may have thousands of properties). Apart
    # from self-loops, whose states are named, the automaton is acyclic.
    for state in _post_order(automaton.start, graph, live):
        alternatives = [] if tails[state] is None else [tails[state]]
        weight = 1
        # An entry that may be skipped towards the same state, `, e T | T`, is `(, e)? T`.
        skipped_to = {target for entry, target in graph[state] if entry is None}
        for entry, target in graph[state]:
            if target not in live:
                continue
            inline = target not in names
            if inline:
                weight += weights[target]
            if entry is None:
                if any(e is not None and t == target for e, t in graph[state]):
                    continue
                found = reference(target)
                alternatives.extend(found.alternatives if inline and isinstance(
                    found, ast.Choice) else (found,))
            else:
                separator = comma if automaton.started(state) else ast.Literal("")
                written = sequence([separator, shared.get(id(entry), entry)])
                if target in skipped_to:
                    written = ast.Repeat(written, 0, 1, "?")
                alternatives.append(prefixed([written], reference(target)))
        built[state] = choice([a for a in alternatives if a is not None])
        weights[state] = weight
        if state in names:
            new_rules.append((names[state], built[state]))
        elif incoming.get(state, 0) > 1 or weight > MAX_INLINE_STATES:
            rule, is_new = emitter.shared_body(f"{name}.{automaton.label(state)}",
                                               built[state])
            names[state] = rule.name
            if is_new:
                new_rules.append((rule.name, built[state]))
    # In the order the states were found, not built: successors come after their sources.
    order = {state: index for index, state in enumerate(graph)}
    by_name = {rule_name: state for state, rule_name in names.items()}
    new_rules.sort(key=lambda rule: order[by_name[rule[0]]])
    for rule_name, body in new_rules:
        emitter.add_rule(rule_name, body)
    return reference(automaton.start)


def _is_small(expr: ast.Expr) -> bool:
    """Whether ``expr`` is cheaper to repeat than to refer to (at most a few nodes)."""
    return sum(1 for _ in zip(ast.walk(expr), range(SMALL_ENTRY_NODES + 1), strict=False)) <= (
        SMALL_ENTRY_NODES)


def _post_order(start: S, graph: dict[S, list[tuple[ast.Expr | None, S]]],
                live: set[S]) -> list[S]:
    """The live states reachable from ``start``, each after its successors (self-loops and
    back edges ignored)."""
    order: list[S] = []
    done: set[S] = set()
    stack: list[tuple[S, int]] = [(start, 0)]
    on_stack = {start}
    while stack:
        state, index = stack.pop()
        moves = graph[state]
        while index < len(moves) and (moves[index][1] not in live or moves[index][1] in done
                                      or moves[index][1] in on_stack):
            index += 1
        if index < len(moves):
            stack.append((state, index + 1))
            target = moves[index][1]
            stack.append((target, 0))
            on_stack.add(target)
            continue
        on_stack.discard(state)
        done.add(state)
        order.append(state)
    return order


class _InOrder(NamedTuple):
    """Schema order: the next slot, properties written so far, names owed, dependency targets
    present."""

    slot: int
    written: int
    owed: frozenset[str]
    present: frozenset[str]


def _schema_order(plan: _Plan, emitter: Emitter, name: str, comma: ast.Expr,
                  pointer: str) -> tuple[ast.Expr | None, bool]:
    """Declared properties in order, each present or absent, then the other names: the
    non-empty entry lists and whether the empty object is allowed."""
    slots = plan.slots
    index_of = {slot.name: i for i, slot in enumerate(slots)}
    targets = frozenset(c for companions in plan.companions.values() for c in companions)
    other_rest = None if plan.other is None else sequence([comma, plan.other])

    def moves(state: _InOrder) -> list[tuple[ast.Expr | None, _InOrder]]:
        if state.slot == len(slots):
            return []
        slot = slots[state.slot]
        result: list[tuple[ast.Expr | None, _InOrder]] = []
        companions = plan.companions.get(slot.name, frozenset())
        earlier = {c for c in companions if index_of.get(c, len(slots)) < state.slot}
        if (not companions & plan.forbidden and earlier <= state.present
                and (plan.high is None or state.written < plan.high)):
            later = {c for c in companions if index_of.get(c, -1) > state.slot}
            result.append((slot.entry, _InOrder(
                state.slot + 1, plan.capped(state.written + 1),
                (state.owed - {slot.name}) | later, state.present | ({slot.name} & targets))))
        if not slot.required and slot.name not in state.owed:
            result.append((None, state._replace(slot=state.slot + 1)))
        return result

    def tail(state: _InOrder) -> ast.Expr | None:
        if state.slot < len(slots) or state.owed:
            return None
        low, high = plan.others(state.written)
        if high is not None and low > high:
            return None
        if other_rest is None or plan.other is None:
            return ast.Literal("") if low == 0 else None
        if state.written == 0:
            return sequence([plan.other, repeat(other_rest, low - 1,
                                                  None if high is None else high - 1)])
        return repeat(other_rest, low, high)

    def label(state: _InOrder) -> str:
        return f"after-{slots[state.slot - 1].name}" if state.slot else "entries"

    automaton = _Automaton(_InOrder(0, 0, frozenset(), frozenset()), moves, tail,
                           lambda state: state.written > 0, label, len(slots),
                           {id(slot.entry): slot.name for slot in slots})
    empty = plan.low == 0 and not any(slot.required for slot in slots)
    return _build(automaton, emitter, name, comma), empty


class _AnyOrder(NamedTuple):
    """Any order: the tracked names seen and the properties written so far."""

    seen: frozenset[str]
    written: int


def _any_order(plan: _Plan, emitter: Emitter, name: str, comma: ast.Expr,
               pointer: str) -> tuple[ast.Expr | None, bool]:
    """Entries in any order, tracking the names ``required`` and dependencies mention: the
    non-empty entry lists and whether the empty object is allowed."""
    mentioned = {slot.name for slot in plan.slots if slot.required}
    for source, companions in plan.companions.items():
        mentioned |= {source} | companions
    tracked = [slot for slot in plan.slots if slot.name in mentioned]
    if len(tracked) > MAX_TRACKED_ANY_ORDER:
        emitter.reporter.warn(pointer, ORDER_NOT_ENFORCED, f"in any property order, "
                              f"{len(tracked)} required or dependent properties are too many "
                              "to track; they are allowed but not required",
                              "use property_order='schema' to enforce them")
        tracked = []
        plan = replace(plan, slots=tuple(replace(s, required=False) for s in plan.slots),
                       companions={})
    free = [slot.entry for slot in plan.slots if slot not in tracked]
    if plan.other is not None:
        free.append(plan.other)
    free_entry = choice(free) if free else None
    if len(tracked) > 1:
        # Every state repeats the entries: give each its own rule.
        tracked = [replace(slot, entry=emitter.helper(f"{name}.{slot.name}.entry", slot.entry))
                   for slot in tracked]
        if free_entry is not None:
            free_entry = emitter.helper(f"{name}.other.entry", free_entry)
    required = frozenset(slot.name for slot in tracked if slot.required)

    def moves(state: _AnyOrder) -> list[tuple[ast.Expr | None, _AnyOrder]]:
        if plan.high is not None and state.written >= plan.high:
            return []
        count = plan.capped(state.written + 1)
        result: list[tuple[ast.Expr | None, _AnyOrder]] = [
            (slot.entry, _AnyOrder(state.seen | {slot.name}, count))
            for slot in tracked
            if slot.name not in state.seen
            and not plan.companions.get(slot.name, frozenset()) & plan.forbidden
        ]
        if free_entry is not None:
            result.append((free_entry, state._replace(written=count)))
        return result

    def complete(state: _AnyOrder) -> bool:
        owed = required.union(*(plan.companions.get(s, frozenset()) for s in state.seen))
        return owed <= state.seen and state.written >= plan.low

    def tail(state: _AnyOrder) -> ast.Expr | None:
        return ast.Literal("") if state.written > 0 and complete(state) else None

    start = _AnyOrder(frozenset(), 0)
    automaton = _Automaton(start, moves, tail, lambda state: state.written > 0,
                           lambda state: "entries", len(plan.slots), {})
    return _build(automaton, emitter, name, comma), complete(start)
