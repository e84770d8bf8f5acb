"""Shapes of real SchemaStore schemas that made conversion slow (issue 12, item 15), minimized.

Each test keeps the verdicts of the shape's instances while checking what made it slow is gone:
property names spelled once per grammar, a pattern's matcher shared by many names, ``oneOf``
branches that multiply into thousands of object sets.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.json_schema import automata
from grammarkit.convert.json_schema import reader as reader_module
from grammarkit.convert.json_schema import strings as strings_module
from grammarkit.convert.json_schema.algebra import intersect
from grammarkit.convert.json_schema.automata import DFA
from grammarkit.convert.json_schema.languages import matches
from grammarkit.convert.json_schema.model import Node, Pattern, Ref
from grammarkit.convert.json_schema.reader import Reader
from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import Reporter


def accepts(schema: Any, *values: Any, **options: Any) -> list[bool]:
    g = Grammar.from_json_schema(schema, lenient=True, **options)
    return [g.matches(v if isinstance(v, str) else json.dumps(v)) for v in values]


def test_a_name_declared_by_many_objects_is_spelled_once() -> None:
    """utcm-monitor, template: hundreds of objects declaring the same names spelled each
    name character by character in every object (60% of a 5 MB grammar)."""
    shape = {"type": "object", "properties": {"displayName": {"type": "string"},
                                              "id": {"type": "integer"}}}
    schema = {"type": "object", "properties": {f"o{i}": shape for i in range(3)} | {
        f"p{i}": {**shape, "required": ["id"]} for i in range(3)}}
    text = Grammar.from_json_schema(schema).to_ebnf()
    # displayName spelled once, each character through its shared rule (`char.p ::= "p" |
    # "\\u0070"`), which the names' exclusion automaton uses too.
    assert text.count("char.d char.i char.s char.p char.l") == 1
    assert text.count('"\\\\u0070"') == 1
    g = Grammar.from_json_schema(schema)
    assert g.matches('{"o1": {"displayName": "x", "id": 1}, "p2": {"id": 2}}')
    assert g.matches('{"o1": {"\\u0064isplayName": "x"}, "p2": {"i\\u0064": 2}}')
    assert not g.matches('{"p2": {"displayName": "x"}}')
    assert not g.matches('{"o1": {"displayName": 1}}')



def test_objects_of_many_optional_properties_write_each_entry_once() -> None:
    """jreleaser, Kubernetes: objects of dozens of optional properties were 20-40% of the
    grammar as `after-a ::= , b V after-b | after-b`, naming each next rule twice; the skip is
    now `(, b V)? after-b`. The automaton states of other names are `s.N`, the names' letters
    shared `char.X` rules."""
    names = [f"option{letter}" for letter in "ABCDEFGH"]
    shape = {"type": "object", "properties": {n: {"type": "integer"} for n in names}}
    schema = {"type": "object", "properties": {"first": shape, "second": shape},
              "required": ["second"]}
    text = Grammar.from_json_schema(schema).to_ebnf()
    # Defined, after optionB, and as the first property written in either object.
    assert text.count("root.first.after-optionC") == 4
    assert re.search(r'^root\.first\.after-optionB ::= \(ws "," ws key\.optionC ws ":" ws '
                     r'json-integer\)\? root\.first\.after-optionC$', text, re.MULTILINE)
    assert re.search(r"^s\.1 ::= json-char s\.1 \| \"\"$", text, re.MULTILINE)
    assert 'key.optionA ::= "\\"" char.o char.p char.t char.i char.o char.n char.A "\\""' in text
    assert accepts(schema, {"second": {}}, {"first": {"optionC": 1}, "second": {"optionA": 2}},
                   {"second": {"optionB": 1, "optionH": 2, "other": [1]}}) == [True] * 3
    assert accepts(schema, {}, '{"second": {"optionB": 1, "optionB": 2}}',
                   {"second": {"optionH": 1, "optionB": 2}},
                   {"second": {"optionC": "x"}}) == [False] * 4


def test_constants_tested_against_one_large_pattern() -> None:
    """utcm-monitor: 270 ``if`` branches, each testing one constant against a 270-name
    case-insensitive pattern; the pattern's matcher is now shared by every name."""
    names = [f"microsoft.{area}.{kind}" for area in ("exchange", "teams", "entra")
             for kind in ("policy", "rule", "domain", "user", "group")]
    pattern = "^(" + "|".join("".join(f"[{c.upper()}{c}]" if c.isalpha() else re.escape(c)
                                      for c in name) for name in names) + ")$"
    branches = [{"if": {"properties": {"resourceType": {"const": name}}},
                 "then": {"properties": {"properties": {"required": [f"k{index}"]}}}}
                for index, name in enumerate(names)]
    schema = {"type": "object", "properties": {"resourceType": {"pattern": pattern},
                                               "properties": {"type": "object"}},
              "allOf": branches}
    assert accepts(schema,
                   {"resourceType": "microsoft.teams.user", "properties": {"k8": 1}},
                   {"resourceType": "microsoft.teams.user", "properties": {"k9": 1}},
                   {"resourceType": "MICROSOFT.TEAMS.USER", "properties": {"k9": 1}},
                   {"resourceType": "microsoft.teams.users", "properties": {}}) == [
        True, False, True, False]
    language = Pattern(pattern)
    for name in names:  # the remembered transitions give the same verdicts
        assert matches(language, name) and matches(language, name.upper())
        assert not matches(language, name + "x") and not matches(language, name[:-1])


