"""Grammar-wide facts as fixpoints over the expression graph: productive, nullable, FIRST, FOLLOW.

Every expression node of every rule body and lookahead is numbered once (a node object shared by
several parents is one node). A :class:`~grammarkit.ebnf.ast.RuleRef` leads to the body of the rule
it names. Every property is computed in linear time, iteratively, so grammars with thousands of
rules and very deep nesting are analysed fast: the four boolean facts (productive, nullable,
maybe nullable, nonempty) together, by folding constants bottom-up and solving only what recursion
leaves open; FIRST and FOLLOW by :mod:`grammarkit.analysis.graph`, and only when a rule needs them
(:attr:`GrammarProperties.ends_input` answers "can the input end here" without FOLLOW sets).

Macros are treated conservatively: ``TagDispatch`` and ``TokenTagDispatch`` may match the empty
string and may start with anything; ``Token``/``ExcludeToken`` and ``Regex`` may start with
anything. ``Regex`` nullability is unknown, hence two nullable flavours: :attr:`nullable` (surely
matches the empty string) and :attr:`maybe_nullable` (might).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from functools import cached_property, lru_cache

from grammarkit.analysis.charset import (
    ANY_CHAR,
    ANY_CHAR_OR_END,
    EMPTY,
    END_ONLY,
    CharSet,
)
from grammarkit.analysis.graph import union_fixpoint
from grammarkit.ebnf import ast

_OPAQUE = (ast.TagDispatch, ast.TokenSet, ast.TokenTagDispatch, ast.RegexMacro)
"""Nodes whose first code point the analyses do not know."""


def class_charset(node: ast.CharClass) -> CharSet:
    """The code points a character class matches."""
    if len(node.ranges) <= SMALL_CLASS:
        return _cached_class_charset(node.ranges, node.negated)
    return _class_charset(node.ranges, node.negated)


SMALL_CLASS = 64
"""Classes of at most this many ranges are cached (grammars repeat them; a big one stays out,
so a cache never holds a huge class alive)."""


def _class_charset(ranges: tuple[tuple[int, int], ...], negated: bool) -> CharSet:
    members = CharSet.of(ranges)
    return members.complement() if negated else members


_cached_class_charset = lru_cache(maxsize=4096)(_class_charset)


class ExprGraph:
    """Every expression node of a grammar, numbered, with its children and rule-reference targets.

    Nodes are numbered rule by rule, each before its children, unless a node object is shared
    by several parents (converters may share sub-expressions): see :attr:`shared`.

    Parameters
    ----------
    grammar
        The rules; of duplicated names the first definition counts.
    """

    def __init__(self, grammar: ast.GrammarAST):
        self.rules: dict[str, ast.Rule] = grammar.rule_map()
        self.nodes: list[ast.Expr] = []
        self.types: list[type] = []
        """Per node: the type of its expression (cheaper to test than ``isinstance``)."""
        self.children: list[tuple[int, ...]] = []
        self._index: dict[int, int] = {}
        self._of_type: dict[type, list[int]] = {}
        self.shared = False
        """Whether some node object has several parents (then children may precede parents)."""
        self.body: dict[str, int] = {}
        self.lookahead: dict[str, int] = {}
        self.naming: dict[str, list[int]] = {}
        """Per rule: its nodes that name rules (references and dispatch macros), body and
        lookahead, in numbering order (a shared node may appear twice)."""
        for name, rule in self.rules.items():
            naming: list[int] = []
            self.body[name] = self._add(rule.body, naming)
            if rule.lookahead is not None:
                self.lookahead[name] = self._add(rule.lookahead, naming)
            self.naming[name] = naming
        self.target_rule: dict[int, str] = {}
        """Per reference to a defined rule: the rule's name."""
        self.target: dict[int, int] = {}
        """Per reference to a defined rule: the node of the rule's body."""
        nodes, body = self.nodes, self.body
        for naming in self.naming.values():
            for node in naming:
                expr = nodes[node]
                if type(expr) is ast.RuleRef and expr.name in body:
                    self.target_rule[node] = expr.name
                    self.target[node] = body[expr.name]

    def _add(self, root: ast.Expr, naming: list[int]) -> int:
        """Number ``root`` and its descendants not numbered yet; return ``root``'s number.

        The nodes below ``root`` that name rules are appended to ``naming``.
        """
        index = self._index
        known = index.get(id(root))
        if known is not None:
            self._share(known, naming)
            return known
        nodes, types, children = self.nodes, self.types, self.children
        pending = [(root, self._number(root))]
        while pending:
            expr, number = pending.pop()
            kind = type(expr)
            if kind is ast.Sequence:
                kids: tuple[ast.Expr, ...] = expr.items  # type: ignore[union-attr]
            elif kind is ast.Choice:
                kids = expr.alternatives  # type: ignore[union-attr]
            elif kind is ast.Repeat:
                kids = (expr.item,)  # type: ignore[union-attr]
            else:
                if kind in _NAMING:
                    naming.append(number)
                continue
            numbers = []
            for child in kids:
                kid = index.get(id(child))
                if kid is None:
                    kid = index[id(child)] = len(nodes)
                    nodes.append(child)
                    types.append(type(child))
                    children.append(())
                    pending.append((child, kid))
                else:
                    self._share(kid, naming)
                numbers.append(kid)
            children[number] = tuple(numbers)
        return index[id(root)]

    def _number(self, expr: ast.Expr) -> int:
        number = self._index[id(expr)] = len(self.nodes)
        self.nodes.append(expr)
        self.types.append(type(expr))
        self.children.append(())
        return number

    def _share(self, node: int, naming: list[int]) -> None:
        """Record that ``node``, numbered earlier, is also below the rule being numbered."""
        self.shared = True
        naming.extend(n for n in self.descendants([node]) if self.types[n] in _NAMING)

    def index(self, expr: ast.Expr) -> int:
        """The number of a node of this grammar."""
        return self._index[id(expr)]

    def of_type(self, kind: type) -> list[int]:
        """The nodes whose expression is a ``kind``, in numbering order."""
        found = self._of_type.get(kind)
        if found is None:
            found = self._of_type[kind] = [
                node for node, node_type in enumerate(self.types) if node_type is kind]
        return found

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
        if not self.shared:
            return list(range(len(self.nodes) - 1, -1, -1))
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


