"""Per-expression facts the checks share, each a linear fixpoint over the grammar's graph.

`grammarkit.analysis.properties.ExprGraph` numbers every node (a rule reference leads to the
rule's body), so the facts are computed iteratively, for any depth and any number of rules.
``Regex(...)`` macros are leaves of that graph: their facts come from their expansion, a small
tree without rule references, evaluated directly; so are nodes inside an expansion.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cached_property
from typing import TypeVar

from grammarkit.analysis.charset import EMPTY, CharSet
from grammarkit.analysis.graph import (
    Gate,
    boolean_fixpoint,
    is_cyclic,
    strongly_connected_components,
    union_fixpoint,
)
from grammarkit.analysis.properties import GrammarProperties, class_charset
from grammarkit.automata import utf8
from grammarkit.check.context import expanded
from grammarkit.ebnf import ast

WHITESPACE = CharSet.of_string(" \t\n\r")

T = TypeVar("T")


class ExprFacts:
    """Facts about every expression of a grammar (see the module docstring).

    Parameters
    ----------
    properties
        The grammar's analysis, whose graph numbers the nodes.
    """

    def __init__(self, properties: GrammarProperties):
        self.graph = properties.graph

    def _lookup(self, values: list[T], expr: ast.Expr, local: Callable[[ast.Expr], T]) -> T:
        try:
            return values[self.graph.index(expr)]
        except KeyError:  # inside a Regex expansion: no rule references there
            return local(expr)

    # -- single characters -------------------------------------------------------------------
    def single_chars(self, expr: ast.Expr) -> CharSet:
        """The code points ``expr`` matches as a one-character string (an over-approximation
        through optional parts: ``x?`` and ``x+`` count as ``x``)."""
        return self._lookup(self._single_chars, expr, _local_single_chars)

    @cached_property
    def _single_chars(self) -> list[CharSet]:
        graph = self.graph
        successors: list[tuple[int, ...]] = []
        constants: list[CharSet] = []
        for node, expr in enumerate(graph.nodes):
            kids: tuple[int, ...] = ()
            constant = EMPTY
            if isinstance(expr, (ast.CharClass, ast.Literal, ast.RegexMacro)):
                constant = _local_single_chars(expr)
            elif isinstance(expr, ast.Choice) or (
                    isinstance(expr, ast.Sequence) and len(expr.items) == 1) or (
                    isinstance(expr, ast.Repeat) and expr.min <= 1 and expr.max != 0):
                kids = graph.children[node]
            elif node in graph.target:
                kids = (graph.target[node],)
            successors.append(kids)
            constants.append(constant)
        return union_fixpoint(successors, constants)

    # -- whitespace --------------------------------------------------------------------------
    def whitespace_run(self, expr: ast.Expr) -> CharSet:
        """The whitespace characters of the non-empty whitespace-only strings ``expr`` matches
        (empty: it matches none)."""
        return self._lookup(self._whitespace_chars, expr, _local_whitespace_chars)

    @cached_property
    def _whitespace_only(self) -> list[bool]:
        """Whether a node matches some whitespace-only string (possibly empty)."""
        graph = self.graph
        gates = []
        for node, expr in enumerate(graph.nodes):
            if isinstance(expr, (ast.Literal, ast.CharClass, ast.RegexMacro)):
                gates.append(Gate.TRUE if _local_whitespace_only(expr) else Gate.FALSE)
            elif isinstance(expr, ast.Sequence):
                gates.append(Gate.ALL)
            elif isinstance(expr, ast.Choice) or node in graph.target:
                gates.append(Gate.ANY)
            elif isinstance(expr, ast.Repeat):
                gates.append(Gate.TRUE if expr.min == 0 else Gate.ALL)
            else:
                gates.append(Gate.FALSE)
        successors = [graph.structural_and_refs(n) for n in range(len(graph.nodes))]
        return boolean_fixpoint(successors, gates)

    @cached_property
    def _whitespace_chars(self) -> list[CharSet]:
        graph = self.graph
        only = self._whitespace_only
        successors: list[tuple[int, ...]] = []
        constants: list[CharSet] = []
        for node, expr in enumerate(graph.nodes):
            leaf = isinstance(expr, (ast.Literal, ast.CharClass, ast.RegexMacro))
            if not only[node]:
                successors.append(())
                constants.append(EMPTY)
            elif leaf:
                successors.append(())
                constants.append(_local_whitespace_chars(expr))
            else:
                successors.append(graph.structural_and_refs(node))
                constants.append(EMPTY)
        return union_fixpoint(successors, constants)

    # -- token budget ------------------------------------------------------------------------
    def max_tokens(self, expr: ast.Expr) -> float:
        """The most tokens ``expr`` can take, a byte per token (``inf``: unbounded)."""
        return self._lookup(self._max_tokens, expr, _local_max_tokens)

    @cached_property
    def _max_tokens(self) -> list[float]:
        graph = self.graph
        successors = [graph.structural_and_refs(n) for n in range(len(graph.nodes))]
        values = [0.0] * len(graph.nodes)
        for component in strongly_connected_components(successors):
            if is_cyclic(component, successors):
                for node in component:
                    values[node] = math.inf
                continue
            (node,) = component
            expr = graph.nodes[node]
            kids = [values[k] for k in successors[node]]
            if node in graph.target:
                values[node] = kids[0]
            elif isinstance(expr, ast.RuleRef):
                values[node] = math.inf  # undefined rule
            else:
                values[node] = _combine_max_tokens(expr, kids)
        return values


def _combine_max_tokens(expr: ast.Expr, kids: list[float]) -> float:
    if isinstance(expr, ast.Sequence):
        return sum(kids)
    if isinstance(expr, ast.Choice):
        return max(kids)
    if isinstance(expr, ast.Repeat):
        if kids[0] == 0 or expr.max == 0:
            return 0.0
        return math.inf if expr.max is None else expr.max * kids[0]
    if isinstance(expr, ast.Literal):
        return float(len(utf8.encode(expr.value)))
    if isinstance(expr, ast.CharClass):
        ranges = utf8.class_codepoints(expr.ranges, expr.negated)
        return float(len(utf8.encode(chr(ranges[-1][1])))) if ranges else 0.0
    if isinstance(expr, ast.Substring):
        return float(max((len(utf8.encode(s)) for s in expr.strings), default=0))
    if isinstance(expr, ast.TokenSet):
        return 1.0
    if isinstance(expr, ast.RegexMacro):
        return _local_max_tokens(expanded(expr))
    return math.inf  # TagDispatch / TokenTagDispatch: free text between tags


# -- direct evaluation of small trees without rule references (Regex expansions) ---------------
def _local_single_chars(expr: ast.Expr) -> CharSet:
    expr = expanded(expr)
    if isinstance(expr, ast.CharClass):
        return class_charset(expr)
    if isinstance(expr, ast.Literal):
        return CharSet.of_string(expr.value) if len(expr.value) == 1 else EMPTY
    if isinstance(expr, ast.Choice):
        result = EMPTY
        for alternative in expr.alternatives:
            result = result.union(_local_single_chars(alternative))
        return result
    if isinstance(expr, ast.Sequence) and len(expr.items) == 1:
        return _local_single_chars(expr.items[0])
    if isinstance(expr, ast.Repeat) and expr.min <= 1 and expr.max != 0:
        return _local_single_chars(expr.item)
    return EMPTY


def _local_whitespace_only(expr: ast.Expr) -> bool:
    expr = expanded(expr)
    if isinstance(expr, ast.Literal):
        return CharSet.of_string(expr.value).is_subset(WHITESPACE)
    if isinstance(expr, ast.CharClass):
        return class_charset(expr).intersects(WHITESPACE)
    if isinstance(expr, ast.Sequence):
        return all(_local_whitespace_only(item) for item in expr.items)
    if isinstance(expr, ast.Choice):
        return any(_local_whitespace_only(alt) for alt in expr.alternatives)
    if isinstance(expr, ast.Repeat):
        return expr.min == 0 or _local_whitespace_only(expr.item)
    return False


def _local_whitespace_chars(expr: ast.Expr) -> CharSet:
    expr = expanded(expr)
    if not _local_whitespace_only(expr):
        return EMPTY
    if isinstance(expr, ast.Literal):
        return CharSet.of_string(expr.value)
    if isinstance(expr, ast.CharClass):
        return CharSet.of(
            (c, c) for c in map(ord, " \t\n\r") if c in class_charset(expr))
    result = EMPTY
    for kid in ast.children(expr):
        result = result.union(_local_whitespace_chars(kid))
    return result


def _local_max_tokens(expr: ast.Expr) -> float:
    expr = expanded(expr)
    return _combine_max_tokens(expr, [_local_max_tokens(kid) for kid in ast.children(expr)])
