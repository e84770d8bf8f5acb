"""Chains of ``if``/``then`` on one discriminator property, read in linear time.

Schemas such as SchemaStore's ``cloudify.json`` list, in one ``allOf``, dozens of conjuncts
``{"if": {"properties": {"type": {"const": "A"}}}, "then": T_A}``. Met one after another, each
conjunct doubles the alternatives before the contradictory ones are dropped, so the work grows
with the square of the chain's length. When the conditions name one property and pairwise
disjoint constants, at most one condition can hold for an object that has the property, so the
conjunction of the whole chain is, exactly, the union of

* every ``then`` together, for the values no condition can tell apart (non-objects, and objects
  without the property unless the conditions require it);
* for each conjunct, the objects whose property holds one of its constants, and its ``then``;
* the objects whose property holds none of the constants (or, when the conditions require it,
  is absent), with no ``then``.

:func:`conditional` recognizes such a conjunct; :func:`chains` groups consecutive ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import join

MIN_CHAIN = 3
"""Shorter runs of conditionals are met one by one, as any other conjunct."""

_ANNOTATIONS = frozenset({"title", "description", "$comment", "markdownDescription"})


@dataclass(frozen=True)
class Conditional:
    """The ``allOf`` conjunct at ``pointer``: if property ``name`` (``required`` or not by the
    condition) is one of ``values``, then the schema at ``then``."""

    pointer: str
    name: str
    values: frozenset[str]
    required: bool

    @property
    def then(self) -> str:
        """The pointer of the ``then`` schema."""
        return join(self.pointer, "then")

    @property
    def value(self) -> str:
        """The pointer of the condition's schema for the property."""
        return join(self.pointer, "if", "properties", self.name)


def conditional(document: Document, pointer: str) -> Conditional | None:
    """The conjunct at ``pointer`` as a :class:`Conditional`, or ``None`` if it is anything
    else (an ``else``, a condition on several properties or on anything but string constants,
    another keyword beside them)."""
    schema = document.at(pointer)
    if not isinstance(schema, dict) or keywords(schema) != {"if", "then"}:
        return None
    condition = schema["if"]
    if not isinstance(condition, dict) or not keywords(condition) <= {"properties", "required"}:
        return None
    properties = condition.get("properties")
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    ((name, value),) = properties.items()
    required = condition.get("required", [])
    if required not in ([], [name]):
        return None
    values = string_constants(value)
    if values is None or not isinstance(schema["then"], (dict, bool)):
        return None
    return Conditional(pointer, name, values, bool(required))


def chains(found: list[Conditional | None]) -> list[tuple[int, int]]:
    """The ``(start, stop)`` index ranges of runs of at least :data:`MIN_CHAIN` consecutive
    conditionals on the same property, equally required, with pairwise disjoint values."""
    runs = []
    start = 0
    while start < len(found):
        first = found[start]
        stop = start + 1
        if first is not None:
            seen = set(first.values)
            while stop < len(found):
                following = found[stop]
                if (following is None or following.name != first.name
                        or following.required != first.required
                        or not seen.isdisjoint(following.values)):
                    break
                seen |= following.values
                stop += 1
            if stop - start >= MIN_CHAIN:
                runs.append((start, stop))
        start = stop
    return runs


def keywords(schema: dict[str, Any]) -> set[str]:
    """The keywords of ``schema`` that are not annotations."""
    return {key for key in schema if key not in _ANNOTATIONS and not key.startswith("x-")}


def string_constants(schema: Any) -> frozenset[str] | None:
    """The strings a schema of only ``const`` or ``enum`` (and ``type: string``) allows."""
    if not isinstance(schema, dict):
        return None
    found = keywords(schema)
    if schema.get("type", "string") != "string":
        return None
    found.discard("type")
    if found == {"const"} and isinstance(schema["const"], str):
        return frozenset({schema["const"]})
    if found == {"enum"} and isinstance(schema["enum"], list) and schema["enum"] and all(
            isinstance(v, str) for v in schema["enum"]):
        return frozenset(schema["enum"])
    return None
