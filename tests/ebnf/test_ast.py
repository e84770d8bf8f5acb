"""The tree's nodes behave as the frozen dataclasses they are declared as."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from grammarkit.ebnf import ast

NODES = [
    cls for cls in vars(ast).values()
    if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == ast.__name__
]


@pytest.mark.parametrize("cls", NODES, ids=lambda cls: cls.__name__)
def test_constructor_keeps_the_dataclass_signature(cls: type) -> None:
    parameters = list(inspect.signature(cls).parameters.values())
    expected = [
        inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          default=inspect.Parameter.empty if f.default is dataclasses.MISSING
                          else f.default)
        for f in dataclasses.fields(cls)
    ]
    assert [(p.name, p.kind, p.default) for p in parameters] == [
        (p.name, p.kind, p.default) for p in expected]


def test_nodes_stay_frozen_hashable_and_compare_without_spans() -> None:
    node = ast.Repeat(ast.Literal("a", ast.Span(0, 3)), 1, None, "+", span=ast.Span(0, 4))
    assert node == ast.Repeat(ast.Literal("a"), 1, None, "+")
    assert hash(node) == hash(ast.Repeat(ast.Literal("a"), 1, None, "+"))
    assert (node.item, node.min, node.max, node.op, node.span) == (
        ast.Literal("a"), 1, None, "+", ast.Span(0, 4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.min = 2  # type: ignore[misc]
    assert dataclasses.replace(node, max=3) == ast.Repeat(ast.Literal("a"), 1, 3, "+")
    with pytest.raises(TypeError):
        ast.Span(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ast.Span(1, 2, 3)  # type: ignore[call-arg]