# Bits of the four boolean facts, solved together by GrammarProperties._facts.
_PRODUCTIVE, _NULLABLE, _MAYBE_NULLABLE, _NONEMPTY = 1, 2, 4, 8
_ALL_FACTS = 15
_SEQUENCE_FACTS = _PRODUCTIVE | _NULLABLE | _MAYBE_NULLABLE
"""The facts a sequence has when all its items have them."""
_TEXT = (_PRODUCTIVE | _NONEMPTY, _NULLABLE | _MAYBE_NULLABLE)
_EMPTY_TEXT = (_SEQUENCE_FACTS, _NONEMPTY)
"""The facts (true, false) of a non-empty and of an empty literal."""


class GrammarProperties:
    """Facts about a grammar's rules and expressions, each computed on first use.

    Per-node facts are lists indexed by :meth:`ExprGraph.index`; per-rule facts read the node of
    the rule's body. A reference to an undefined rule is treated as an unknown terminal.
    """

    def __init__(self, grammar: ast.GrammarAST, root: str):
        self.grammar = grammar
        self.root = root
        self.graph = ExprGraph(grammar)

    # -- boolean facts -----------------------------------------------------------------------
    @cached_property
    def _facts(self) -> tuple[list[int], list[int]]:
        """Per node, the boolean facts known true and known false, as bit sets.

        Constants are folded bottom-up through the expression trees, twice: a reference knows
        what its rule's body knew when it was reached, so the second pass (over the nodes still
        undecided) settles references to rules folded later. What is left (recursion) is solved
        per fact by counting (Horn clauses, :meth:`_solve_undecided`). Linear in nodes plus edges.
        """
        count = len(self.graph.nodes)
        true = [0] * count
        false = [0] * count
        undecided = self._fold(self.graph.postorder(), true, false)
        undecided = self._fold(undecided, true, false)
        for fact in (_PRODUCTIVE, _NULLABLE, _MAYBE_NULLABLE, _NONEMPTY):
            for node in self._solve_undecided(fact, undecided, true, false):
                true[node] |= fact
        return true, false

    def _fold(self, order: list[int], true: list[int], false: list[int]) -> list[int]:
        """Fold known facts over ``order`` (children first); return the nodes left undecided."""
        graph = self.graph
        nodes, types, children, target = graph.nodes, graph.types, graph.children, graph.target
        undecided: list[int] = []
        for node in order:
            kind = types[node]
            if kind is ast.Literal:  # the commonest node: inline its facts
                yes, no = _TEXT if nodes[node].value else _EMPTY_TEXT  # type: ignore[union-attr]
                true[node], false[node] = yes, no
                continue
            if kind is ast.Sequence:
                all_true, any_true, any_false, all_false = _ALL_FACTS, 0, 0, _ALL_FACTS
                for kid in children[node]:
                    kid_true, kid_false = true[kid], false[kid]
                    all_true &= kid_true
                    any_true |= kid_true
                    any_false |= kid_false
                    all_false &= kid_false
                # productive and both nullables need every item; nonempty needs the sequence
                # productive and some item nonempty
                yes, no = all_true & _SEQUENCE_FACTS, any_false & _SEQUENCE_FACTS
                if yes & _PRODUCTIVE and any_true & _NONEMPTY:
                    yes |= _NONEMPTY
                if no & _PRODUCTIVE or all_false & _NONEMPTY:
                    no |= _NONEMPTY
            elif kind is ast.Choice:
                yes, no = 0, _ALL_FACTS
                for kid in children[node]:
                    yes |= true[kid]
                    no &= false[kid]
            elif kind is ast.Repeat:
                expr = nodes[node]
                kid = children[node][0]
                if expr.min == 0:  # type: ignore[union-attr]
                    yes, no = _SEQUENCE_FACTS, 0
                else:
                    yes, no = true[kid] & _SEQUENCE_FACTS, false[kid] & _SEQUENCE_FACTS
                if expr.max == 0:  # type: ignore[union-attr]
                    no |= _NONEMPTY
                else:
                    yes |= true[kid] & _NONEMPTY
                    no |= false[kid] & _NONEMPTY
            elif kind is ast.RuleRef and node in target:
                body = target[node]
                yes, no = true[body], false[body]
            else:
                yes, no = _leaf_facts(nodes[node])
            true[node], false[node] = yes, no
            if yes | no != _ALL_FACTS:
                undecided.append(node)
        return undecided

    def _solve_undecided(self, fact: int, undecided: list[int], true: list[int],
                         false: list[int]) -> list[int]:
        """The undecided nodes where ``fact`` holds in the least fixpoint."""
        graph = self.graph
        types, children, target = graph.types, graph.children, graph.target
        open_nodes = {node for node in undecided if not (true[node] | false[node]) & fact}
        missing: dict[int, int] = {}
        parents: dict[int, list[int]] = {}
        ready: list[int] = []
        for node in open_nodes:
            if node in target:
                body = target[node]
                if true[body] & fact:
                    ready.append(node)
                    continue
                kids: tuple[int, ...] = (body,) if body in open_nodes else ()
                needed = 1
            else:
                kids = tuple(kid for kid in children[node] if kid in open_nodes)
                kind = types[node]
                if kind is ast.Choice or (kind is ast.Sequence and fact == _NONEMPTY):
                    if kind is ast.Sequence and not true[node] & _PRODUCTIVE:
                        continue  # a nonempty sequence must be productive
                    if any(true[kid] & fact for kid in children[node]):
                        ready.append(node)
                        continue
                    needed = 1
                else:  # every item of a sequence; the one item of a repetition
                    needed = len(kids)
                    if not needed:
                        ready.append(node)
                        continue
            missing[node] = needed
            for kid in kids:
                parents.setdefault(kid, []).append(node)
        solved = list(ready)
        while ready:
            node = ready.pop()
            for parent in parents.get(node, ()):
                if missing[parent] > 0:
                    missing[parent] -= 1
                    if missing[parent] == 0:
                        solved.append(parent)
                        ready.append(parent)
        return solved

    def _fact(self, fact: int) -> list[bool]:
        return [bool(known & fact) for known in self._facts[0]]

    @cached_property
    def productive(self) -> list[bool]:
        """Whether a node derives at least one finite string."""
        return self._fact(_PRODUCTIVE)

    @cached_property
    def nullable(self) -> list[bool]:
        """Whether a node surely matches the empty string (``Regex`` counted as not nullable)."""
        return self._fact(_NULLABLE)

    @cached_property
    def maybe_nullable(self) -> list[bool]:
        """Whether a node might match the empty string (``Regex`` counted as nullable)."""
        return self._fact(_MAYBE_NULLABLE)

    @cached_property
    def nonempty(self) -> list[bool]:
        """Whether a node derives at least one non-empty finite string."""
        return self._fact(_NONEMPTY)

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
            for node in graph.naming[name]:
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

    @cached_property
    def ends_input(self) -> list[bool]:
        """Whether the end of the input can come right after a node: :data:`END` in its
        :attr:`follow`, found by one traversal instead of the whole FOLLOW fixpoint."""
        graph = self.graph
        types, children, target, body = graph.types, graph.children, graph.target, graph.body
        maybe_nullable = self.maybe_nullable
        ends = [False] * len(graph.nodes)
        # the nodes whose FOLLOW constant holds END: the root's body, lookaheads, and the
        # rules a looping dispatch macro enters
        sources = list(graph.lookahead.values())
        if self.root in body:
            sources.append(body[self.root])
        for dispatch in (ast.TagDispatch, ast.TokenTagDispatch):
            for node in graph.of_type(dispatch):
                expr = graph.nodes[node]
                if expr.loop_after_dispatch:  # type: ignore[union-attr]
                    sources.extend(body[n] for _, n in expr.tags if n in body)  # type: ignore[union-attr]
        stack = []
        for node in sources:
            if not ends[node]:
                ends[node] = True
                stack.append(node)
        while stack:
            node = stack.pop()
            kind = types[node]
            heirs: Iterable[int]
            if kind is ast.Sequence:
                heirs = []
                for kid in reversed(children[node]):
                    heirs.append(kid)
                    if not maybe_nullable[kid]:
                        break
            elif kind is ast.Repeat or kind is ast.Choice:
                heirs = children[node]
            elif node in target:
                heirs = (target[node],)
            elif kind is ast.TagDispatch or kind is ast.TokenTagDispatch:
                expr = graph.nodes[node]
                heirs = () if expr.loop_after_dispatch else [  # type: ignore[union-attr]
                    body[n] for _, n in expr.tags if n in body]  # type: ignore[union-attr]
            else:
                continue
            for heir in heirs:
                if not ends[heir]:
                    ends[heir] = True
                    stack.append(heir)
        return ends


