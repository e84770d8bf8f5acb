"""Intersection, union and complement of normalized schemas, type by type.

``allOf`` is :func:`intersect`, ``anyOf`` is :func:`union`; ``not``, ``if``/``else``, ``oneOf``
and ``maxContains`` need :func:`negate`, which returns ``None`` where the complement has no
representation here (the caller then relaxes the keyword). Sub-schemas are never read: children
combine symbolically (:func:`~grammarkit.convert.json_schema.model.conjoin`, :class:`Not`), so
these functions are cheap and terminate on recursive schemas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import TypeVar

from grammarkit.convert.json_schema.model import (
    ANY,
    ANYTHING,
    NEVER,
    ArraySet,
    Child,
    Clause,
    Contains,
    Node,
    Not,
    NumberSet,
    ObjectSet,
    StringSet,
    conjoin,
)
from grammarkit.convert.json_schema.numbers import Bound

MAX_ALTERNATIVES = 1_000_000
"""The most sets one type's union may have after intersecting it with one set (linear work:
an ``enum`` of many numbers meeting ``type: integer``)."""

MAX_PRODUCT = 1000
"""The most pairs an intersection of two unions (of several sets each) may combine."""

T = TypeVar("T")


class TooManyAlternatives(Exception):
    """Distributing an intersection over unions would exceed :data:`MAX_ALTERNATIVES`."""


# -- intersection ------------------------------------------------------------------------------
def intersect(a: Node, b: Node) -> Node:
    """The values both nodes allow.

    Raises
    ------
    TooManyAlternatives
        If a type's union would grow beyond :data:`MAX_ALTERNATIVES` sets.
    """
    for first, second in ((a, b), (b, a)):
        if first == ANYTHING:
            return second if first.exact or not second.exact else replace(second, exact=False)
    return Node(
        a.null and b.null,
        a.booleans & b.booleans,
        _pairwise(a.numbers, b.numbers, intersect_numbers),
        _pairwise(a.strings, b.strings, intersect_strings),
        _pairwise(a.arrays, b.arrays, intersect_arrays),
        _pairwise(a.objects, b.objects, intersect_objects),
        a.exact and b.exact,
    )


def _pairwise(
    left: tuple[T, ...], right: tuple[T, ...], meet: Callable[[T, T], T | None]
) -> tuple[T, ...]:
    size = len(left) * len(right)
    if size > MAX_ALTERNATIVES or (size > MAX_PRODUCT and min(len(left), len(right)) > 1):
        raise TooManyAlternatives(f"{len(left)} x {len(right)} alternatives")
    return _unique(result for x in left for y in right if (result := meet(x, y)) is not None)


def _unique(items: Iterable[T]) -> tuple[T, ...]:
    return tuple(dict.fromkeys(items))


def intersect_numbers(a: NumberSet, b: NumberSet) -> NumberSet | None:
    """``a & b``, or ``None`` if visibly empty."""
    low = _tighter(a.low, b.low, lower=True)
    high = _tighter(a.high, b.high, lower=False)
    if low is not None and high is not None and (
        low.value > high.value or (low.value == high.value and (low.exclusive or high.exclusive))
    ):
        return None
    if a.integer is not None and b.integer is not None and a.integer != b.integer:
        return None
    integer = a.integer if a.integer is not None else b.integer
    multiple = a.multiple_of
    if b.multiple_of is not None:
        multiple = b.multiple_of if multiple is None else _decimal_lcm(multiple, b.multiple_of)
    excluded = _unique(a.not_multiple_of + b.not_multiple_of)
    if multiple is not None and any(_divides(step, multiple) for step in excluded):
        return None
    return NumberSet(low, high, integer, multiple, excluded, a.pointer or b.pointer)


def _tighter(a: Bound | None, b: Bound | None, lower: bool) -> Bound | None:
    if a is None:
        return b
    if b is None:
        return a
    if a.value != b.value:
        return (a if a.value > b.value else b) if lower else (a if a.value < b.value else b)
    return Bound(a.value, a.exclusive or b.exclusive)


def _decimal_lcm(a: Decimal, b: Decimal) -> Decimal:
    """The least common multiple of two positive decimals."""
    scale = max(-_exponent(a), -_exponent(b), 0)
    x, y = int(a.scaleb(scale)), int(b.scaleb(scale))
    return Decimal(math.lcm(x, y)).scaleb(-scale)


def _exponent(value: Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    assert isinstance(exponent, int)
    return exponent


def _divides(step: Decimal, value: Decimal) -> bool:
    """Whether ``value`` is a whole multiple of ``step``."""
    return value % step == 0


def intersect_strings(a: StringSet, b: StringSet) -> StringSet | None:
    """``a & b``, or ``None`` if visibly empty."""
    low = max(a.min_length, b.min_length)
    high = b.max_length if a.max_length is None else (
        a.max_length if b.max_length is None else min(a.max_length, b.max_length))
    if high is not None and low > high:
        return None
    return StringSet(low, high, _unique(a.languages + b.languages),
                     _unique(a.excluded + b.excluded), a.pointer or b.pointer)


def intersect_arrays(a: ArraySet, b: ArraySet) -> ArraySet | None:
    """``a & b``, or ``None`` if visibly empty."""
    width = max(len(a.prefix), len(b.prefix))
    prefix = tuple(conjoin(a.item(i), b.item(i)) for i in range(width))
    low = max(a.min_items, b.min_items)
    high = _smaller(a.max_items, b.max_items)
    if high is not None and low > high:
        return None
    return ArraySet(prefix, conjoin(a.items, b.items), low, high,
                    _unique(a.contains + b.contains), a.unique or b.unique,
                    a.pointer or b.pointer)


def _smaller(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def intersect_objects(a: ObjectSet, b: ObjectSet) -> ObjectSet | None:
    """``a & b``, or ``None`` if visibly empty."""
    low = max(a.min_properties, b.min_properties)
    high = _smaller(a.max_properties, b.max_properties)
    if high is not None and low > high:
        return None
    names = a.names if b.names is None else b.names if a.names is None else _pairwise(
        a.names, b.names, intersect_strings)
    return ObjectSet(
        _unique(a.clauses + b.clauses),
        _unique(a.required + b.required),
        low,
        high,
        names,
        _unique(a.dependent_required + b.dependent_required),
        a.pointer or b.pointer,
    )


# -- union -------------------------------------------------------------------------------------
def union(nodes: Sequence[Node]) -> Node:
    """The values any of the nodes allows."""
    return Node(
        any(node.null for node in nodes),
        frozenset().union(*(node.booleans for node in nodes)),
        _unique(s for node in nodes for s in node.numbers),
        _unique(s for node in nodes for s in node.strings),
        _unique(s for node in nodes for s in node.arrays),
        _unique(s for node in nodes for s in node.objects),
        all(node.exact for node in nodes),
    )


# -- complement --------------------------------------------------------------------------------
def negate(node: Node, pointer: str, keyword: str) -> Node | None:
    """The values ``node`` does not allow, or ``None`` if that can't be represented.

    ``pointer`` and ``keyword`` name the keyword asking for the complement; they label the
    complements of children this creates.

    Raises
    ------
    TooManyAlternatives
        If the complement's unions grow beyond :data:`MAX_ALTERNATIVES` sets.
    """
    if not node.exact:
        return None

    def child_not(child: Child) -> Child:
        return (Not(child, pointer, keyword),)

    numbers = _complement(node.numbers, NumberSet(), _negate_number, intersect_numbers)
    strings = _complement(node.strings, StringSet(), _negate_string, intersect_strings)
    arrays = _complement(node.arrays, ArraySet(), lambda s: _negate_array(s, child_not),
                         intersect_arrays)
    objects = _complement(node.objects, ObjectSet(), lambda s: _negate_object(s, child_not),
                          intersect_objects)
    if arrays is None or objects is None:
        return None
    assert numbers is not None and strings is not None
    return Node(not node.null, frozenset({False, True}) - node.booleans, numbers, strings,
                arrays, objects)


def _complement(
    sets: tuple[T, ...],
    everything: T,
    complement: Callable[[T], tuple[T, ...] | None],
    meet: Callable[[T, T], T | None],
) -> tuple[T, ...] | None:
    """The complement of a union: the intersection of the members' complements."""
    result: tuple[T, ...] = (everything,)
    for member in sets:
        member_complement = complement(member)
        if member_complement is None:
            return None
        result = _pairwise(result, member_complement, meet)
    return result


