"""``match``/``explain`` name a property that comes too late for a schema-order grammar (issue 12
item 3): the prettier docs example against a minimized SchemaStore prettierrc schema.

Golden transcripts live in ``tests/cli/key_order/``; regenerate them with
``GRAMMARKIT_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import grammarkit as gk
from grammarkit.automata.earley import Recognizer
from grammarkit.automata.key_order import (
    CLI_HINT,
    LIBRARY_HINT,
    KeyOrderExplanation,
    key_order_explanation,
)
from grammarkit.cli import main

HERE = Path(__file__).resolve().parent / "key_order"
SCHEMA = HERE / "prettierrc.schema.json"
PRETTIER_EXAMPLE = '{"trailingComma": "es5", "tabWidth": 4, "semi": false, "singleQuote": true}'
UPDATE_GOLDEN = os.environ.get("GRAMMARKIT_UPDATE_GOLDEN") == "1"


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="grammarkit")


@pytest.fixture(scope="module")
def schema_order() -> gk.Grammar:
    return gk.Grammar.from_json_schema(SCHEMA)


@pytest.fixture()
def converted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The schema converted by the CLI into ``prettierrc.ebnf`` in the working folder."""
    monkeypatch.chdir(tmp_path)
    assert run(["convert", "json-schema", str(SCHEMA), "-o", "prettierrc.ebnf"]).exit_code == 0
    return "prettierrc.ebnf"