def test_one_of_branches_told_apart_by_file_patterns() -> None:
    """compilerconfig, bundleconfig: seven ``oneOf`` branches told apart by a file-name
    pattern, beside properties that refer to another file (unresolved, so relaxed): 3,645
    object sets that absorb nothing, which ``without_absorbed`` compared pairwise."""
    kinds = {"less": "\\.less$", "sass": "\\.(scss|sass)$", "styl": "\\.styl$",
             "coffee": "\\.coffee$|\\.litcoffee$", "iced": "\\.iced$",
             "babel": "\\.(jsx|js|es6)$", "hbs": "\\.(hbs|handlebars)$"}
    branches = [{"properties": {"inputFile": {"pattern": pattern},
                                "options": {"$ref": f"defaults.json#/definitions/{kind}"},
                                "minify": {"$ref": "defaults.json#/definitions/minify"}}}
                for kind, pattern in kinds.items()]
    schema = {"type": "array", "items": {
        "required": ["outputFile", "inputFile"],
        "properties": {"inputFile": {"type": "string"}, "outputFile": {"type": "string"},
                       "minify": {"type": "object"}},
        "oneOf": branches}}
    assert accepts(schema, [{"inputFile": "a.less", "outputFile": "a.css"}],
                   [{"inputFile": "a.jsx", "outputFile": "a.js", "minify": {}}],
                   [{"inputFile": "a.txt", "outputFile": "a.css"}],
                   [{"outputFile": "a.css"}]) == [True, True, False, False]


def test_pattern_regions_relaxed_alike_are_written_once() -> None:
    """An uncompilable ``patternProperties`` pattern, relaxed, left its region identical to
    the additional names' one: a repeated alternative (lint GK207; the folder's fixture lints
    every converted grammar)."""
    assert accepts({"patternProperties": {"[": {}}}, {"a": 1}, {}, [1]) == [True, True, True]


def _sinks(count: int) -> dict[str, Any]:
    """vector's ``Sinks``: a ``oneOf`` of components, each its configuration (shared
    properties, ``additionalProperties: false``) beside a ``type`` constant."""
    definitions = {f"Config{i}": {"type": "object", "additionalProperties": False,
                                  "properties": {"type": {}, "inputs": {"type": "array"},
                                                 f"option{i}": {"type": "integer"}}}
                   for i in range(count)}
    branches = [{"allOf": [{"$ref": f"#/definitions/Config{i}"},
                           {"type": "object", "required": ["type"],
                            "properties": {"type": {"const": f"sink{i}"}}}]}
                for i in range(count)]
    return {"definitions": definitions, "oneOf": branches}


def test_one_of_branches_told_apart_by_a_discriminator(monkeypatch: Any) -> None:
    """vector: 65 sinks in one ``oneOf``, each told apart by its ``type`` constant; every
    pair of branches was intersected and searched for a possible object (0.8 s of 2.7 s).
    The constants now tell the pairs apart without intersecting any objects."""
    schema = _sinks(12)
    reader = Reader(Document(schema), Reporter(lenient=True))
    node = reader.resolve((Ref("/oneOf/3"),))
    assert reader.discriminators(node) == {"type": frozenset({("string", "sink3")})}
    object_products = []

    def counted(a: Node, b: Node) -> Node:
        # the products `oneOf` takes to compare two branches
        if a.objects and b.objects and sys._getframe(1).f_code.co_name == "_disjoint":
            object_products.append((a, b))
        return intersect(a, b)

    monkeypatch.setattr(reader_module, "intersect", counted)
    grammar = Grammar.from_json_schema(schema)  # exact: the branches are disjoint
    assert object_products == []
    assert not grammar.warnings
    assert [grammar.matches(json.dumps(v)) for v in (
        {"type": "sink3", "option3": 1}, {"type": "sink3", "option4": 1},
        {"type": "sink12", "inputs": []}, {"option3": 1})] == [True, False, False, False]


def test_one_of_without_a_discriminator_still_compares_branches() -> None:
    """Branches whose constants overlap are not disjoint: the pair is intersected, and
    ``oneOf`` rejects an object both branches accept."""
    schema = {"oneOf": [
        {"required": ["kind"], "properties": {"kind": {"enum": ["a", "b"]}}},
        {"required": ["kind", "n"], "properties": {"kind": {"enum": ["b", "c"]}}}]}
    reader = Reader(Document(schema), Reporter(lenient=True))
    first = reader.resolve((Ref("/oneOf/0"),))
    second = reader.resolve((Ref("/oneOf/1"),))
    assert reader.discriminators(first)["kind"] & reader.discriminators(second)["kind"]
    assert accepts(schema, {"kind": "a"}, {"kind": "b"}, {"kind": "b", "n": 1},
                   {"kind": "c", "n": 1}, {"kind": "c"}) == [True, True, False, True, False]