def _negate_number(s: NumberSet) -> tuple[NumberSet, ...]:
    parts = []
    if s.low is not None:
        parts.append(NumberSet(high=Bound(s.low.value, not s.low.exclusive)))
    if s.high is not None:
        parts.append(NumberSet(low=Bound(s.high.value, not s.high.exclusive)))
    if s.integer is not None:
        parts.append(NumberSet(integer=not s.integer))
    if s.multiple_of is not None:
        parts.append(NumberSet(not_multiple_of=(s.multiple_of,)))
    parts.extend(NumberSet(multiple_of=step) for step in s.not_multiple_of)
    return tuple(parts)


def _negate_string(s: StringSet) -> tuple[StringSet, ...]:
    parts = []
    if s.min_length > 0:
        parts.append(StringSet(max_length=s.min_length - 1))
    if s.max_length is not None:
        parts.append(StringSet(min_length=s.max_length + 1))
    parts.extend(StringSet(excluded=(language,)) for language in s.languages)
    parts.extend(StringSet(languages=(language,)) for language in s.excluded)
    return tuple(parts)


def _negate_array(s: ArraySet, child_not: Callable[[Child], Child]) -> tuple[ArraySet, ...] | None:
    if s.contains or s.unique:
        return None
    parts = []
    if s.min_items > 0:
        parts.append(ArraySet(max_items=s.min_items - 1))
    if s.max_items is not None:
        parts.append(ArraySet(min_items=s.max_items + 1))
    for index, child in enumerate(s.prefix):
        if child != ANY:
            parts.append(ArraySet(prefix=(ANY,) * index + (child_not(child),),
                                  min_items=index + 1))
    if s.items != ANY:
        parts.append(ArraySet(contains=(Contains(child_not(s.items), start=len(s.prefix)),)))
    return tuple(parts)