@pytest.mark.parametrize("name, options", [
    ("match_text", []),
    ("match_json", ["--format", "json"]),
])
def test_match_names_the_property_out_of_schema_order(converted: str, name: str,
                                                      options: list[str]) -> None:
    args = ["match", *options, converted, PRETTIER_EXAMPLE]
    result = run(args)
    actual = (f"$ grammarkit {shlex.join(args)}\n[exit {result.exit_code}]\n"
              f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    golden = HERE / f"{name}.txt"
    if UPDATE_GOLDEN:
        golden.write_text(actual, "utf-8")
    assert actual == golden.read_text("utf-8")


def test_cli_hint_names_the_cli_option_and_any_order_accepts(converted: str) -> None:
    result = run(["match", converted, PRETTIER_EXAMPLE])
    assert "property `tabWidth` comes before `trailingComma` in the schema" in result.stdout
    assert "--property-order any" in result.stderr
    assert "property_order=" not in result.stdout + result.stderr
    assert run(["convert", "json-schema", "--property-order", "any", str(SCHEMA),
                "-o", "any.ebnf"]).exit_code == 0
    assert run(["match", "any.ebnf", PRETTIER_EXAMPLE]).stdout == "accepted\n"


def test_library_explanation_names_the_property_and_the_library_option(
        schema_order: gk.Grammar) -> None:
    explanation = schema_order.explain(PRETTIER_EXAMPLE)
    assert isinstance(explanation, KeyOrderExplanation)
    assert (explanation.key, explanation.before) == ("tabWidth", "trailingComma")
    assert str(explanation) == ("property `tabWidth` comes before `trailingComma` in the schema "
                                "(matching stopped at 1:35)")
    assert explanation.hint == LIBRARY_HINT
    assert 'property_order="any"' in LIBRARY_HINT and "--property-order" not in LIBRARY_HINT
    assert "--property-order any" in CLI_HINT and "property_order=" not in CLI_HINT
    reordered = json.dumps(dict(sorted(json.loads(PRETTIER_EXAMPLE).items())))
    assert schema_order.matches(reordered)


@pytest.mark.parametrize("text, key, before", [
    # a required property written after an optional one: the later member belongs earlier
    ('{"overrides": [{"options": {"semi": true}, "files": "*.md"}]}', "files", "options"),
    # in a nested object, out of order after several members in order
    (('{"overrides": [{"files": "x", "options": {"printWidth": 80, "useTabs": true, '
      '"semi": true}}]}'), "semi", "useTabs"),
    # an undeclared property between two declared ones, which are out of order
    ('{"semi": true, "other": 4, "printWidth": 3}', "printWidth", "semi"),
    # line breaks and indentation between members are kept
    ('{\n  "useTabs": true,\n  "semi": false\n}\n', "semi", "useTabs"),
])
def test_names_the_misplaced_property(schema_order: gk.Grammar, text: str, key: str,
                                      before: str) -> None:
    explanation = schema_order.explain(text)
    assert isinstance(explanation, KeyOrderExplanation)
    assert (explanation.key, explanation.before) == (key, before)


@pytest.mark.parametrize("text", [
    '{"semi": true, "tabWidth": "4", "printWidth": 3}',  # a wrong value, not the order
    '{"overrides": [{"files": "x", "extra": 1}]}',  # an unknown key where none is allowed
    '{"trailingComma": "es5", "tabWidth": 4',  # not JSON
    '{"semi": true, "semi": false}',  # a repeated key: no order fixes it
    '[{"semi": true}]',  # no object where matching stops
])
def test_other_rejections_keep_their_explanation(schema_order: gk.Grammar, text: str) -> None:
    explanation = schema_order.explain(text)
    assert explanation is not None
    assert not isinstance(explanation, KeyOrderExplanation)
    assert "expected" in str(explanation)


@pytest.mark.parametrize("order", ["schema", "any"])
def test_an_undeclared_key_is_not_blamed_on_order(order: str) -> None:
    # SchemaStore's venvironment unicode test, read by a YAML loader, starts with a byte-order
    # mark inside its first key; moving a later member before that key fixes nothing
    schema = {"type": "object", "additionalProperties": False, "properties": {
        "version": {"type": "string"}, "system-variables": {"type": "array"}}}
    grammar = gk.Grammar.from_json_schema(schema, property_order=order)
    explanation = grammar.explain('{"\ufeffversion": "2.2.0", "system-variables": []}')
    assert explanation is not None
    assert not isinstance(explanation, KeyOrderExplanation)
    assert "expected" in str(explanation)


def test_large_objects_are_diagnosed_in_bounded_time() -> None:
    names = [f"p{i:04d}" for i in range(300)]
    grammar = gk.Grammar.from_json_schema({
        "type": "object", "additionalProperties": False,
        "properties": {name: {"type": "integer"} for name in names}})
    text = json.dumps({name: 1 for name in reversed(names)})
    explanation = grammar.explain(text, timeout=30)
    assert isinstance(explanation, KeyOrderExplanation)
    assert (explanation.key, explanation.before) == ("p0298", "p0299")


def test_no_time_left_keeps_the_character_level_explanation(schema_order: gk.Grammar) -> None:
    recognizer = Recognizer(schema_order.compiled)
    data = PRETTIER_EXAMPLE.encode()
    plain = recognizer.explain(data)
    assert plain is not None and not isinstance(plain, KeyOrderExplanation)
    assert key_order_explanation(recognizer, data, plain, 0.0) is plain
    assert isinstance(key_order_explanation(recognizer, data, plain, 10.0), KeyOrderExplanation)


def test_a_member_with_its_own_misplaced_keys_still_explains_the_outer_order() -> None:
    # SchemaStore's pre-commit-config test file: `repos` (declared before
    # `default_install_hook_types`) comes last, and its hooks have their own keys out of order
    schema = {"type": "object", "properties": {
        "ci": {"type": "object", "properties": {"skip": {"type": "array"}}},
        "repos": {"type": "array", "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "args": {"type": "array"}, "entry": {"type": "string"}}}},
        "default_install_hook_types": {"type": "array"}}, "required": ["repos"]}
    text = ('{\n  "ci": {"skip": []},\n  "default_install_hook_types": ["pre-commit"],\n'
            '  "repos": [{"id": "x", "entry": "y", "args": []}]\n}\n')
    explanation = gk.Grammar.from_json_schema(schema).explain(text)
    assert isinstance(explanation, KeyOrderExplanation)
    assert (explanation.key, explanation.before, explanation.line) == (
        "repos", "default_install_hook_types", 3)
