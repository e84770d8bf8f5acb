"""Schemas nested as deep as the loader allows convert without a ``RecursionError`` (issue 8).

The loader refuses documents nested deeper than ``loading.MAX_DEPTH`` so that "later stages can
recurse safely"; a ``const`` nested 150 arrays deep, or a ``pattern`` of 170 nested quantified
groups (the regex parser allows 1,000), still raised ``RecursionError`` from hashing the
schema's nodes and expressions.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.errors import SchemaError
from grammarkit.convert.json_schema.loading import MAX_DEPTH


def _nested_array(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def _nested_pattern(depth: int) -> str:
    pattern = "a"
    for _ in range(depth):
        pattern = f"(x(?:{pattern})*|y)"
    return f"^{pattern}$"


@pytest.mark.parametrize("keyword", ["const", "enum"])
def test_constants_nested_to_the_depth_limit(keyword: str) -> None:
    value = _nested_array(MAX_DEPTH - 2)  # the schema object and the enum list are levels too
    grammar = Grammar.from_json_schema({keyword: [value, 2] if keyword == "enum" else value})
    assert grammar.matches(json.dumps(value))
    assert not grammar.matches(json.dumps(_nested_array(MAX_DEPTH - 3)))


def test_object_constant_nested_to_the_depth_limit() -> None:
    value: Any = {"a": 1}
    for _ in range(MAX_DEPTH // 2 - 2):
        value = {"a": value, "b": 2}
    grammar = Grammar.from_json_schema({"const": value})
    assert grammar.matches(json.dumps(value))
    assert not grammar.matches(json.dumps({"a": 1}))


@pytest.mark.parametrize("depth", [170, 490])
def test_deeply_nested_pattern(depth: int) -> None:
    grammar = Grammar.from_json_schema({"type": "string", "pattern": _nested_pattern(depth)})
    assert grammar.matches('"y"') and grammar.matches('"xxy"')
    assert not grammar.matches('"xa"') and not grammar.matches('"z"')
    with pytest.raises(SchemaError) as caught:  # combined with a length: too complex, located
        Grammar.from_json_schema({"type": "string", "pattern": _nested_pattern(depth),
                                  "maxLength": 3})
    assert [d.code for d in caught.value.diagnostics] == ["GK155"]


def test_deep_constant_in_a_thread() -> None:
    found: list[bool] = []
    value = _nested_array(MAX_DEPTH - 2)
    worker = threading.Thread(target=lambda: found.append(
        Grammar.from_json_schema({"const": value}).matches(json.dumps(value))))
    worker.start()
    worker.join()
    assert found == [True]