def _products(monkeypatch: Any) -> list[tuple[DFA, Any]]:
    """The automaton products string constraints build from now on (recorded): with another
    automaton, or with the strings other than some words."""
    found: list[tuple[DFA, Any]] = []

    def counted(a: DFA, b: DFA) -> DFA:
        found.append((a, b))
        return automata.intersect(a, b)

    def counted_words(a: DFA, words: Any) -> DFA:
        found.append((a, words))
        return automata.without_words(a, words)

    monkeypatch.setattr(strings_module, "intersect", counted)
    monkeypatch.setattr(strings_module, "without_words", counted_words)
    return found


RESERVED = ("and", "as", "assert", "break", "class", "def", "del", "elif", "else", "for",
            "from", "if", "import", "in", "is", "not", "or", "pass", "return", "while")


def test_reserved_words_excluded_by_one_product(monkeypatch: Any) -> None:
    """venvironment: a C identifier ``pattern`` beside ``allOf`` of 49 ``not: {pattern}``
    (reserved words, any case): one automaton product per pattern, each minimized (0.4 s).
    The excluded patterns are now one union, complemented and met once."""
    schema = {"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$", "allOf": [
        {"not": {"pattern": "^" + "".join(f"[{c}{c.upper()}]" for c in word) + "$"}}
        for word in RESERVED]}
    products = _products(monkeypatch)
    grammar = Grammar.from_json_schema(schema)
    assert len(products) == 1
    assert [grammar.matches(json.dumps(v)) for v in (
        "x", "IF", "iff", "_if", "While", "whiles", "1x", "pass_", "PASS")] == [
        True, False, True, True, False, True, False, True, False]


def test_declared_names_a_pattern_rejects_are_not_excluded(monkeypatch: Any) -> None:
    """Declared names a ``patternProperties`` pattern can't match need no exclusion from its
    region: its keys are the pattern's, with no product (cloudify, hugo); names it does match
    are still excluded (claude-code-settings' 340 ``env`` names beside ``^[A-Z_]+$``)."""
    schema = {"type": "object", "properties": {"name": {"type": "string"},
                                               "X_KEEP": {"type": "integer"}},
              "patternProperties": {"^x-": {"type": "boolean"}}, "additionalProperties": False}
    products = _products(monkeypatch)
    grammar = Grammar.from_json_schema(schema)
    assert products == []
    assert [grammar.matches(json.dumps(v)) for v in (
        {"name": "n", "x-a": True}, {"x-name": False}, {"name": True}, {"x-": 1})] == [
        True, True, False, False]
    upper = {"type": "object", "properties": {"HOME": {"minLength": 2}, "path": {}},
             "patternProperties": {"^[A-Z_]+$": {"type": "string"}},
             "additionalProperties": False}
    grammar = Grammar.from_json_schema(upper)
    assert len(products) == 1  # HOME is excluded from the pattern's region; path needs not
    assert [grammar.matches(json.dumps(v)) for v in (
        {"HOME": "hh", "USER": "u"}, {"HOME": "h"}, {"path": 1, "PATH": "p"}, {"pat": 1})] == [
        True, False, True, False]


@pytest.mark.xgrammar
def test_slow_shapes_agree_with_xgrammar() -> None:
    """grammarkit's EBNF for these shapes gives grammarkit's verdicts in xgrammar."""
    xgrammar = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    cases = [
        (_sinks(12), [{"type": "sink3", "option3": 1}, {"type": "sink3", "option4": 1},
                      {"type": "sink11", "inputs": [1]}, {"type": "sink12"}, {}]),
        ({"type": "string", "pattern": "^[a-zA-Z_][a-zA-Z0-9_]*$", "allOf": [
            {"not": {"pattern": f"^{word}$"}} for word in RESERVED]},
         ["x", "if", "iff", "IF", "1x", "in_"]),
        ({"type": "object", "properties": {"name": {}, "X_KEEP": {"type": "integer"}},
          "patternProperties": {"^[A-Z_]+$": {"type": "string"}},
          "additionalProperties": False},
         [{"X_KEEP": 1, "Y": "y"}, {"X_KEEP": "k"}, {"name": 1, "NAME": "n"}, {"nam": 1}]),
    ]
    for schema, values in cases:
        grammar = Grammar.from_json_schema(schema)
        from_ebnf = xgrammar.Grammar.from_ebnf(grammar.to_ebnf())
        for value in values:
            text = json.dumps(value)
            assert _is_grammar_accept_string(from_ebnf, text) == grammar.matches(text), text
