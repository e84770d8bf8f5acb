"""The shapes of SchemaStore's ``vector.json`` (Vector's configuration schema) that made the
converter refuse it (GK153, more than 20,000 rules), minimized into small generated schemas.

* A ``oneOf`` whose branches each require one key (``MetricValue``: ``counter``, ``gauge``,
  ...) is "each branch minus the others"; the complement of "``k`` present and in X" used to be
  two object sets ("``k`` absent", "``k`` present, not in X"), so each branch became 2^(n-1)
  object alternatives, each with its own presence rules, at every use.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.json_schema import convert_schema
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
