"""Chains of ``if``/``then`` on one discriminator property (SchemaStore's cloudify.json has 125
in one ``allOf``): the same language as meeting the conjuncts one by one, in a grammar whose
size grows linearly with the chain."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.convert.json_schema import if_chains


def chain_schema(kinds: int, extras: int = 5, required_in_if: bool = False,
                 enum: bool = False, closed: bool = True) -> dict[str, Any]:
    """A minimized cloudify ``nodeTemplate``: ``kinds`` conjuncts "if `type` is kind i, then
    `properties` follows definition T_i", beside ``extras`` plain properties."""
    properties: dict[str, Any] = {"type": {"type": "string"}, "properties": {"type": "object"}}
    properties.update({f"extra{i}": {"type": "string"} for i in range(extras)})

    def condition(i: int) -> dict[str, Any]:
        value = {"enum": [f"kind{i}", f"alias{i}"]} if enum else {"const": f"kind{i}"}
        found: dict[str, Any] = {"properties": {"type": value}}
        if required_in_if:
            found["required"] = ["type"]
        return found

    return {
        "definitions": {f"T{i}": {"type": "object", "properties": {f"a{i}": {"type": "integer"}},
                                  "additionalProperties": False} for i in range(kinds)},
        "type": "object", "properties": properties, "additionalProperties": not closed,
        "allOf": [{"if": condition(i),
                   "then": {"properties": {"properties": {"$ref": f"#/definitions/T{i}"}}}}
                  for i in range(kinds)],
    }


def valid(schema: dict[str, Any], value: Any) -> bool:
    """The chain schema's meaning, written out (every conjunct checked)."""
    if not isinstance(value, dict):
        return False
    declared = schema["properties"]
    if not schema["additionalProperties"] and not set(value) <= set(declared):
        return False
    if "type" in value and not isinstance(value["type"], str):
        return False
    if "properties" in value and not isinstance(value["properties"], dict):
        return False
    if any(not isinstance(value[name], str) for name in value if name.startswith("extra")):
        return False
    for index, conjunct in enumerate(schema["allOf"]):
        condition = conjunct["if"]
        allowed = condition["properties"]["type"].get("enum") or [
            condition["properties"]["type"]["const"]]
        holds = (value["type"] in allowed) if "type" in value else (
            "required" not in condition)
        if holds and "properties" in value:
            member = value["properties"]
            name = f"a{index}"
            if not set(member) <= {name} or not isinstance(member.get(name, 0), int) or (
                    isinstance(member.get(name), bool)):
                return False
    return True


def test_a_long_chain_converts_to_a_grammar_linear_in_its_length() -> None:
    sizes = {}
    for kinds in (50, 100, 200):
        grammar = Grammar.from_json_schema(chain_schema(kinds))
        text = grammar.to_ebnf()
        sizes[kinds] = len(text)
        # Each conjunct costs its case (the discriminator's value and its definition), not a
        # copy of the object's other properties: before the chain was read as a whole, each
        # case spelled out all five extras again (2,670 characters per conjunct at 200).
        assert len(text) < 1_700 * kinds, kinds
        assert len(grammar.ast.rules) < 8 * kinds + 40, kinds
    assert sizes[200] < 2.1 * sizes[100] < 4.4 * sizes[50]


values = st.sampled_from(["kind0", "kind1", "kind2", "alias1", "other", 3, None])
members = st.dictionaries(st.sampled_from(["a0", "a1", "a2", "b"]),
                          st.sampled_from([1, "x", True]), max_size=2)
instances = st.one_of(
    st.dictionaries(st.sampled_from(["type", "properties", "extra0", "other"]),
                    st.one_of(values, members), max_size=4),
    st.sampled_from([None, "kind0", 1, []]),
)


@pytest.mark.parametrize("required_in_if", [False, True])
@pytest.mark.parametrize("enum", [False, True])
@pytest.mark.parametrize("closed", [False, True])
@settings(max_examples=60, deadline=None)
@given(instance=instances)
def test_a_chain_means_what_its_conjuncts_mean(required_in_if: bool, enum: bool, closed: bool,
                                               instance: Any) -> None:
    schema = chain_schema(3, extras=1, required_in_if=required_in_if, enum=enum, closed=closed)
    grammar = _grammar(json.dumps(schema))
    text = json.dumps(instance)
    assert grammar.matches(text) == valid(schema, instance), text


def test_a_chain_reads_like_its_conjuncts_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = chain_schema(4, extras=1, required_in_if=True)
    chained = Grammar.from_json_schema(schema, property_order="any")
    monkeypatch.setattr(if_chains, "MIN_CHAIN", 1_000)
    one_by_one = Grammar.from_json_schema(schema, property_order="any")
    assert chained.to_ebnf() != one_by_one.to_ebnf()
    for text in ['{"type": "kind1", "properties": {"a1": 2}}',
                 '{"properties": {"a3": 2}, "type": "kind3"}',
                 '{"type": "other", "properties": {"zzz": 2}}',
                 '{"properties": {"a0": 1, "a1": 1}}',
                 '{"extra0": "x"}', '{}',
                 '{"type": "kind1", "properties": {"a2": 2}}',
                 '{"type": "kind1", "extra0": 1}', '{"type": 1}']:
        assert chained.matches(text) == one_by_one.matches(text), text


def test_what_is_not_a_chain_is_met_one_by_one() -> None:
    document = {"allOf": [
        {"if": {"properties": {"type": {"const": "a"}}}, "then": {}, "else": {}},
        {"if": {"properties": {"type": {"const": 1}}}, "then": {}},
        {"if": {"properties": {"type": {"const": "b"}, "x": {}}}, "then": {}},
        {"if": {"properties": {"type": {"const": "c"}}, "required": ["x"]}, "then": {}},
        {"if": {"properties": {"type": {"const": "d"}}}, "then": {}, "$ref": "#"},
    ]}
    from grammarkit.convert.json_schema.references import Document

    found = [if_chains.conditional(Document(document), f"/allOf/{i}") for i in range(5)]
    assert found == [None] * 5
    same = if_chains.Conditional("/allOf/0", "type", frozenset({"a"}), False)
    overlapping = if_chains.Conditional("/allOf/1", "type", frozenset({"a", "b"}), False)
    others = [if_chains.Conditional(f"/allOf/{i}", "kind", frozenset({str(i)}), False)
              for i in range(3)]
    assert if_chains.chains([same, overlapping, same, *others[:2]]) == []
    assert if_chains.chains([None, same, *others, others[0]]) == [(2, 5)]


_cache: dict[str, Grammar] = {}


def _grammar(schema_text: str) -> Grammar:
    if schema_text not in _cache:
        _cache[schema_text] = Grammar.from_json_schema(json.loads(schema_text),
                                                       property_order="any")
    return _cache[schema_text]
