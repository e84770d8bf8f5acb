"""Dependent schemas that each restrict one discriminator property to string constants
(SchemaStore's mongodb-atlas-search-index-definition.json has 17 on ``type``): the same
language as meeting the dependencies one by one, in a grammar that stays small."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.json_schema import dependencies

TYPES = ["text", "number", "date", "geo", "token"]
ALLOWED = {  # which values of `type` each optional property needs
    "analyzer": ["text", "token"],
    "maxGrams": ["text"],
    "indexDoubles": ["number", "date"],
    "indexShapes": ["geo"],
}


def field_schema(keyword: str = "dependentSchemas", count: int | None = None) -> dict[str, Any]:
    """A minimized ``MappingsField``: optional properties, each allowed only beside some values
    of ``type``, and one dependency of another kind (a required companion)."""
    allowed = ALLOWED if count is None else {f"p{i}": [TYPES[i % 5], TYPES[(i * 3) % 5]]
                                             for i in range(count)}
    properties: dict[str, Any] = {"type": {"type": "string", "enum": TYPES}, "store": {}}
    properties.update({name: {"type": "integer"} for name in allowed})
    dependent: dict[str, Any] = {
        name: {"description": "needs a type", "properties": {"type": {"enum": values}}}
        for name, values in allowed.items()}
    dependent["store"] = {"required": ["analyzer"]}
    return {"type": "object", "additionalProperties": False, "properties": properties,
            keyword: dependent}


def valid(value: Any) -> bool:
    """:func:`field_schema`'s meaning, written out."""
    if not isinstance(value, dict) or not set(value) <= {"type", "store", *ALLOWED}:
        return False
    if "type" in value and value["type"] not in TYPES:
        return False
    if any(not isinstance(value[name], int) for name in ALLOWED if name in value):
        return False
    if "store" in value and "analyzer" not in value:
        return False
    return all("type" not in value or value["type"] in ALLOWED[name]
               for name in ALLOWED if name in value)


def instances() -> list[dict[str, Any]]:
    """Every subset of the optional properties (and ``store``) with every kind of ``type``."""
    names = [*ALLOWED, "store"]
    found = []
    for size in range(len(names) + 1):
        for chosen in itertools.combinations(names, size):
            for kind in [None, *TYPES, "other", 3]:
                value: dict[str, Any] = {} if kind is None else {"type": kind}
                value.update({name: 1 for name in chosen})
                found.append(value)
    return found


@pytest.mark.parametrize("keyword", ["dependentSchemas", "dependencies"])
def test_dependencies_on_one_property_mean_what_they_say(keyword: str) -> None:
    schema = field_schema(keyword)
    if keyword == "dependencies":
        schema["$schema"] = "http://json-schema.org/draft-07/schema#"
    grammar = Grammar.from_json_schema(schema, property_order="any")
    assert grammar.warnings == ()
    for value in instances():
        text = json.dumps(value)
        assert grammar.matches(text) == valid(value), text


def test_they_read_like_the_dependencies_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = field_schema()
    together = Grammar.from_json_schema(schema)
    monkeypatch.setattr(dependencies, "MIN_DEPENDENCIES", 1_000)
    one_by_one = Grammar.from_json_schema(schema)
    for value in instances():
        text = json.dumps(value)
        assert together.matches(text) == one_by_one.matches(text), text


def test_seventeen_dependencies_make_a_small_grammar() -> None:
    # Met one by one, 17 dependencies need 512 x 2 alternatives (GK155 without lenient; the
    # SchemaStore schema made 1,039 object sets, a second to convert and 451 KB of grammar);
    # read together, one object set per group of values.
    grammar = Grammar.from_json_schema(field_schema(count=17))
    assert grammar.warnings == ()
    assert len(grammar.to_ebnf()) < 40_000


def test_what_is_not_discriminated_is_met_one_by_one() -> None:
    from grammarkit.convert.json_schema.references import Document

    def found(dependent: dict[str, Any], root: Any = None) -> Any:
        return dependencies.discriminated(Document(root or {"dependentSchemas": dependent}),
                                          dependent)

    one = {"properties": {"type": {"const": "a"}}}
    assert found({"x": one, "y": one}) is None  # too few
    assert found({"x": one, "y": one, "z": {**one, "required": ["type"]}}) is None
    assert found({"x": one, "y": one, "type": one}) is None  # the discriminator depends
    assert found({"x": one, "y": one, "z": {"properties": {"type": {"const": 1}}}}) is None
    assert found({"x": one, "y": one, "z": one},
                 {"unevaluatedProperties": False, "dependentSchemas": {}}) is None
    assert found({"x": one, "y": one, "z": one, "w": {"required": ["x"]}}) == (
        dependencies.Discriminated("type", {n: frozenset({"a"}) for n in "xyz"}))
