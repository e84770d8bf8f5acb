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
from grammarkit.convert.json_schema.numbers import Bound


def value_node(value: Any) -> Node:
    """The node allowing exactly the values JSON-equal to ``value`` (JSON data with
    :class:`~decimal.Decimal` numbers, as :func:`.loading.load_schema` returns)."""
    if value is None:
        return Node(null=True)
    if isinstance(value, bool):
        return Node(booleans=frozenset({value}))
    if isinstance(value, Decimal):
        return Node(numbers=(NumberSet(Bound(value), Bound(value)),))
    if isinstance(value, str):
        return Node(strings=(StringSet(languages=(Literals((value,)),)),))
    if isinstance(value, list):
        items = tuple(inline(value_node(item)) for item in value)
        return Node(arrays=(ArraySet(items, NEVER, len(items), len(items)),))
    properties = tuple((name, inline(value_node(item))) for name, item in value.items())
    clause = Clause(properties, (), NEVER)
    return Node(objects=(ObjectSet((clause,), tuple(value)),))


def values_node(values: list[Any]) -> Node:
    """The node allowing the values equal to any of ``values`` (strings share one set)."""
    strings = [v for v in values if isinstance(v, str)]
    others = [value_node(v) for v in values if not isinstance(v, str)]
    if strings:
        others.append(Node(strings=(StringSet(languages=(Literals.of(strings),)),)))
    return union(others)