_NAMING = frozenset({ast.RuleRef, ast.TagDispatch, ast.TokenTagDispatch})
"""The node types that name rules."""


def _leaf_facts(expr: ast.Expr) -> tuple[int, int]:
    """The facts a leaf (or a reference to an undefined rule) has: (known true, known false)."""
    kind = type(expr)
    if kind is ast.Literal:
        return _TEXT if expr.value else _EMPTY_TEXT  # type: ignore[union-attr]
    if kind is ast.CharClass:
        if class_charset(expr):  # type: ignore[arg-type]
            return _PRODUCTIVE | _NONEMPTY, _NULLABLE | _MAYBE_NULLABLE
        return 0, _ALL_FACTS
    if kind is ast.RuleRef or kind is ast.RegexMacro:  # an undefined rule: an unknown terminal
        return _PRODUCTIVE | _MAYBE_NULLABLE | _NONEMPTY, _NULLABLE
    if kind is ast.Substring:
        if any(expr.strings):  # type: ignore[union-attr]
            return _ALL_FACTS, 0
        return _PRODUCTIVE | _NULLABLE | _MAYBE_NULLABLE, _NONEMPTY
    if kind is ast.TokenSet:
        return _PRODUCTIVE | _NONEMPTY, _NULLABLE | _MAYBE_NULLABLE
    return _ALL_FACTS, 0  # TagDispatch, TokenTagDispatch: may be empty, may be anything


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