def _negate_object(
    s: ObjectSet, child_not: Callable[[Child], Child]
) -> tuple[ObjectSet, ...] | None:
    if s.names is not None or any(c.patterns or c.additional != ANY for c in s.clauses):
        return None
    # A required name with one property schema X: "absent, or present and not in X" is one
    # set, "if present, not in X" (two alternatives would multiply in every oneOf branch).
    values: dict[str, list[Child]] = {}
    for clause in s.clauses:
        for name, child in clause.properties:
            if child != ANY:
                values.setdefault(name, []).append(child)
    merged = {name for name in s.required if len(values.get(name, ())) == 1}
    parts = [ObjectSet(clauses=(Clause(properties=((name, child_not(values[name][0])
                                                    if name in merged else NEVER),)),))
             for name in s.required]
    if s.min_properties > 0:
        parts.append(ObjectSet(max_properties=s.min_properties - 1))
    if s.max_properties is not None:
        parts.append(ObjectSet(min_properties=s.max_properties + 1))
    for clause in s.clauses:
        for name, child in clause.properties:
            if child != ANY and name not in merged:
                parts.append(ObjectSet(
                    clauses=(Clause(properties=((name, child_not(child)),)),), required=(name,)))
    for name, companions in s.dependent_required:
        for companion in companions:
            parts.append(ObjectSet(clauses=(Clause(properties=((companion, NEVER),)),),
                                   required=(name,)))
    return tuple(parts)
