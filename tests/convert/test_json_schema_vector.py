"""The shapes of SchemaStore's ``vector.json`` (Vector's configuration schema) that made the
converter refuse it (GK153, more than 20,000 rules), minimized into small generated schemas.

* A ``oneOf`` whose branches each require one key (``MetricValue``: ``counter``, ``gauge``,
  ...) is "each branch minus the others"; the complement of "``k`` present and in X" used to be
  two object sets ("``k`` absent", "``k`` present, not in X"), so each branch became 2^(n-1)
  object alternatives, each with its own presence rules, at every use.
* ``unevaluatedProperties: false`` beside a ``oneOf`` (``Option<T>`` is ``oneOf [null, T]``
  with it, 172 times; a sink is ``allOf`` of the common options and a ``oneOf`` of 65 sink
  types, each ``allOf`` of its configuration and a ``type`` constant) was relaxed: any other
  name was allowed, so each branch spelled out an automaton for "any name but the declared
  ones" (thousands of rules). It is now decided per alternative: closed, and far smaller.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.errors import SchemaError
from grammarkit.convert.json_schema import convert_schema, emitter
from grammarkit.ebnf.printer import print_grammar

KINDS = ("counter", "gauge", "set", "distribution", "histogram", "summary", "sketch", "other")


def metric_schema(kinds: int) -> dict[str, Any]:
    """Vector's ``Metric``: ``allOf`` of a series (``name`` required) and a value that is a
    ``oneOf`` of ``kinds`` branches, each requiring its own key; used directly and as
    ``Option<Metric>`` (``oneOf [null, Metric]``)."""
    branches = [{"type": "object", "required": [kind], "properties": {kind: {
        "type": "object", "required": ["value"], "properties": {"value": {"type": "number"}},
        "maxProperties": 2}}} for kind in KINDS[:kinds]]
    return {
        "$defs": {
            "MetricValue": {"oneOf": branches},
            "MetricSeries": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "namespace": {"type": ["string", "null"]}}},
            "Metric": {"allOf": [{"$ref": "#/$defs/MetricSeries"},
                                 {"$ref": "#/$defs/MetricValue"}]},
        },
        "type": "object",
        "properties": {"metric": {"$ref": "#/$defs/Metric"},
                       "maybe": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Metric"}]}},
    }


def grammar_text_size(schema: dict[str, Any], **options: Any) -> int:
    return len(print_grammar(convert_schema(schema, lenient=True, **options)[0], None))


@pytest.mark.parametrize("property_order", ["schema", "any"])
def test_one_of_required_keys_grows_linearly(property_order: str) -> None:
    # Each branch minus the others is one object set per branch: 8 branches cost about twice
    # 4 (it was 2^7 object sets per branch: 1.5 MB of grammar, a second).
    small = grammar_text_size(metric_schema(4), property_order=property_order)
    large = grammar_text_size(metric_schema(8), property_order=property_order)
    assert large < 3 * small
    assert large < 150_000


@pytest.mark.parametrize("property_order", ["schema", "any"])
def test_one_of_required_keys_stays_exact(property_order: str) -> None:
    grammar = Grammar.from_json_schema(metric_schema(8), property_order=property_order)
    assert grammar.warnings == ()

    def metric(**members: Any) -> str:
        return json.dumps({"metric": {"name": "cpu", **members}})

    assert grammar.matches(metric(counter={"value": 1}))
    assert grammar.matches(metric(sketch={"value": 2.5}))
    # Another branch's key with a value that branch refuses: exactly one branch matches.
    assert grammar.matches(metric(counter={"value": 1}, gauge={"value": "x"}))
    assert grammar.matches(metric(counter={"value": 1}, gauge=3))
    # Two branches match, or none.
    assert not grammar.matches(metric(counter={"value": 1}, gauge={"value": 2}))
    assert not grammar.matches(metric())
    assert grammar.matches(metric(counter={"value": 1, "extra": 0}))
    assert not grammar.matches(metric(counter={"value": 1, "extra": 0, "more": 0}))
    assert not grammar.matches(json.dumps({"metric": {"counter": {"value": 1}}}))
    assert grammar.matches(json.dumps({"maybe": None}))
    assert grammar.matches(json.dumps({"maybe": {"name": "m", "gauge": {"value": 0}}}))
    assert not grammar.matches(json.dumps({"maybe": {"name": "m"}}))


def sinks_schema(kinds: int, options: int) -> dict[str, Any]:
    """Vector's ``SinkOuter``: the common options (``inputs`` required) and a ``oneOf`` of
    ``kinds`` sink types, each ``allOf`` of its configuration (``options`` properties, one
    of them an ``Option<Endpoint>``) and a ``type`` constant, closed by
    ``unevaluatedProperties: false`` beside it; sinks by name under ``sinks``."""
    definitions: dict[str, Any] = {
        "Endpoint": {"type": "object", "required": ["uri"], "properties": {
            "uri": {"type": "string"}, "timeout": {"type": "number"}}},
        "Option<Endpoint>": {"oneOf": [{"type": "null"}, {"$ref": "#/definitions/Endpoint"}],
                             "unevaluatedProperties": False},
        "Sinks": {"oneOf": [{"allOf": [
            {"$ref": f"#/definitions/Config{k}"},
            {"type": "object", "required": ["type"],
             "properties": {"type": {"const": f"sink{k}"}}}]} for k in range(kinds)]},
        "SinkOuter": {"allOf": [
            {"type": "object", "required": ["inputs"], "properties": {
                "inputs": {"type": "array", "items": {"type": "string"}},
                "healthcheck": {"type": "object", "properties": {
                    "enabled": {"type": "boolean"}}, "unevaluatedProperties": False}}},
            {"$ref": "#/definitions/Sinks"}], "unevaluatedProperties": False},
    }
    for k in range(kinds):
        properties: dict[str, Any] = {f"option_{k}_{i}": {"type": ["string", "null"]}
                                      for i in range(options)}
        properties["endpoint"] = {"$ref": "#/definitions/Option<Endpoint>"}
        definitions[f"Config{k}"] = {"type": "object", "required": [f"option_{k}_0"],
                                     "properties": properties}
    return {"$schema": "https://json-schema.org/draft/2019-09/schema",
            "definitions": definitions, "type": "object",
            "properties": {"sinks": {"type": "object", "additionalProperties": {
                "$ref": "#/definitions/SinkOuter"}}},
            "unevaluatedProperties": False}


def sink(**members: Any) -> str:
    return json.dumps({"sinks": {"out": {"inputs": ["in"], **members}}})


@pytest.mark.parametrize("property_order", ["schema", "any"])
def test_unevaluated_properties_beside_one_of_is_enforced(property_order: str) -> None:
    grammar = Grammar.from_json_schema(sinks_schema(3, 3), property_order=property_order)
    assert grammar.warnings == ()
    # In schema order: the common options, the sink's configuration, then its type.
    assert grammar.matches(sink(option_1_0="x", type="sink1"))
    assert grammar.matches(sink(option_2_0=None, option_2_2="y", endpoint={"uri": "u"},
                                type="sink2"))
    assert grammar.matches(sink(healthcheck={"enabled": True}, option_0_0="x", endpoint=None,
                                type="sink0"))
    # A name no schema on the matching path evaluates: another sink's option, a typo.
    assert not grammar.matches(sink(option_1_0="x", option_2_1="y", type="sink1"))
    assert not grammar.matches(sink(option_1_0="x", typo=1, type="sink1"))
    assert not grammar.matches(sink(option_1_0="x", type="sink1", endpoint={"uri": "u", "x": 1}))
    assert not grammar.matches(sink(option_1_0="x", type="sink1", healthcheck={"x": 1}))
    assert not grammar.matches(sink(option_1_0="x", type="sink2"))
    assert not grammar.matches(json.dumps({"sinks": {}, "other": 1}))


def test_unevaluated_properties_per_alternative_follows_the_specification() -> None:
    # Properties evaluated only by a complement (`not`, the other oneOf branches, a failed
    # `if`) or by a `const` are unevaluated; `if` that holds evaluates its properties.
    def grammar(schema: dict[str, Any]) -> Grammar:
        found = Grammar.from_json_schema({**schema, "unevaluatedProperties": False})
        assert found.warnings == ()
        return found

    one_of = grammar({"oneOf": [{"properties": {"a": {"const": 1}}, "required": ["a"]},
                                {"properties": {"b": {"const": 2}}, "required": ["b"]}]})
    assert one_of.matches('{"a": 1}') and one_of.matches('{"b": 2}')
    assert not one_of.matches('{"a": 1, "b": 3}')  # b is evaluated only by the failed branch
    assert not one_of.matches('{"a": 1, "b": 2}')  # both branches match
    negated = grammar({"properties": {"a": {}}, "not": {"properties": {"b": {"const": 1}},
                                                        "required": ["b"]}})
    assert negated.matches('{"a": 0}') and not negated.matches('{"b": 2}')
    conditional = grammar({"if": {"properties": {"kind": {"const": "x"}}, "required": ["kind"]},
                           "then": {"properties": {"x": {}}},
                           "else": {"properties": {"y": {}}}})
    assert conditional.matches('{"kind": "x", "x": 1}')
    assert not conditional.matches('{"kind": "x", "y": 1}')
    assert conditional.matches('{"y": 1}')
    assert not conditional.matches('{"kind": "z", "y": 1}')  # kind: the failed `if` only
    constant = grammar({"oneOf": [{"const": {"a": 1}}, {"type": "string"}]})
    assert not constant.matches('{"a": 1}') and constant.matches('"s"')
    dependent = grammar({"properties": {"a": {}},
                         "dependentSchemas": {"a": {"properties": {"b": {}}}}})
    assert dependent.matches('{"a": 1, "b": 2}') and not dependent.matches('{"b": 2}')


def test_unevaluated_properties_beside_any_of_stays_relaxed() -> None:
    # Several anyOf branches may match and evaluate together: relaxed, with a warning.
    grammar = Grammar.from_json_schema({"anyOf": [{"properties": {"a": {}}},
                                                  {"properties": {"b": {}}}],
                                        "unevaluatedProperties": False}, lenient=True)
    assert [w.code for w in grammar.warnings] == ["GK254"]
    assert grammar.matches('{"a": 1, "b": 2}')


@pytest.mark.parametrize("property_order", ["schema", "any"])
def test_vector_sized_schema_converts_quickly(property_order: str) -> None:
    # vector.json has 65 sinks, 50 sources, 20 transforms of up to ~60 options each; this
    # one has 65 sinks of 30 options, every one closed by unevaluatedProperties.
    schema = sinks_schema(65, 30)
    start = time.process_time()
    grammar_ast, warnings = convert_schema(schema, property_order=property_order)
    elapsed = time.process_time() - start
    assert warnings == []
    # 2,091 rules and 0.8 MB in schema order, 800 rules in any order (4,661 and 3,370 rules,
    # 1.1 and 1.0 MB, while the sinks were open); about 0.8 s on a loaded machine. Besides,
    # one `key.NAME` rule per property name, spelled there once for every sink declaring it.
    keys = [rule for rule in grammar_ast.rules if rule.name.startswith("key.")]
    assert len(grammar_ast.rules) - len(keys) < 2_500
    assert len(keys) <= 65 * 30 + 10
    assert len(print_grammar(grammar_ast, None)) < 1_000_000
    assert elapsed < 10
    if property_order == "any":
        return  # compiling it for a match takes seconds more; once is enough
    grammar = Grammar(grammar_ast, "root")
    assert grammar.matches(sink(option_64_0="x", type="sink64"))
    assert not grammar.matches(sink(option_64_0="x", option_64_1="y", option_63_0="y",
                                    type="sink64"))


def test_rule_budget_names_the_largest_subschemas(monkeypatch: pytest.MonkeyPatch) -> None:
    # The error used to say "more than 20000 rules" at pointer "": now it names the largest
    # subschemas, and lenient conversion relaxes what is left beyond the budget instead.
    monkeypatch.setattr(emitter, "MAX_RULES", 100)
    schema = sinks_schema(12, 12)
    with pytest.raises(SchemaError) as raised:
        convert_schema(schema)
    error = raised.value.diagnostics[0]
    assert error.code == "GK153"
    assert error.pointer == "/definitions/SinkOuter"
    assert "largest subschemas so far: /definitions/SinkOuter (" in error.message
    grammar = Grammar.from_json_schema(schema, lenient=True)
    relaxed = [w for w in grammar.warnings if w.code == "GK255"]
    assert len(relaxed) == 1 and "any value of its types" in relaxed[0].message
    uncounted = [rule for rule in grammar.ast.rules
                 if rule.name.startswith("key.") or rule.name.startswith("char.")]
    assert len(grammar.ast.rules) - len(uncounted) < 200  # 179 without the budget
    assert grammar.matches(sink(option_11_0="x", endpoint={"uri": "u", "timeout": 1},
                                type="sink11"))
    # SinkOuter itself, converted before the budget ran out, stays exact.
    assert not grammar.matches(sink(option_11_0="x", typo=1, type="sink11"))
    assert not grammar.matches(json.dumps({"sinks": {"out": {"inputs": ["in"]}}, "x": 1}))
