"""Grammar-wide facts as fixpoints over the expression graph: productive, nullable, FIRST, FOLLOW.

Every expression node of every rule body and lookahead is numbered once (a node object shared by
several parents is one node). A :class:`~grammarkit.ebnf.ast.RuleRef` leads to the body of the rule
it names. Each property is one linear pass of :mod:`grammarkit.analysis.graph` over that graph, so
grammars with thousands of rules and very deep nesting are analysed in linear time, iteratively.

Macros are treated conservatively: ``TagDispatch`` and ``TokenTagDispatch`` may match the empty
string and may start with anything; ``Token``/``ExcludeToken`` and ``Regex`` may start with
anything. ``Regex`` nullability is unknown, hence two nullable flavours: :attr:`nullable` (surely
matches the empty string) and :attr:`maybe_nullable` (might).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from functools import cached_property

from grammarkit.analysis.charset import (
    ANY_CHAR,
    ANY_CHAR_OR_END,
    EMPTY,
    END_ONLY,
    CharSet,
)
from grammarkit.analysis.graph import Gate, boolean_fixpoint, reverse, union_fixpoint
from grammarkit.ebnf import ast

_OPAQUE = (ast.TagDispatch, ast.TokenSet, ast.TokenTagDispatch, ast.RegexMacro)
"""Nodes whose first code point the analyses do not know."""


def class_charset(node: ast.CharClass) -> CharSet:
    """The code points a character class matches."""
    members = CharSet.of(node.ranges)
    return members.complement() if node.negated else members


class ExprGraph:
    """Every expression node of a grammar, numbered, with its children and rule-reference targets.

    Parameters
    ----------
    grammar
        The rules; of duplicated names the first definition counts.
    """

    def __init__(self, grammar: ast.GrammarAST):
        self.rules: dict[str, ast.Rule] = grammar.rule_map()
        self.nodes: list[ast.Expr] = []
        self.children: list[tuple[int, ...]] = []
        self._index: dict[int, int] = {}
        self.body: dict[str, int] = {}
        self.lookahead: dict[str, int] = {}
        for name, rule in self.rules.items():
            self.body[name] = self._add(rule.body)
            if rule.lookahead is not None:
                self.lookahead[name] = self._add(rule.lookahead)
        self.target_rule: dict[int, str] = {
            node: expr.name
            for node, expr in enumerate(self.nodes)
            if isinstance(expr, ast.RuleRef) and expr.name in self.body
        }
        """Per reference to a defined rule: the rule's name."""
        self.target: dict[int, int] = {
            node: self.body[name] for node, name in self.target_rule.items()
        }
        """Per reference to a defined rule: the node of the rule's body."""

    def _add(self, root: ast.Expr) -> int:
        """Number ``root`` and its descendants not numbered yet; return ``root``'s number."""
        if id(root) in self._index:
            return self._index[id(root)]
        pending = [root]
        self._number(root)
        while pending:
            expr = pending.pop()
            numbers = []
            for child in ast.children(expr):
                if id(child) not in self._index:
                    self._number(child)
                    pending.append(child)
                numbers.append(self._index[id(child)])
            self.children[self._index[id(expr)]] = tuple(numbers)
        return self._index[id(root)]

    def _number(self, expr: ast.Expr) -> None:
        self._index[id(expr)] = len(self.nodes)
        self.nodes.append(expr)
        self.children.append(())

    def index(self, expr: ast.Expr) -> int:
        """The number of a node of this grammar."""
        return self._index[id(expr)]

    def descendants(self, starts: list[int]) -> Iterator[int]:
        """``starts`` and every node below them (not through references), each once, pre-order."""
        seen = set(starts)
        stack = starts[::-1]
        while stack:
            node = stack.pop()
            yield node
            for kid in reversed(self.children[node]):
                if kid not in seen:
                    seen.add(kid)
                    stack.append(kid)

    def structural_and_refs(self, node: int) -> tuple[int, ...]:
        """A node's children, or for a rule reference the referenced rule's body."""
        if node in self.target:
            return (self.target[node],)
        return self.children[node]

    def postorder(self) -> list[int]:
        """Every node after all of its structural children (the tree part is acyclic)."""
        order: list[int] = []
        seen = [False] * len(self.nodes)
        for start in range(len(self.nodes)):
            if seen[start]:
                continue
            seen[start] = True
            work = [(start, 0)]
            while work:
                node, position = work[-1]
                kids = self.children[node]
                if position < len(kids):
                    work[-1] = (node, position + 1)
                    if not seen[kids[position]]:
                        seen[kids[position]] = True
                        work.append((kids[position], 0))
                else:
                    work.pop()
                    order.append(node)
        return order


