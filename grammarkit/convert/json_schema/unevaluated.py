"""``unevaluatedProperties`` and ``unevaluatedItems``: which members the schema evaluates.

Which properties or items count as *evaluated* depends, in general, on which subschemas matched
the instance. When the schema only combines subschemas unconditionally (``allOf``, ``$ref``), the
evaluated set is static: the names and patterns of every ``properties`` and
``patternProperties`` in place, and the longest ``prefixItems``. Then ``unevaluated*`` becomes an
ordinary clause, enforced exactly; otherwise :class:`Undecidable` is raised.

``unevaluatedProperties`` beside ``oneOf``, ``not``, ``if`` with ``then`` or ``else``, and
dependent schemas is still decided exactly, per alternative (:func:`decided_per_alternative`):
the schema's node is a union of object sets, each the conjunction of the clauses of the
subschemas that matched along one path (one ``oneOf`` branch minus the others, ``if`` and
``then``, or the complement of ``if`` and ``else``...), so each set's own clauses say which
names it evaluates (:func:`with_unevaluated`); complements (``not``, the other ``oneOf``
branches, a failed ``if``) and ``const`` evaluate nothing, as the specification says. Only
``anyOf`` (several branches may match and evaluate together) and dynamic references stay
undecided.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from grammarkit.convert.json_schema.model import (
    ANY,
    NEVER,
    Child,
    Clause,
    Inline,
    Not,
    ObjectSet,
    Pattern,
    Ref,
)
from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import join

_CONDITIONAL = ("anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas",
                "dependencies", "$dynamicRef", "$recursiveRef")


class Undecidable(Exception):
    """The evaluated members depend on which subschemas match."""


def _reached(document: Document, pointer: str, lists: tuple[str, ...] = ("allOf",),
             singles: tuple[str, ...] = (), maps: tuple[str, ...] = ()
             ) -> Iterator[dict[str, Any]]:
    """The schema at ``pointer`` and those reached from it, each once: the members of the
    ``lists`` keywords, the ``singles`` keywords' schemas, the values of the ``maps`` keywords
    and ``$ref`` targets, transitively. Raises `Undecidable` at a ``$ref`` to another document
    (once the schema holding it has been yielded)."""
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
        yield schema
        for keyword in lists:
            if isinstance(schema.get(keyword), list):
                stack.extend(join(current, keyword, i) for i in range(len(schema[keyword])))
        stack.extend(join(current, keyword) for keyword in singles if keyword in schema)
        for keyword in maps:
            if isinstance(schema.get(keyword), dict):
                stack.extend(join(current, keyword, name) for name, value
                             in schema[keyword].items() if isinstance(value, (dict, bool)))
        if isinstance(schema.get("$ref"), str):
            try:
                target = document.resolve(current, schema["$ref"])
            except KeyError:
                target = None
            if target is None:
                raise Undecidable
            stack.append(target)


def _in_place(document: Document, pointer: str) -> list[dict[str, Any]]:
    """The schema at ``pointer`` and those applied in place with it (``allOf`` members and
    ``$ref`` targets, transitively)."""
    found: list[dict[str, Any]] = []
    for schema in _reached(document, pointer):
        if any(keyword in schema for keyword in _CONDITIONAL):
            raise Undecidable
        found.append(schema)
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


_UNDECIDED_PER_ALTERNATIVE = ("anyOf", "$dynamicRef", "$recursiveRef")


def decided_per_alternative(document: Document, pointer: str) -> bool:
    """Whether the evaluated properties of the schema at ``pointer`` can be read off each
    object set of its node (:func:`with_unevaluated`): the subschemas applied in place combine
    through ``allOf``, ``$ref``, ``oneOf``, ``not``, ``if`` with ``then`` or ``else``, and
    dependent schemas, never ``anyOf`` or a dynamic reference."""
    try:
        for schema in _reached(document, pointer, ("allOf", "oneOf"), ("if", "then", "else"),
                               ("dependentSchemas", "dependencies")):
            if any(keyword in schema for keyword in _UNDECIDED_PER_ALTERNATIVE) or (
                    "if" in schema and "then" not in schema and "else" not in schema):
                return False
    except Undecidable:  # a reference to another document
        return False
    return True


def with_unevaluated(s: ObjectSet, keyword: str) -> ObjectSet:
    """``s`` with the clause ``unevaluatedProperties`` (at pointer ``keyword``) adds: the names
    and patterns its own clauses evaluate allow anything, other names take the keyword's
    schema; ``s`` itself when a clause evaluates every name (``additionalProperties``, or an
    ``unevaluatedProperties`` in place)."""
    names: dict[str, None] = {}
    patterns: dict[Pattern, None] = {}
    for clause in s.clauses:
        if _evaluates_nothing(clause):
            continue
        if clause.additional != ANY:
            return s
        names.update(dict.fromkeys(name for name, _ in clause.properties))
        patterns.update(dict.fromkeys(pattern for pattern, _ in clause.patterns))
    added = Clause(tuple((name, ANY) for name in names),
                   tuple((pattern, ANY) for pattern in patterns), (Ref(keyword),))
    return replace(s, clauses=s.clauses + (added,))


def _evaluates_nothing(clause: Clause) -> bool:
    """Whether ``clause`` comes from a keyword that evaluates no property: a complement
    ("``name``, if present, is not in X", or is absent) or a ``const``/``enum`` object."""
    values = [child for _, child in clause.properties]
    if clause.additional == NEVER and all(len(v) == 1 and isinstance(v[0], Inline)
                                          for v in values):
        return True
    return not clause.patterns and clause.additional == ANY and all(
        v == NEVER or (len(v) == 1 and isinstance(v[0], Not)) for v in values)
