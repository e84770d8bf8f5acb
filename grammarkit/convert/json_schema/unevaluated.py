"""``unevaluatedProperties`` and ``unevaluatedItems``: which members the schema evaluates.

Which properties or items count as *evaluated* depends, in general, on which subschemas matched
the instance. When the schema only combines subschemas unconditionally (``allOf``, ``$ref``), the
evaluated set is static: the names and patterns of every ``properties`` and
``patternProperties`` in place, and the longest ``prefixItems``. Then ``unevaluated*`` becomes an
ordinary clause, enforced exactly; otherwise :class:`Undecidable` is raised.
"""

from __future__ import annotations

from typing import Any

from grammarkit.convert.json_schema.model import ANY, Child, Clause, Pattern, Ref
from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import join

_CONDITIONAL = ("anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
                "dependencies", "$dynamicRef", "$recursiveRef")


class Undecidable(Exception):
    """The evaluated members depend on which subschemas match."""


def _in_place(document: Document, pointer: str) -> list[dict[str, Any]]:
    """The schema at ``pointer`` and those applied in place with it (``allOf`` members and
    ``$ref`` targets, transitively)."""
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    stack = [pointer]
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        schema = document.at(current)
        if not isinstance(schema, dict):
            continue
        if any(keyword in schema for keyword in _CONDITIONAL):
            raise Undecidable
        found.append(schema)
        if isinstance(schema.get("allOf"), list):
            stack.extend(join(current, "allOf", i) for i in range(len(schema["allOf"])))
        if isinstance(schema.get("$ref"), str):
            try:
                target = document.resolve(current, schema["$ref"])
            except KeyError:
                target = None
            if target is None:
                raise Undecidable
            stack.append(target)
    return found


def unevaluated_properties(document: Document, pointer: str) -> Clause | None:
    """The clause ``unevaluatedProperties`` at ``pointer`` adds: every evaluated name or
    pattern allows anything, other names take the ``unevaluatedProperties`` schema. ``None`` if
    everything is evaluated anyway (an ``additionalProperties`` in place)."""
    schemas = _in_place(document, pointer)
    names: dict[str, None] = {}
    patterns: dict[str, None] = {}
    for index, schema in enumerate(schemas):
        if "additionalProperties" in schema or (index and "unevaluatedProperties" in schema):
            return None
        if isinstance(schema.get("properties"), dict):
            names.update(dict.fromkeys(schema["properties"]))
        if isinstance(schema.get("patternProperties"), dict):
            patterns.update(dict.fromkeys(schema["patternProperties"]))
    keyword = join(pointer, "unevaluatedProperties")
    return Clause(tuple((name, ANY) for name in names),
                  tuple((Pattern(source, keyword), ANY) for source in patterns),
                  (Ref(keyword),))


def unevaluated_items(document: Document, pointer: str) -> tuple[int, Child] | None:
    """How many leading items are evaluated and the schema the others must satisfy; ``None``
    if every item is evaluated anyway (an ``items`` in place)."""
    schemas = _in_place(document, pointer)
    width = 0
    for index, schema in enumerate(schemas):
        if "contains" in schema:
            raise Undecidable
        items = schema.get("items")
        if (index and "unevaluatedItems" in schema) or "additionalItems" in schema or (
                "items" in schema and not isinstance(items, list)):
            return None
        for keyword in ("items", "prefixItems"):
            if isinstance(schema.get(keyword), list):
                width = max(width, len(schema[keyword]))
    return width, (Ref(join(pointer, "unevaluatedItems")),)