class GrammarProperties:
    """Facts about a grammar's rules and expressions, each computed on first use.

    Per-node facts are lists indexed by :meth:`ExprGraph.index`; per-rule facts read the node of
    the rule's body. A reference to an undefined rule is treated as an unknown terminal.
    """

    def __init__(self, grammar: ast.GrammarAST, root: str):
        self.grammar = grammar
        self.root = root
        self.graph = ExprGraph(grammar)

    # -- boolean fixpoints -------------------------------------------------------------------
    @cached_property
    def _successors(self) -> list[tuple[int, ...]]:
        graph = self.graph
        return [graph.structural_and_refs(node) for node in range(len(graph.nodes))]

    @cached_property
    def _predecessors(self) -> list[list[int]]:
        return reverse(self._successors)

    def _solve(self, gate: Callable[[int, ast.Expr], Gate]) -> list[bool]:
        gates = [gate(n, e) for n, e in enumerate(self.graph.nodes)]
        return boolean_fixpoint(self._successors, gates, self._predecessors)

    def _ref_gate(self, node: int, undefined: Gate) -> Gate:
        return Gate.ANY if node in self.graph.target else undefined

    @cached_property
    def productive(self) -> list[bool]:
        """Whether a node derives at least one finite string."""

        def gate(node: int, expr: ast.Expr) -> Gate:
            if isinstance(expr, ast.CharClass):
                return Gate.TRUE if class_charset(expr) else Gate.FALSE
            if isinstance(expr, ast.RuleRef):
                return self._ref_gate(node, Gate.TRUE)
            if isinstance(expr, ast.Sequence):
                return Gate.ALL
            if isinstance(expr, ast.Choice):
                return Gate.ANY
            if isinstance(expr, ast.Repeat):
                return Gate.TRUE if expr.min == 0 else Gate.ALL
            return Gate.TRUE

        return self._solve(gate)

    def _nullable(self, unknown: Gate) -> list[bool]:
        def gate(node: int, expr: ast.Expr) -> Gate:
            if isinstance(expr, ast.Literal):
                return Gate.FALSE if expr.value else Gate.TRUE
            if isinstance(expr, ast.RuleRef):
                return self._ref_gate(node, unknown)
            if isinstance(expr, ast.Sequence):
                return Gate.ALL
            if isinstance(expr, ast.Choice):
                return Gate.ANY
            if isinstance(expr, ast.Repeat):
                return Gate.TRUE if expr.min == 0 else Gate.ALL
            if isinstance(expr, (ast.TagDispatch, ast.TokenTagDispatch, ast.Substring)):
                return Gate.TRUE
            if isinstance(expr, ast.RegexMacro):
                return unknown
            return Gate.FALSE

        return self._solve(gate)

    @cached_property
    def nullable(self) -> list[bool]:
        """Whether a node surely matches the empty string (``Regex`` counted as not nullable)."""
        return self._nullable(Gate.FALSE)

    @cached_property
    def maybe_nullable(self) -> list[bool]:
        """Whether a node might match the empty string (``Regex`` counted as nullable)."""
        return self._nullable(Gate.TRUE)

    @cached_property
    def nonempty(self) -> list[bool]:
        """Whether a node derives at least one non-empty finite string."""
        productive = self.productive

        def gate(node: int, expr: ast.Expr) -> Gate:
            if isinstance(expr, ast.Literal):
                return Gate.TRUE if expr.value else Gate.FALSE
            if isinstance(expr, ast.CharClass):
                return Gate.TRUE if class_charset(expr) else Gate.FALSE
            if isinstance(expr, ast.RuleRef):
                return self._ref_gate(node, Gate.TRUE)
            if isinstance(expr, ast.Sequence):
                return Gate.ANY if productive[node] else Gate.FALSE
            if isinstance(expr, ast.Choice):
                return Gate.ANY
            if isinstance(expr, ast.Repeat):
                return Gate.FALSE if expr.max == 0 else Gate.ANY
            if isinstance(expr, ast.Substring):
                return Gate.TRUE if any(expr.strings) else Gate.FALSE
            return Gate.TRUE

        return self._solve(gate)

    # -- reachability --------------------------------------------------------------------------
    @cached_property
    def reachable(self) -> set[str]:
        """Rules reachable from the root through references, macros and lookaheads."""
        graph = self.graph
        if self.root not in graph.rules:
            return set()
        seen = {self.root}
        queue = deque([self.root])
        while queue:
            name = queue.popleft()
            starts = [graph.body[name]]
            if name in graph.lookahead:
                starts.append(graph.lookahead[name])
            for node in graph.descendants(starts):
                for used in _rules_used_by(graph.nodes[node]):
                    if used in graph.rules and used not in seen:
                        seen.add(used)
                        queue.append(used)
        return seen

    # -- FIRST and FOLLOW ----------------------------------------------------------------------
    def first_position(self, node: int, nullable: list[bool]) -> tuple[int, ...]:
        """The nodes whose first code point can be ``node``'s first code point."""
        graph = self.graph
        expr = graph.nodes[node]
        if isinstance(expr, ast.Sequence):
            kids = graph.children[node]
            for position, kid in enumerate(kids):
                if not nullable[kid]:
                    return kids[: position + 1]
            return kids
        if isinstance(expr, ast.Repeat) and expr.max == 0:
            return ()
        return graph.structural_and_refs(node)

    @cached_property
    def first(self) -> list[CharSet]:
        """The code points a node's non-empty matches can start with (an over-approximation)."""
        graph = self.graph
        nullable = self.maybe_nullable
        constants = [
            ANY_CHAR if isinstance(expr, ast.RuleRef) and node not in graph.target
            else _first_constant(expr)
            for node, expr in enumerate(graph.nodes)
        ]
        successors = [self.first_position(node, nullable) for node in range(len(graph.nodes))]
        return union_fixpoint(successors, constants)

    @cached_property
    def follow(self) -> list[CharSet]:
        """What can come right after a node's match: code points, and :data:`END` (over-approx)."""
        graph = self.graph
        first, nullable = self.first, self.maybe_nullable
        count = len(graph.nodes)
        constants: list[CharSet] = [EMPTY] * count
        inherits: list[list[int]] = [[] for _ in range(count)]
        for node, expr in enumerate(graph.nodes):
            kids = graph.children[node]
            if isinstance(expr, ast.Sequence):
                after = EMPTY
                tail_nullable = True
                for kid in reversed(kids):
                    constants[kid] = constants[kid].union(after)
                    if tail_nullable:
                        inherits[kid].append(node)
                    after = after.union(first[kid]) if nullable[kid] else first[kid]
                    tail_nullable = tail_nullable and nullable[kid]
            elif isinstance(expr, ast.Repeat):
                inherits[kids[0]].append(node)
                if expr.max is None or expr.max > 1:
                    constants[kids[0]] = constants[kids[0]].union(first[kids[0]])
            elif isinstance(expr, ast.Choice):
                for kid in kids:
                    inherits[kid].append(node)
            elif node in graph.target:
                inherits[graph.target[node]].append(node)
            elif isinstance(expr, (ast.TagDispatch, ast.TokenTagDispatch)):
                for _, name in expr.tags:
                    if name not in graph.body:
                        continue
                    body = graph.body[name]
                    if expr.loop_after_dispatch:
                        constants[body] = ANY_CHAR_OR_END
                    else:
                        inherits[body].append(node)
        for lookahead in graph.lookahead.values():
            constants[lookahead] = ANY_CHAR_OR_END
        if self.root in graph.body:
            root = graph.body[self.root]
            constants[root] = constants[root].union(END_ONLY)
        return union_fixpoint(inherits, constants)

def _rules_used_by(expr: ast.Expr) -> tuple[str, ...]:
    if isinstance(expr, ast.RuleRef):
        return (expr.name,)
    if isinstance(expr, (ast.TagDispatch, ast.TokenTagDispatch)):
        return tuple(name for _, name in expr.tags)
    return ()


def _first_constant(expr: ast.Expr) -> CharSet:
    if isinstance(expr, ast.Literal):
        return CharSet.of_string(expr.value[:1])
    if isinstance(expr, ast.CharClass):
        return class_charset(expr)
    if isinstance(expr, ast.Substring):
        return CharSet.of_string("".join(expr.strings))
    if isinstance(expr, _OPAQUE):
        return ANY_CHAR
    return EMPTY
