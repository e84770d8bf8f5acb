"""Every grammar the JSON Schema tests convert must be lint-clean (issue 12, item 9).

Users lint what ``grammarkit convert json-schema`` writes, so the converter's output must not
trip grammarkit's own lint. Rather than trusting a sample, an autouse fixture wraps
``convert_schema`` for every test of this folder and lints each grammar it returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from grammarkit.analysis.lint import lint_grammar_ast
from grammarkit.convert import json_schema
from grammarkit.ebnf import ast

NOT_ABOUT_THE_CONVERTER = frozenset({"GK210"})
"""Lint codes about the engine's cost, not the grammar's content: GK210 (a huge repetition
bound such as ``maxLength: 65536``) is what the schema asks for."""

NOTHING = ast.GrammarAST((ast.Rule("root", ast.CharClass(())),))
"""The grammar of a schema that allows no value (lint rightly says it accepts nothing)."""


def lint_findings(grammar: ast.GrammarAST) -> list[str]:
    """The lint warnings of a converted grammar, as ``code message`` lines."""
    if grammar.rules == NOTHING.rules:
        return []
    return [f"{d.code} {d.message}" for d in lint_grammar_ast(grammar, "root")
            if d.code not in NOT_ABOUT_THE_CONVERTER]


@pytest.fixture(autouse=True)
def converted_grammars_lint_clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    convert = json_schema.convert_schema
    findings: list[str] = []

    def linted(schema: Any, **options: Any) -> Any:
        grammar, diagnostics = convert(schema, **options)
        findings.extend(f"{finding} (schema {schema!r}, {options})"
                        for finding in lint_findings(grammar))
        return grammar, diagnostics

    monkeypatch.setattr(json_schema, "convert_schema", linted)
    yield
    assert findings == [], "converted grammars are not lint-clean"
