"""JSON Schema to grammar: what each keyword accepts and rejects, options, diagnostics."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.errors import SchemaError
from grammarkit.diagnostics import Severity


def grammar(schema: Any, **options: Any) -> Grammar:
    return Grammar.from_json_schema(schema, **options)


def accepts(schema: Any, *texts: str, **options: Any) -> list[bool]:
    g = grammar(schema, **options)
    return [g.matches(text) for text in texts]


def codes(g: Grammar) -> set[str]:
    return {d.code for d in g.warnings}


# -- types and scalars -------------------------------------------------------------------------
@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "null"}, ["null"], ["0", "false", '""']),
    ({"type": "boolean"}, ["true", "false"], ["1", "null"]),
    ({"type": "integer"}, ["0", "-0", "12", "1.0", "-3.00", "1e5", "2E+3"],
     ["1.5", "1e-1", "01", "1.", '"1"', "+1"]),
    ({"type": "number"}, ["0", "-1.25", "3e-7", "1E+308"], ["1.", ".5", "-", "NaN", "0x1"]),
    ({"type": "string"}, ['""', '"a b"', '"\\u00e9"', '"\\ud83d\\ude00"', '"\\/\\n"'],
     ['"\\ud83d"', '"\\x"', '"a\nb"', "'a'"]),
    ({"type": ["string", "null"]}, ['"x"', "null"], ["1"]),
    ({"type": "string", "nullable": True}, ['"x"', "null"], ["1"]),
    (True, ["null", "[1,{}]", '{"a":[]}'], ["", "nul"]),
    (False, [], ["null", "0", "{}"]),
    ({}, ["1", '"x"', "{}"], ["{"]),
])
def test_types(schema: Any, good: list[str], bad: list[str]) -> None:
    g = grammar(schema)
    assert [g.matches(t) for t in good] == [True] * len(good)
    assert [g.matches(t) for t in bad] == [False] * len(bad)


def test_integer_ranges_are_exact() -> None:
    g = grammar({"type": "integer", "minimum": -15, "exclusiveMaximum": 250})
    assert [g.matches(str(v)) for v in (-16, -15, 0, 99, 249, 250, 1000)] == [
        False, True, True, True, True, False, False]
    assert g.matches("-0") and g.matches("249.0") and not g.matches("2.5e1")


def test_number_ranges_with_fractions() -> None:
    g = grammar({"type": "number", "exclusiveMinimum": 0.5, "maximum": 10.25})
    verdicts = {t: g.matches(t) for t in ("0.5", "0.50001", "0.6", "10.25", "10.250", "10.2501",
                                          "10", "-1", "0")}
    assert verdicts == {"0.5": False, "0.50001": True, "0.6": True, "10.25": True,
                        "10.250": True, "10.2501": False, "10": True, "-1": False, "0": False}


def test_absurd_bounds_stay_small() -> None:
    g = grammar({"type": "number", "minimum": -1e300, "maximum": 1e300})
    assert len(g.to_ebnf()) < 4000
    assert g.matches("1" + "0" * 300) and not g.matches("1" + "0" * 300 + "1")
    assert g.matches("-9" * 1 + "9" * 299) and not g.matches("2" + "0" * 300)


def test_draft4_boolean_exclusive_bounds() -> None:
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "type": "number",
              "maximum": 3, "exclusiveMaximum": True}
    assert accepts(schema, "2.99", "3") == [True, False]


@pytest.mark.parametrize(("step", "good", "bad"), [
    (3, ["0", "-9", "300", "12.0"], ["1", "10", "1.5"]),
    (1.5, ["0", "4.5", "-4.5", "3"], ["35", "1", "1.4"]),
    (0.01, ["0.01", "12.34", "5", "0.10"], ["0.001", "1.005"]),
])
def test_multiple_of(step: float, good: list[str], bad: list[str]) -> None:
    g = grammar({"type": "number", "multipleOf": step})
    assert [g.matches(t) for t in good + bad] == [True] * len(good) + [False] * len(bad)


def test_multiple_of_with_bounds() -> None:
    g = grammar({"type": "integer", "multipleOf": 5, "minimum": 7, "maximum": 30})
    assert [v for v in range(40) if g.matches(str(v))] == [10, 15, 20, 25, 30]


# -- strings -----------------------------------------------------------------------------------
def test_length_counts_code_points_however_spelled() -> None:
    g = grammar({"type": "string", "minLength": 2, "maxLength": 3})
    assert [g.matches(t) for t in ('"ab"', '"abc"', '"abcd"', '"a"')] == [True, True, False, False]
    assert g.matches('"\\u0061\\n"') and g.matches('"💩💩"')
    assert not g.matches('"\\ud83d\\udca9"')
    assert g.matches('"\\ud83d\\udca9\\ud83d\\udca9"')


def test_pattern_searches_and_reads_decoded_values() -> None:
    g = grammar({"type": "string", "pattern": "a+b"})
    assert [g.matches(t) for t in ('"xaab"', '"ab"', '"ba"', '"\\u0061b"')] == [
        True, True, False, True]
    anchored = grammar({"type": "string", "pattern": '^"\\d$'})
    assert anchored.matches('"\\"7"') and not anchored.matches('"x\\"7"')


def test_pattern_dot_and_space_follow_ecma() -> None:
    g = grammar({"type": "string", "pattern": "^a.b\\sc$"})
    assert g.matches('"axb\\u3000c"') and not g.matches('"a\\nb c"')


def test_pattern_together_with_lengths() -> None:
    g = grammar({"type": "string", "pattern": "^[a-z]+[0-9]*$", "minLength": 3, "maxLength": 5})
    verdicts = [g.matches(f'"{s}"') for s in ("ab", "abc", "ab12", "abcde", "abcdef", "a1b")]
    assert verdicts == [False, True, True, True, False, False]
    assert not codes(g)


def test_format_beside_lengths_too_large_to_intersect_is_reported() -> None:
    schema = {"type": "string", "format": "email", "maxLength": 254}
    with pytest.raises(SchemaError) as caught:
        grammar(schema)
    assert caught.value.diagnostics[0].code == "GK155"
    g = grammar(schema, lenient=True)
    assert codes(g) == {"GK255"} and g.matches('"a@b.c"')


def test_format_together_with_lengths() -> None:
    g = grammar({"type": "string", "format": "date-time", "maxLength": 20})
    assert g.matches('"2024-02-29T12:00:00Z"') and not g.matches('"2024-02-29T12:00:00.5Z"')
    assert not g.matches('"2023-02-29T12:00:00Z"')


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("date", ["2024-02-29", "2000-02-29", "1999-12-31"], ["1900-02-29", "2023-04-31", "2023-1-1"]),
    ("time", ["23:59:60Z", "08:30:06.283185+05:30"], ["24:00:00Z", "08:30:06", "8:30:06Z"]),
    ("duration", ["P1Y2M3DT4H5M6S", "PT0S", "P4W"], ["P", "PT", "P1D2Y", "PT1H1S"]),
    ("email", ["a.b@example.com", '"x y"@ex.org', "u@[127.0.0.1]"], ["a@", "@b", "a..b@c"]),
    ("hostname", ["example.com", "a-b.c"], ["-a.com", "a..b", "a_b"]),
    ("ipv4", ["127.0.0.1", "255.255.255.255"], ["256.0.0.1", "01.1.1.1", "1.2.3"]),
    ("ipv6", ["::1", "fe80::1:2", "::ffff:1.2.3.4"], ["1::2::3", "12345::", ":::"]),
    ("uri", ["https://a.b/c?d#e", "urn:isbn:123"], ["//a.b", "a b:c", "1http://x"]),
    ("uri-reference", ["../a?b", "#x", ""], ["a b", "%zz"]),
    ("uuid", ["2eb8aa08-aa98-11ea-b4aa-73b441d1638e"], ["2eb8aa08-aa98-11ea-b4aa-73b441d1638"]),
    ("json-pointer", ["", "/a~0b/c~1d"], ["a", "/~2"]),
])
def test_formats(name: str, good: list[str], bad: list[str]) -> None:
    g = grammar({"type": "string", "format": name})
    assert [g.matches(json.dumps(s)) for s in good] == [True] * len(good)
    assert [g.matches(json.dumps(s)) for s in bad] == [False] * len(bad)


def test_unknown_format_warns_and_accepts_any_string() -> None:
    g = grammar({"type": "string", "format": "x-custom"})
    assert "GK256" in codes(g) and g.matches('"anything"')


def test_format_is_an_annotation_when_2020_12_is_declared() -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "format": "email"}
    g = grammar(schema)
    assert g.matches('"not an email"')
    assert [d.severity for d in g.warnings] == [Severity.NOTE]


# -- enum and const ----------------------------------------------------------------------------
def test_const_matches_every_json_equal_spelling() -> None:
    g = grammar({"const": {"a": [1, "é"], "b": None}}, property_order="any")
    assert g.matches('{"b":null,"a":[1.0,"\\u00e9"]}')
    assert g.matches('{ "a" : [ 1 , "\\u00E9" ] , "b" : null }')
    assert not g.matches('{"a":[1,"é"]}') and not g.matches('{"a":[1,"é"],"b":null,"c":1}')


def test_enum_keeps_types_apart() -> None:
    g = grammar({"enum": [0, False, "a\nb", [1], None]})
    assert [g.matches(t) for t in ("0", "-0.0", "false", '"a\\nb"', "[1.0]", "null")] == [True] * 6
    assert [g.matches(t) for t in ("1", "true", '"a"', "[true]", '"0"')] == [False] * 5


# -- objects -----------------------------------------------------------------------------------
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}


def test_schema_order() -> None:
    g = grammar(PERSON)
    assert g.matches('{"name":"a","age":3}') and g.matches('{"name":"a","extra":[1]}')
    assert not g.matches('{"age":3,"name":"a"}') and not g.matches('{"age":3}')


def test_declared_names_never_slip_in_as_additional_properties() -> None:
    g = grammar(PERSON)
    assert not g.matches('{"name":"a","x":1,"age":-1}')
    assert not g.matches('{"name":"a","\\u0061ge":-1}')
    assert g.matches('{"name":"a","ages":-1}')


def test_any_order_enforces_required() -> None:
    g = grammar(PERSON, property_order="any")
    assert g.matches('{"age":3,"name":"a"}') and g.matches('{"x":1,"name":"a"}')
    assert not g.matches('{"age":3}') and not g.matches("{}")
    assert not codes(g)


def test_any_order_with_many_required_warns() -> None:
    schema = {"type": "object", "required": [f"p{i}" for i in range(12)]}
    g = grammar(schema, property_order="any")
    assert "GK257" in codes(g)
    assert g.matches("{}")


def test_additional_and_pattern_properties() -> None:
    schema = {"properties": {"id": {"type": "integer"}},
              "patternProperties": {"^x-": {"type": "string"}},
              "additionalProperties": False}
    g = grammar(schema, property_order="any")
    assert g.matches('{"x-a":"s","id":1}') and not g.matches('{"x-a":1}')
    assert not g.matches('{"y":1}') and not g.matches('{"id":"1"}')


def test_property_names_and_counts() -> None:
    g = grammar({"type": "object", "propertyNames": {"maxLength": 2}, "minProperties": 1,
                 "maxProperties": 2}, property_order="any")
    assert [g.matches(t) for t in ('{"a":1}', '{"a":1,"bb":2}', "{}", '{"abc":1}',
                                   '{"a":1,"b":2,"c":3}')] == [True, True, False, False, False]


def test_dependent_required() -> None:
    g = grammar({"dependentRequired": {"card": ["billing"]}}, property_order="any")
    assert g.matches('{"billing":1,"card":2}') and g.matches('{"billing":1}')
    assert not g.matches('{"card":2}')


def test_schema_order_with_dependencies_and_counts() -> None:
    schema = {"properties": {"a": {}, "b": {}, "c": {}},
              "dependentRequired": {"c": ["a"], "a": ["b"]}, "maxProperties": 3}
    g = grammar(schema)
    verdicts = {t: g.matches(t) for t in ('{"b":1}', '{"a":1,"b":1}', '{"a":1}', '{"c":1}',
                                           '{"a":1,"b":1,"c":1}', '{"b":1,"c":1}',
                                           '{"a":1,"b":1,"c":1,"x":1}', '{"x":1}', "{}")}
    assert verdicts == {'{"b":1}': True, '{"a":1,"b":1}': True, '{"a":1}': False,
                        '{"c":1}': False, '{"a":1,"b":1,"c":1}': True, '{"b":1,"c":1}': False,
                        '{"a":1,"b":1,"c":1,"x":1}': False, '{"x":1}': True, "{}": True}


def test_min_properties_counts_declared_and_other_names() -> None:
    g = grammar({"properties": {"a": {}}, "minProperties": 2})
    assert [g.matches(t) for t in ('{"a":1}', '{"a":1,"b":2}', '{"b":1,"c":2}', '{"b":1}')] == [
        False, True, True, False]


def test_strict_forbids_undeclared_members() -> None:
    g = grammar(PERSON, strict=True)
    assert g.matches('{"name":"a"}') and not g.matches('{"name":"a","x":1}')
    arrays = grammar({"type": "array", "prefixItems": [{"type": "integer"}]}, strict=True)
    assert arrays.matches("[1]") and not arrays.matches("[1,2]")


# -- arrays ------------------------------------------------------------------------------------
def test_prefix_items_and_bounds() -> None:
    g = grammar({"prefixItems": [{"type": "string"}, {"type": "integer"}],
                 "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3})
    verdicts = [g.matches(t) for t in ('["a"]', '["a",1]', '["a",1,true]', '["a",1,true,false]',
                                       "[]", "[1]", '["a",1,2]')]
    assert verdicts == [True, True, True, False, False, False, False]


def test_contains_counts_exactly() -> None:
    g = grammar({"type": "array", "contains": {"const": 1}, "minContains": 2, "maxContains": 3})
    verdicts = [g.matches(t) for t in ("[1,1]", "[1,2,1]", "[1,1,1,1]", "[1]", "[2,3]")]
    assert verdicts == [True, True, False, False, False]


def test_unique_items_of_few_arrays_are_listed() -> None:
    g = grammar({"type": "array", "items": {"enum": [1, "a", True]}, "maxItems": 2,
                 "uniqueItems": True})
    assert not codes(g)
    assert [g.matches(t) for t in ("[]", '[1,"a"]', "[true,1.0]", "[1,1.0]", '["a","a"]')] == [
        True, True, True, False, False]


def test_unique_items_is_relaxed_with_a_warning() -> None:
    with pytest.raises(SchemaError) as caught:
        grammar({"type": "array", "uniqueItems": True})
    assert caught.value.pointer == "/uniqueItems" and "GK154" in str(caught.value)
    g = grammar({"type": "array", "uniqueItems": True}, lenient=True)
    assert codes(g) == {"GK254"} and g.matches("[1,1]")
    assert not codes(grammar({"type": "array", "uniqueItems": True, "maxItems": 1}))


# -- combinators and references ----------------------------------------------------------------
def test_all_of_merges_objects() -> None:
    schema = {"allOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                        {"properties": {"b": {"type": "string"}}, "required": ["b"]}]}
    g = grammar(schema, property_order="any")
    assert g.matches('{"b":"x","a":1}') and not g.matches('{"a":1}')
    assert not g.matches('{"a":"1","b":"x"}')


def test_one_of_is_exact_for_overlapping_branches() -> None:
    g = grammar({"oneOf": [{"type": "integer"}, {"minimum": 2}]})
    assert [g.matches(t) for t in ("1", "2.5", "3", "1.5")] == [True, True, False, False]
    assert not codes(g)


def test_discriminated_union() -> None:
    branch = {"type": "object", "required": ["kind"]}
    schema = {"oneOf": [
        {**branch, "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}}},
        {**branch, "properties": {"kind": {"const": "square"}, "side": {"type": "number"}}},
    ]}
    g = grammar(schema)
    assert g.matches('{"kind":"circle","r":1}') and g.matches('{"kind":"square","side":2}')
    assert not g.matches('{"kind":"triangle"}')


def test_chains_of_conditionals_stay_exact_and_small() -> None:
    schema = {"allOf": [{"if": {"properties": {"t": {"const": i}}, "required": ["t"]},
                         "then": {"required": [f"x{i}"]}} for i in range(12)]}
    g = grammar(schema, property_order="any")
    assert not codes(g) and len(g.rule_names) < 200
    assert [g.matches(t) for t in ('{"t":1,"x1":0}', '{"t":1}', '{"t":20}', '{"t":3,"x1":1}')] == [
        True, False, True, False]


def test_not_and_conditionals() -> None:
    assert accepts({"not": {"type": ["string", "null"]}}, "1", '"a"', "null") == [
        True, False, False]
    schema = {"if": {"exclusiveMaximum": 0}, "then": {"minimum": -10},
              "else": {"multipleOf": 2}}
    assert accepts(schema, "-1", "-100", "4", "3") == [True, False, True, False]


def test_recursive_references() -> None:
    tree = {"$defs": {"node": {"type": "object", "properties": {
        "value": {"type": "integer"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
        "required": ["value"], "additionalProperties": False}},
        "$ref": "#/$defs/node"}
    g = grammar(tree)
    assert g.matches('{"value":1,"children":[{"value":2,"children":[{"value":3}]}]}')
    assert not g.matches('{"value":1,"children":[{"children":[]}]}')


def test_anchor_and_relative_ids() -> None:
    schema = {"$id": "https://example.com/root.json", "$ref": "item.json#count",
              "$defs": {"item": {"$id": "item.json", "$defs": {
                  "c": {"$anchor": "count", "type": "integer"}}}}}
    assert accepts(schema, "3", '"3"') == [True, False]


def test_draft7_definitions_and_ref_overriding_siblings() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#",
              "definitions": {"n": {"type": "integer"}},
              "properties": {"a": {"$ref": "#/definitions/n", "type": "string"}}}
    assert accepts(schema, '{"a":1}', '{"a":"x"}') == [True, False]


def test_remote_ref_is_reported() -> None:
    with pytest.raises(SchemaError) as caught:
        grammar({"properties": {"a": {"$ref": "https://example.com/other.json"}}})
    assert caught.value.pointer == "/properties/a/$ref"
    g = grammar({"properties": {"a": {"$ref": "https://example.com/other.json"}}}, lenient=True)
    assert codes(g) == {"GK254"} and g.matches('{"a":[1]}')


@pytest.mark.parametrize("draft", ["draft-07", "draft-04", "2020-12"])
def test_a_relaxed_remote_ref_is_never_subtracted_or_negated(draft: str) -> None:
    # SchemaStore's jekyll.json (draft-07): `nullable-timezone` is `oneOf: [{"$ref":
    # "base.json#/..."}, {"type": "null"}]`; the relaxed reference accepts anything, and
    # subtracting it from the other branch rejected `null`, which the schema allows
    meta = (f"http://json-schema.org/{draft}/schema#" if draft.startswith("draft")
            else f"https://json-schema.org/draft/{draft}/schema")
    remote = {"$ref": "base.json#/definitions/timezone"}
    one_of = grammar({"$schema": meta, "oneOf": [remote, {"type": "null"}]}, lenient=True)
    assert one_of.matches("null") and one_of.matches('"UTC"')
    negated = grammar({"$schema": meta, "not": remote}, lenient=True)
    assert negated.matches("1") and negated.matches("null")


# -- whitespace and layout ---------------------------------------------------------------------
DOC = {"name": "a", "tags": ["x", "y"], "pos": {"x": 1, "y": -2.5}, "empty": [], "none": {}}
DOC_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "pos": {"type": "object", "properties": {"x": {"type": "number"},
                                                   "y": {"type": "number"}}},
        "empty": {"type": "array"},
        "none": {"type": "object"},
    },
}


@pytest.mark.parametrize(("options", "dumps"), [
    ({"whitespace": "compact"}, {"separators": (",", ":")}),
    ({"whitespace": "compact", "separators": (", ", ": ")}, {}),
    ({"whitespace": "indented"}, {"indent": 2}),
    ({"whitespace": "indented", "indent": 4, "separators": (",", ": ")}, {"indent": 4}),
    ({"whitespace": "flexible"}, {"indent": 3}),
    ({"whitespace": "flexible"}, {"separators": (",", ":")}),
])
def test_layouts(options: dict[str, Any], dumps: dict[str, Any]) -> None:
    g = grammar(DOC_SCHEMA, **options)
    assert g.matches(json.dumps(DOC, **dumps))


def test_compact_and_indented_are_exact() -> None:
    compact = grammar(DOC_SCHEMA, whitespace="compact")
    assert not compact.matches(json.dumps(DOC))
    indented = grammar(DOC_SCHEMA, whitespace="indented")
    assert not indented.matches(json.dumps(DOC, indent=3))


def test_no_whitespace_around_the_root() -> None:
    assert accepts({"type": "integer"}, " 1", "1 ", "1") == [False, False, True]


def test_invalid_options() -> None:
    with pytest.raises(ValueError, match="whitespace"):
        grammar({}, whitespace="loose")
    with pytest.raises(ValueError, match="indent"):
        grammar({}, indent=2)
    with pytest.raises(ValueError, match="separators"):
        grammar({}, whitespace="compact", separators=(";", "="))
    with pytest.raises(ValueError, match="property_order"):
        grammar({}, property_order="sorted")


# -- inputs ------------------------------------------------------------------------------------
def test_schema_as_text_path_bytes_and_pydantic(tmp_path: Any) -> None:
    pydantic = importlib.import_module("pydantic")
    text = json.dumps(PERSON)
    path = tmp_path / "person.json"
    path.write_text(text)

    class Person(pydantic.BaseModel):  # type: ignore[name-defined]
        name: str
        age: int = 0

    for source in (text, text.encode(), str(path), path, Person):
        g = grammar(source)
        assert g.matches('{"name":"a","age":3}'), source


# -- diagnostics and bad input -----------------------------------------------------------------
def test_every_unenforceable_keyword_is_named_with_its_pointer() -> None:
    schema = {"properties": {"a": {"type": "array", "uniqueItems": True},
                             "b": {"$ref": "https://x.org/y.json"}}}
    with pytest.raises(SchemaError) as caught:
        grammar(schema)
    pointers = {d.pointer for d in caught.value.diagnostics}
    assert pointers == {"/properties/a/uniqueItems", "/properties/b/$ref"}
    g = grammar(schema, lenient=True)
    assert {d.pointer for d in g.warnings} == pointers


@pytest.mark.parametrize(("schema", "code", "pointer"), [
    ('{"type": "object",', "GK150", ""),
    ("[1, 2]", "GK150", ""),
    ({"type": "strng"}, "GK150", "/type"),
    ({"minLength": -1}, "GK150", "/minLength"),
    ({"properties": {"a": {"$ref": "#/$defs/missing"}}}, "GK151", "/properties/a/$ref"),
    ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
     "GK152", "/$defs/a"),
])
def test_invalid_schemas(schema: Any, code: str, pointer: str) -> None:
    with pytest.raises(SchemaError) as caught:
        grammar(schema, lenient=True)
    assert caught.value.diagnostics[0].code == code
    assert caught.value.pointer == pointer


def test_invalid_json_is_located() -> None:
    with pytest.raises(SchemaError) as caught:
        grammar('{\n  "type": "object",\n  "properties": {,}\n}')
    position = caught.value.diagnostics[0].position
    assert position is not None and (position.line, position.column) == (3, 18)


def test_diagnostics_point_into_schema_files(tmp_path: Any) -> None:
    from grammarkit.convert.json_schema import lint_schema_file

    path = tmp_path / "item.schema.json"
    path.write_text('{\n  "type": "array",\n  "uniqueItems": true\n}\n')
    (found,) = lint_schema_file(path)
    # What `convert json-schema` reports (an error without --lenient), worded for the CLI.
    assert found.code == "GK154" and found.position is not None
    assert (found.position.line, found.position.column) == (3, 3)
    assert found.hint is not None and "--lenient" in found.hint
    with pytest.raises(SchemaError) as caught:
        grammar(path)
    assert "item.schema.json:3:3: GK154" in str(caught.value)
    (relaxed,) = lint_schema_file(path, lenient=True)
    assert relaxed.code == "GK254"


def test_deep_nesting_is_refused() -> None:
    text = '{"items": ' * 10_000 + "{}" + "}" * 10_000
    schema: Any = {"type": "integer"}
    for _ in range(10_000):
        schema = {"type": "array", "items": schema}
    for source in (text, schema):
        with pytest.raises(SchemaError) as caught:
            grammar(source)
        assert caught.value.diagnostics[0].code == "GK153"


def test_huge_enum_converts() -> None:
    g = grammar({"enum": [f"value-{i}" for i in range(5000)] + list(range(5000))})
    assert g.matches('"value-4999"') and g.matches("4999") and not g.matches('"value-5000"')


def test_catastrophic_pattern_is_bounded() -> None:
    schema = {"type": "string", "pattern": "^(a|aa)*(b|a{0,30}){0,30}c$", "maxLength": 40}
    with pytest.raises(SchemaError) as caught:
        grammar(schema)
    assert caught.value.diagnostics[0].code == "GK155"
    g = grammar(schema, lenient=True)
    assert codes(g) == {"GK255"} and g.matches('"aac"')


def test_cyclic_python_dict_is_refused() -> None:
    schema: dict[str, Any] = {"type": "object"}
    schema["properties"] = {"self": schema}
    with pytest.raises(SchemaError):
        grammar(schema)


# -- the EBNF text -----------------------------------------------------------------------------
def test_rule_names_follow_pointers() -> None:
    schema = {"type": "object", "properties": {"address": {"$ref": "#/$defs/Address"}},
              "$defs": {"Address": {"type": "object", "properties": {
                  "city": {"type": "string", "maxLength": 50}, "zip": {"pattern": "^[0-9]+$"}}}}}
    names = grammar(schema).rule_names
    assert names[0] == "root" and "Address" in names


def test_conversion_is_deterministic() -> None:
    schema = {"anyOf": [{"enum": ["b", "a", "c"]}, {"properties": {"x": {"not": {"const": 1}}}}]}
    assert grammar(schema).to_ebnf() == grammar(json.loads(json.dumps(schema))).to_ebnf()


@pytest.mark.xgrammar
@pytest.mark.parametrize("schema", [
    PERSON,
    DOC_SCHEMA,
    {"type": "string", "pattern": "^[a-z]+@[a-z]+\\.[a-z]{2,}$", "maxLength": 20},
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]},
    {"type": "array", "contains": {"const": 1}, "maxContains": 2},
    {"type": "number", "multipleOf": 0.25, "maximum": 10},
])
@pytest.mark.parametrize("whitespace", ["flexible", "compact", "indented"])
def test_ebnf_compiles_in_xgrammar_and_agrees(schema: Any, whitespace: str) -> None:
    xgrammar = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    g = grammar(schema, whitespace=whitespace, property_order="any")
    compiled = xgrammar.Grammar.from_ebnf(g.to_ebnf())
    samples = ['{"name":"a","age":3}', '{"age":-1}', '"a@b.cd"', '"abcdefgh@ijklmn.opqrs"', "1",
               "2.5", "3", "[1,2,1]",
               "[1,1,1]", "9.75", "10.25", json.dumps(DOC), json.dumps(DOC, indent=2)]
    for text in samples:
        assert _is_grammar_accept_string(compiled, text) == g.matches(text), text
