"""``const`` and ``enum``: a JSON value as the node allowing exactly the values equal to it.

JSON equality is by value, so the node is structural: a number becomes the one-point interval
(``1``, ``1.0`` and ``1.00`` all match ``1``), a string the literal set (any escaping), an
object the object with exactly those properties (in any order the grammar allows), an array the
array with exactly those items. ``true`` never equals ``1``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from grammarkit.convert.json_schema.algebra import union
from grammarkit.convert.json_schema.membership import string_admits
from grammarkit.convert.json_schema.model import (
    NEVER,
    ArraySet,
    Clause,
    Literals,
    Node,
    NumberSet,
    ObjectSet,
    StringSet,
    inline,
)
from grammarkit.convert.json_schema.numbers import Bound, BoundTooLarge, check_digits


def value_node(value: Any) -> Node:
    """The node allowing exactly the values JSON-equal to ``value`` (JSON data with
    :class:`~decimal.Decimal` numbers, as :func:`.loading.load_schema` returns)."""
    if value is None:
        return Node(null=True)
    if isinstance(value, bool):
        return Node(booleans=frozenset({value}))
    if isinstance(value, Decimal):
        if too_wide(value):
            return Node(numbers=(NumberSet(),), exact=False)
        return Node(numbers=(NumberSet(Bound(value), Bound(value)),))
    if isinstance(value, str):
        return Node(strings=(StringSet(languages=(Literals((value,)),)),))
    if isinstance(value, list):
        items = tuple(inline(value_node(item)) for item in value)
        return Node(arrays=(ArraySet(items, NEVER, len(items), len(items)),))
    properties = tuple((name, inline(value_node(item))) for name, item in value.items())
    clause = Clause(properties, (), NEVER)
    return Node(objects=(ObjectSet((clause,), tuple(value)),))


def too_wide(value: Decimal) -> bool:
    """Whether the plain notation of ``value`` needs more than
    :data:`~.numbers.MAX_DIGITS` digits (``1e999999999`` has a billion)."""
    try:
        check_digits(value)
    except BoundTooLarge:
        return True
    return False


def first_too_wide(value: Any) -> Decimal | None:
    """The first number in the JSON data ``value`` that :func:`too_wide` refuses."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Decimal) and too_wide(item):
            return item
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def values_node(values: list[Any]) -> Node:
    """The node allowing the values equal to any of ``values`` (strings share one set)."""
    strings = [v for v in values if isinstance(v, str)]
    others = [value_node(v) for v in values if not isinstance(v, str)]
    if strings:
        others.append(Node(strings=(StringSet(languages=(Literals.of(strings),)),)))
    return union(others)


MAX_FINITE_VALUES = 64
"""The most values :func:`finite_values` lists."""


def finite_values(node: Node) -> list[Any] | None:
    """The values ``node`` allows, when they are a few scalars (``null``, booleans, constant
    or small integer-range numbers, literal strings); else ``None``."""
    if node.arrays or node.objects or not node.exact:
        return None
    values: list[Any] = [None] if node.null else []
    values.extend(sorted(node.booleans))
    for numbers in node.numbers:
        found = _numbers_in(numbers)
        if found is None:
            return None
        values.extend(found)
    for strings in node.strings:
        literal_sets = [set(lang.values) for lang in strings.languages if isinstance(lang, Literals)]
        if not literal_sets:
            return None
        for text in sorted(set.intersection(*literal_sets)):
            verdict = string_admits(strings, text)
            if verdict is None:
                return None
            if verdict:
                values.append(text)
    unique: list[Any] = []
    for value in values:
        if not any(json_equal(value, other) for other in unique):
            unique.append(value)
    return unique if len(unique) <= MAX_FINITE_VALUES else None


def _numbers_in(s: NumberSet) -> list[Decimal] | None:
    if s.low is None or s.high is None or s.not_multiple_of or s.integer is False:
        return None
    if s.low.value == s.high.value and s.integer is None and s.multiple_of is None:
        return [s.low.value] if not (s.low.exclusive or s.high.exclusive) else []
    if s.integer is not True or s.high.value - s.low.value > MAX_FINITE_VALUES:
        return None
    first = int(s.low.value.to_integral_value(rounding="ROUND_CEILING"))
    last = int(s.high.value.to_integral_value(rounding="ROUND_FLOOR"))
    return [Decimal(n) for n in range(first, last + 1)
            if (not s.low.exclusive or n > s.low.value)
            and (not s.high.exclusive or n < s.high.value)
            and (s.multiple_of is None or Decimal(n) % s.multiple_of == 0)]


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality of two scalars: numbers (``Decimal``) by value, ``true`` is not ``1``."""
    return type(a) is type(b) and a == b
