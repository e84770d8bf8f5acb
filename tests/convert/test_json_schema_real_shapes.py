"""Shapes of real SchemaStore schemas that made conversion slow (issue 12, item 15), minimized.

Each test keeps the verdicts of the shape's instances while checking what made it slow is gone:
property names spelled once per grammar, a pattern's matcher shared by many names, ``oneOf``
branches that multiply into thousands of object sets.
"""

from __future__ import annotations

import json
import re
from typing import Any

from grammarkit import Grammar
from grammarkit.convert.json_schema.languages import matches
from grammarkit.convert.json_schema.model import Pattern


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
    # "pl" of displayName, spelled in a row (the names' exclusion automaton nests it).
    assert text.count('("p" | "\\\\u0070") ("l" | "\\\\u006" [Cc])') == 1
    g = Grammar.from_json_schema(schema)
    assert g.matches('{"o1": {"displayName": "x", "id": 1}, "p2": {"id": 2}}')
    assert g.matches('{"o1": {"\\u0064isplayName": "x"}, "p2": {"i\\u0064": 2}}')
    assert not g.matches('{"p2": {"displayName": "x"}}')
    assert not g.matches('{"o1": {"displayName": 1}}')


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
