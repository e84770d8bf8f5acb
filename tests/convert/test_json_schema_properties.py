"""Random schemas and instances against a small reference validator: the soundness contract.

Without warnings the grammar accepts an instance exactly when the validator says it is valid;
with warnings it accepts every valid instance. The validator below covers the keywords the
schema strategy generates, written for obviousness rather than speed.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.diagnostics import Severity

NAMES = ["a", "b", "c", "é"]
PATTERNS = ["^a", "b", "^[ab]+$", "1$"]


# -- the reference validator -------------------------------------------------------------------
def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "integer" if float(value).is_integer() else "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return Decimal(str(a)) == Decimal(str(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def valid(schema: Any, value: Any) -> bool:
    if isinstance(schema, bool):
        return schema
    kind = _type_of(value)
    checks = [
        "type" not in schema or kind in ([schema["type"]] if isinstance(schema["type"], str)
                                         else schema["type"]) or (
            kind == "integer" and "number" in schema["type"]),
        "const" not in schema or _equal(schema["const"], value),
        "enum" not in schema or any(_equal(option, value) for option in schema["enum"]),
        all(valid(s, value) for s in schema.get("allOf", [])),
        "anyOf" not in schema or any(valid(s, value) for s in schema["anyOf"]),
        "oneOf" not in schema or sum(valid(s, value) for s in schema["oneOf"]) == 1,
        "not" not in schema or not valid(schema["not"], value),
    ]
    if kind in ("integer", "number"):
        number = Decimal(str(value))
        checks += [
            "minimum" not in schema or number >= Decimal(str(schema["minimum"])),
            "maximum" not in schema or number <= Decimal(str(schema["maximum"])),
            "exclusiveMinimum" not in schema or number > Decimal(str(schema["exclusiveMinimum"])),
            "exclusiveMaximum" not in schema or number < Decimal(str(schema["exclusiveMaximum"])),
            "multipleOf" not in schema or number % Decimal(str(schema["multipleOf"])) == 0,
        ]
    elif kind == "string":
        checks += [
            len(value) >= schema.get("minLength", 0),
            "maxLength" not in schema or len(value) <= schema["maxLength"],
            "pattern" not in schema or re.search(schema["pattern"], value) is not None,
        ]
    elif kind == "array":
        prefix = schema.get("prefixItems", [])
        checks += [
            all(valid(s, item) for s, item in zip(prefix, value, strict=False)),
            all(valid(schema.get("items", True), item) for item in value[len(prefix):]),
            len(value) >= schema.get("minItems", 0),
            "maxItems" not in schema or len(value) <= schema["maxItems"],
        ]
        if "contains" in schema:
            count = sum(valid(schema["contains"], item) for item in value)
            checks += [count >= schema.get("minContains", 1),
                       "maxContains" not in schema or count <= schema["maxContains"]]
    elif kind == "object":
        properties = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        for name, member in value.items():
            matched = [s for p, s in patterns.items() if re.search(p, name)]
            checks.append(valid(properties[name], member) if name in properties else True)
            checks += [valid(s, member) for s in matched]
            if name not in properties and not matched:
                checks.append(valid(schema.get("additionalProperties", True), member))
        checks += [
            all(name in value for name in schema.get("required", [])),
            len(value) >= schema.get("minProperties", 0),
            "maxProperties" not in schema or len(value) <= schema["maxProperties"],
        ]
    return all(checks)


# -- strategies --------------------------------------------------------------------------------
small_numbers = st.sampled_from([-3, -1, 0, 1, 2, 3, 5, 10, 0.5, 1.5, -2.25, 2.0])
scalars = st.none() | st.booleans() | small_numbers | st.text(alphabet="ab1é", max_size=4)
instances = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(NAMES), inner,
                                                                max_size=3),
    max_leaves=6,
)


def _drop_none(schema: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in schema.items() if value is not None}


numeric = st.builds(
    lambda kind, low, high, exclusive, step: _drop_none({
        "type": kind, "minimum": None if exclusive else low,
        "exclusiveMinimum": low if exclusive else None, "maximum": high, "multipleOf": step}),
    st.sampled_from(["integer", "number"]), st.none() | small_numbers,
    st.none() | small_numbers, st.booleans(), st.none() | st.sampled_from([1, 2, 0.5, 1.5]))
textual = st.builds(
    lambda low, high, pattern: _drop_none({"type": "string", "minLength": low,
                                           "maxLength": high, "pattern": pattern}),
    st.none() | st.integers(0, 2), st.none() | st.integers(1, 3),
    st.none() | st.sampled_from(PATTERNS))
leaves = (st.builds(lambda t: {"type": t}, st.sampled_from(
    ["null", "boolean", "integer", "number", "string", "array", "object"]))
    | numeric | textual | st.booleans()
    | st.builds(lambda v: {"const": v}, instances)
    | st.builds(lambda vs: {"enum": vs}, st.lists(instances, min_size=1, max_size=3)))


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    objects = st.builds(
        lambda props, required, additional, patterns, counts: _drop_none({
            "type": "object", "properties": props, "required": required,
            "additionalProperties": additional, "patternProperties": patterns,
            "minProperties": counts[0], "maxProperties": counts[1]}),
        st.dictionaries(st.sampled_from(NAMES), inner, max_size=3),
        st.none() | st.lists(st.sampled_from(NAMES), max_size=2, unique=True),
        st.none() | st.booleans() | inner,
        st.none() | st.dictionaries(st.sampled_from(PATTERNS), inner, max_size=2),
        st.tuples(st.none() | st.integers(0, 2), st.none() | st.integers(1, 3)))
    arrays = st.builds(
        lambda prefix, items, counts, contains: _drop_none({
            "type": "array", "prefixItems": prefix, "items": items, "minItems": counts[0],
            "maxItems": counts[1], **(contains or {})}),
        st.none() | st.lists(inner, min_size=1, max_size=2), st.none() | inner,
        st.tuples(st.none() | st.integers(0, 2), st.none() | st.integers(1, 3)),
        st.none() | st.builds(lambda c, low, high: _drop_none(
            {"contains": c, "minContains": low, "maxContains": high}), inner,
            st.none() | st.integers(0, 2), st.none() | st.integers(1, 2)))
    combined = st.builds(lambda key, schemas: {key: schemas},
                         st.sampled_from(["allOf", "anyOf", "oneOf"]),
                         st.lists(inner, min_size=1, max_size=3))
    return objects | arrays | combined | st.builds(lambda s: {"not": s}, inner)


schemas = st.recursive(leaves, _containers, max_leaves=5)


# -- the contract ------------------------------------------------------------------------------
@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow,
                                                   HealthCheck.data_too_large])
@given(schemas, st.lists(instances, min_size=1, max_size=12))
def test_grammar_agrees_with_the_validator(schema: Any, values: list[Any]) -> None:
    grammar = Grammar.from_json_schema(schema, lenient=True, property_order="any")
    warned = any(d.severity is Severity.WARNING for d in grammar.warnings)
    for value in values:
        expected = valid(schema, value)
        for text in {json.dumps(value), json.dumps(value, indent=1, ensure_ascii=False)}:
            accepted = grammar.matches(text)
            if warned:
                assert accepted or not expected, (text, "valid instance rejected")
            else:
                assert accepted == expected, (text, expected)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(schemas, st.lists(instances, min_size=1, max_size=6))
def test_compact_mode_agrees_with_flexible(schema: Any, values: list[Any]) -> None:
    flexible = Grammar.from_json_schema(schema, lenient=True, property_order="any")
    compact = Grammar.from_json_schema(schema, lenient=True, property_order="any",
                                       whitespace="compact")
    for value in values:
        text = json.dumps(value, separators=(",", ":"))
        assert compact.matches(text) == flexible.matches(text), text


# -- hostile input -----------------------------------------------------------------------------
KEYWORDS = ["type", "properties", "items", "prefixItems", "required", "enum", "const", "allOf",
            "anyOf", "oneOf", "not", "if", "then", "else", "$ref", "$defs", "minimum",
            "maximum", "multipleOf", "minLength", "maxLength", "pattern", "format",
            "additionalProperties", "patternProperties", "contains", "maxContains",
            "minItems", "uniqueItems", "propertyNames", "dependentRequired", "$id", "$anchor",
            "exclusiveMaximum", "unevaluatedProperties", "dependentSchemas", "minProperties"]
junk_scalars = (st.none() | st.booleans() | st.integers(-10**20, 10**20)
                | st.floats(allow_nan=False, allow_infinity=False)
                | st.sampled_from(["#", "#/$defs/a", "#/properties", "string", "^(a+)+$",
                                   "[", "date", "object", "integer", "a", "\\p{L}"]))
junk = st.recursive(
    junk_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(KEYWORDS + ["a", "b"]), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(junk)
def test_hostile_schemas_end_in_a_diagnostic(schema: Any) -> None:
    """Any input gives a grammar or a SchemaError (with diagnostics), never another error."""
    from grammarkit.convert.errors import SchemaError

    for lenient in (False, True):
        try:
            grammar = Grammar.from_json_schema(schema, lenient=lenient)
        except SchemaError as exc:
            assert exc.diagnostics
        else:
            grammar.to_ebnf()
