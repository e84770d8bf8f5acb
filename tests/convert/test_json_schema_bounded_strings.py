"""Length-bounded strings are one shared rule per distinct bounds, which every value with those
bounds refers to (so the compiler and the decoder meet one string body, not one per property)."""

from __future__ import annotations

import json
import re

import pytest

from grammarkit import Grammar
from grammarkit.ebnf import ast


def _rules(schema: object) -> dict[str, ast.Expr]:
    grammar = Grammar.from_json_schema(schema)
    return {rule.name: rule.body for rule in grammar.ast.rules}


def _references(body: ast.Expr) -> list[str]:
    return [name for name, _ in ast.referenced_rules(body)]


def test_fifty_identical_bounded_strings_name_one_rule() -> None:
    wide = {f"field_{i}": {"type": "string", "maxLength": 12} for i in range(50)}
    schema = {"type": "object", "properties": wide, "required": list(wide),
              "additionalProperties": False}
    rules = _rules(schema)
    strings = [name for name in rules if name.startswith("json-string.")]
    assert strings == ["json-string.max12"]
    body = rules["json-string.max12"]
    assert isinstance(body, ast.Sequence)
    repeat = body.items[1]
    assert isinstance(repeat, ast.Repeat) and (repeat.min, repeat.max) == (0, 12)
    uses = [name for rule in rules.values() for name in _references(rule)]
    assert uses.count("json-string.max12") == 50
    assert "json-char" not in [n for n, b in rules.items() if n != "json-string.max12"
                               for n in _references(b)]  # never spelled in place
    grammar = Grammar.from_json_schema(schema)
    value = "{" + ",".join(f'"field_{i}":"{"x" * (i % 13)}"' for i in range(50)) + "}"
    assert grammar.matches(value)
    assert not grammar.matches(value.replace('"field_3":"xxx"', '"field_3":"' + "y" * 13 + '"'))


@pytest.mark.parametrize(("bounds", "name"), [
    ({"maxLength": 12}, "json-string.max12"),
    ({"minLength": 3}, "json-string.min3"),
    ({"minLength": 3, "maxLength": 12}, "json-string.min3-max12"),
    ({"minLength": 5, "maxLength": 5}, "json-string.len5"),
])
def test_each_distinct_bounds_has_its_own_rule(bounds: dict[str, int], name: str) -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "string", **bounds}, "b": {"type": "string", **bounds},
        "c": {"type": "string", "maxLength": 40}, "d": {"type": "string"}},
        "required": ["a", "b", "c", "d"]}
    rules = _rules(schema)
    assert {n for n in rules if n.startswith("json-string")} == {
        name, "json-string.max40", "json-string"}
    text = Grammar.from_json_schema(schema).to_ebnf()
    assert len(re.findall(rf"\b{re.escape(name)}\b(?! ::=)", text)) == 2


def test_a_schema_named_like_the_shared_rule_keeps_its_own_name() -> None:
    schema = {"$defs": {"json-string.max12": {"type": "object", "properties": {
        "n": {"type": "integer"}}, "required": ["n"]}},
        "type": "object", "properties": {"x": {"$ref": "#/$defs/json-string.max12"},
                                         "y": {"type": "string", "maxLength": 12}},
        "required": ["x", "y"]}
    grammar = Grammar.from_json_schema(schema)
    names = [rule.name for rule in grammar.ast.rules]
    assert len(names) == len(set(names)) and "json-string.max12-2" in names
    assert grammar.matches('{"x":{"n":5},"y":"abc"}')
    assert not grammar.matches('{"x":{"n":5},"y":"abcdefghijklm"}')


@pytest.mark.parametrize("whitespace", ["flexible", "indented"])
@pytest.mark.parametrize("name", ["json-string", "json-char", "json-number", "json-value",
                                  "json-object", "json-array", "json-value-1"])
def test_a_definition_named_like_a_shared_rule_keeps_its_own_rule(name: str,
                                                                   whitespace: str) -> None:
    # `$defs/json-number` took the name `json-number` before the shared rule was built: the
    # grammar had two rules of that name and failed to compile (GK103 `json-string` undefined)
    schema = {"$defs": {name: {"type": "object", "additionalProperties": {"type": "string"}}},
              "type": "object", "properties": {"a": {"$ref": f"#/$defs/{name}"},
                                               "b": {"type": "number"}, "c": {}}}
    grammar = Grammar.from_json_schema(schema, whitespace=whitespace)
    names = [rule.name for rule in grammar.ast.rules]
    assert len(names) == len(set(names))
    indent = 2 if whitespace == "indented" else None
    assert grammar.matches(json.dumps({"a": {"x": "y"}, "b": 1.5, "c": [None]}, indent=indent))
    assert not grammar.matches(json.dumps({"a": {"x": 1}}, indent=indent))
