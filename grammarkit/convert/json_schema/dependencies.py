"""Dependent schemas that all constrain one discriminator property, read as one union.

SchemaStore's ``mongodb-atlas-search-index-definition.json`` says, for 17 optional properties,
"when ``analyzer`` is present, ``type`` is ``autocomplete`` or ``string``", "when ``maxGrams``
is present, ``type`` is ``autocomplete``", and so on. Met one after another, each dependency
doubles the object alternatives (the name absent, or present with its constraint on ``type``)
before the contradictory ones are dropped: 1,039 object sets, a second to convert. When every
dependent schema is ``{"properties": {P: <string constants>}}`` for one property ``P`` (not one
of the dependencies' names), their conjunction is, exactly, the union of

* the objects without ``P`` (``properties`` constrains ``P`` only where it is present, so every
  dependency holds);
* for each group of ``P``'s listed constants that the same dependencies allow, the objects
  whose ``P`` is one of them and which lack every name whose dependency excludes them;
* the objects whose ``P`` is none of the listed constants, lacking every dependency's name.

:func:`discriminated` recognizes such dependencies. Grammars stay as exact as before;
``unevaluatedProperties`` anywhere in the document keeps the dependencies apart (which names a
dependent schema evaluates depends on which dependencies apply).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grammarkit.convert.json_schema.if_chains import keywords, string_constants
from grammarkit.convert.json_schema.references import Document

MIN_DEPENDENCIES = 3
"""Fewer dependencies on one property are met one by one, as any others."""

@dataclass(frozen=True)
class Discriminated:
    """Dependencies whose schemas only restrict property ``name`` to string constants:
    ``allowed[dependency]`` are the values of ``name`` that dependency allows."""

    name: str
    allowed: dict[str, frozenset[str]]

    def groups(self) -> list[tuple[frozenset[str], frozenset[str]]]:
        """``(values, excluded)`` pairs: the listed values of ``name`` that exclude the same
        dependencies (those whose names must then be absent), in a deterministic order."""
        excluding: dict[frozenset[str], set[str]] = {}
        for value in sorted(set().union(*self.allowed.values())):
            excluded = frozenset(dependency for dependency, values in self.allowed.items()
                                 if value not in values)
            excluding.setdefault(excluded, set()).add(value)
        return [(frozenset(values), excluded) for excluded, values in excluding.items()]

    @property
    def listed(self) -> frozenset[str]:
        """Every value of ``name`` some dependency allows."""
        return frozenset(set().union(*self.allowed.values()))


def discriminated(document: Document, dependencies: dict[str, Any]) -> Discriminated | None:
    """The largest group (at least :data:`MIN_DEPENDENCIES`) of ``dependencies`` (the value of
    ``dependentSchemas`` or ``dependencies``) whose schemas each say only ``{"properties":
    {P: <string constants>}}`` for one ``P``, or ``None``."""
    by_property: dict[str, dict[str, frozenset[str]]] = {}
    for dependency, schema in dependencies.items():
        found = _restriction(schema)
        if found is not None and found[0] != dependency:
            by_property.setdefault(found[0], {})[dependency] = found[1]
    if not by_property:
        return None
    name, allowed = max(by_property.items(), key=lambda item: len(item[1]))
    if len(allowed) < MIN_DEPENDENCIES or name in allowed or _evaluates_unevaluated(document):
        return None
    return Discriminated(name, allowed)


def _restriction(schema: Any) -> tuple[str, frozenset[str]] | None:
    """``(P, values)`` if ``schema`` is ``{"properties": {P: <string constants>}}``."""
    if not isinstance(schema, dict) or keywords(schema) != {"properties"}:
        return None
    properties = schema["properties"]
    if not isinstance(properties, dict) or len(properties) != 1:
        return None
    ((name, value),) = properties.items()
    values = string_constants(value)
    return None if values is None else (name, values)


def _evaluates_unevaluated(document: Document) -> bool:
    """Whether any subschema of ``document`` has ``unevaluatedProperties``."""
    return any(isinstance(schema := document.at(pointer), dict)
               and "unevaluatedProperties" in schema for pointer in document.subschemas)
