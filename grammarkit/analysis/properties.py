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

from bisect import bisect_right
from collections import deque
from collections.abc import Iterable, Iterator
from collections.abc import Sequence as PySequence
from functools import cached_property, lru_cache

from grammarkit.analysis.charset import (
    ANY_CHAR,
    ANY_CHAR_OR_END,
    EMPTY,
    END_ONLY,
    CharSet,
)
from grammarkit.analysis.graph import union_fixpoint, union_fixpoint_from
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
    tree
        Promise that no node object occurs twice in the grammar (true of what the parser
        builds: every node has its own span). Numbering then needs no identity map, walks
        recursively and folds the boolean facts on the way (:attr:`folded`); nesting deeper
        than Python's stack falls back to the iterative walk. Never :attr:`shared` then.
    """

    def __init__(self, grammar: ast.GrammarAST, *, tree: bool = False):
        self.rules: dict[str, ast.Rule] = grammar.rule_map()
        self.nodes: list[ast.Expr] = []
        self.types: list[type] = []
        """Per node: the type of its expression (cheaper to test than ``isinstance``)."""
        self.children: list[tuple[int, ...]] = []
        """Per node: the numbers of its children."""
        self._index: dict[int, int] | None = None if tree else {}
        self._of_type: dict[type, list[int]] = {}
        self.shared = False
        """Whether some node object has several parents (then children may precede parents)."""
        self.body: dict[str, int] = {}
        self.lookahead: dict[str, int] = {}
        self.naming: dict[str, list[int]] = {}
        """Per rule: its nodes that name rules (references and dispatch macros), body and
        lookahead, in numbering order (a shared node may appear twice)."""
        self.target_rule: dict[int, str] = {}
        """Per reference to a defined rule: the rule's name."""
        self.target: dict[int, int] = {}
        """Per reference to a defined rule: the node of the rule's body."""
        self.folded: tuple[list[int], list[int]] | None = None
        """Of a tree, the facts folded while numbering it and the nodes they leave undecided
        (:attr:`GrammarProperties._facts` goes on from there); else ``None``."""
        if tree:
            try:
                self.folded = self._number_tree()
            except RecursionError:  # nested deeper than Python's stack: number iteratively
                self.nodes.clear()
                self.types.clear()
                self.children.clear()
                self.body.clear()
                self.lookahead.clear()
                self.naming.clear()
                self._index = {}
        if self.folded is None:
            for name, rule in self.rules.items():
                naming: list[int] = []
                self.body[name] = self._add(rule.body, naming)
                if rule.lookahead is not None:
                    self.lookahead[name] = self._add(rule.lookahead, naming)
                self.naming[name] = naming
        self.preorder = self.folded is not None
        """Whether nodes are numbered depth-first, each before its descendants and these
        right after it (numbered as a tree, not :attr:`shared`)."""
        nodes, types, body = self.nodes, self.types, self.body
        target_rule, target = self.target_rule, self.target
        for naming in self.naming.values():
            for node in naming:
                if types[node] is _RULE_REF:
                    name = nodes[node].name  # type: ignore[union-attr]
                    start = body.get(name)
                    if start is not None:
                        target_rule[node] = name
                        target[node] = start

    def _number_tree(self) -> tuple[list[int], list[int]]:
        """Number a tree depth-first, each node before its children, folding on the way what
        :meth:`GrammarProperties._fold` would: return the facts and the undecided nodes.

        Recursive, for speed: raises ``RecursionError`` for nesting deeper than the stack.
        """
        nodes, children = self.nodes, self.children
        facts: list[int] = []
        undecided: list[int] = []
        named: list[int] = []

        # (few free variables: a call copies each one)
        def visit(expr: ast.Expr) -> int:
            number = len(nodes)
            kind = type(expr)
            nodes.append(expr)
            children.append(())
            if kind is _LITERAL:
                facts.append(_TEXT if expr.value else _EMPTY_TEXT)  # type: ignore[union-attr]
                return number
            if kind is _SEQUENCE or kind is _CHOICE:
                facts.append(0)
                kids = []
                all_known, any_known = _KNOWN, 0
                for item in expr.items if kind is _SEQUENCE else expr.alternatives:  # type: ignore[union-attr]
                    kid = visit(item)  # noqa: F821 (deleted after the walk)
                    kids.append(kid)
                    known = facts[kid]
                    all_known &= known
                    any_known |= known
                children[number] = tuple(kids)
                if kind is _SEQUENCE:
                    value = _sequence_facts(all_known, any_known)
                else:
                    value = _choice_facts(all_known, any_known)
            elif kind is _RULE_REF:  # left to the second fold, once every rule is numbered
                named.append(number)
                facts.append(0)
                undecided.append(number)
                return number
            elif kind is _REPEAT:
                facts.append(0)
                kid = visit(expr.item)  # type: ignore[union-attr]  # noqa: F821
                children[number] = (kid,)
                known = facts[kid]
                if expr.min == 0:  # type: ignore[union-attr]
                    value = _LOOP_FACTS
                else:
                    value = known & _SEQUENCE_KNOWN
                if expr.max == 0:  # type: ignore[union-attr]
                    value |= _FALSE_NONEMPTY
                else:
                    value |= known & _NONEMPTY_KNOWN
            elif kind is _CHAR_CLASS:
                if expr.ranges and not expr.negated:  # type: ignore[union-attr]
                    facts.append(_TEXT)
                else:
                    facts.append(_TEXT if class_charset(expr) else _NOTHING)  # type: ignore[arg-type]
                return number
            else:
                if kind in _NAMING:
                    named.append(number)
                facts.append(_leaf_facts(expr))
                return number
            facts[number] = value
            if (value | value >> _FALSE) & _ALL_FACTS != _ALL_FACTS:
                undecided.append(number)
            return number

        try:
            for name, rule in self.rules.items():
                first_named = len(named)
                self.body[name] = visit(rule.body)
                if rule.lookahead is not None:
                    self.lookahead[name] = visit(rule.lookahead)
                self.naming[name] = named[first_named:]
        finally:
            # `visit` refers to itself through its closure: break that cycle, which would keep
            # the lists (and through them the whole grammar) alive until a full collection
            del visit
        self.types[:] = map(type, nodes)  # in one C loop, not one append per visit
        return facts, undecided

    def _add(self, root: ast.Expr, naming: list[int]) -> int:
        """Number ``root`` and its descendants not numbered yet; return ``root``'s number.

        The nodes below ``root`` that name rules are appended to ``naming``.
        """
        index = self._index
        assert index is not None, "a tree is numbered by _number_tree"
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
        assert self._index is not None
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
        if self._index is None:  # a tree: map identities on first use
            self._index = {id(node): number for number, node in enumerate(self.nodes)}
        return self._index[id(expr)]

    def of_type(self, kind: type) -> list[int]:
        """The nodes whose expression is a ``kind``, in numbering order."""
        if not self._of_type:  # every kind at once: one pass over the nodes
            grouped = self._of_type
            for node, node_type in enumerate(self.types):
                found = grouped.get(node_type)
                if found is None:
                    grouped[node_type] = [node]
                else:
                    found.append(node)
        return self._of_type.get(kind, [])

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

    def postorder(self) -> PySequence[int]:
        """Every node after all of its structural children (the tree part is acyclic)."""
        if not self.shared:
            return range(len(self.nodes) - 1, -1, -1)
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


# Bits of the four boolean facts, solved together by GrammarProperties._facts. A node's facts are
# one int: the bits known true, and above them (shifted by _FALSE) the bits known false.
_PRODUCTIVE, _NULLABLE, _MAYBE_NULLABLE, _NONEMPTY = 1, 2, 4, 8
_ALL_FACTS = 15
_FALSE = 4
_KNOWN = 0xFF
"""Every fact known (true or false): the start of an AND over children."""
_SEQUENCE_FACTS = _PRODUCTIVE | _NULLABLE | _MAYBE_NULLABLE
"""The facts a sequence has when all its items have them."""


def _known(true: int, false: int) -> int:
    return true | false << _FALSE


_TEXT = _known(_PRODUCTIVE | _NONEMPTY, _NULLABLE | _MAYBE_NULLABLE)
"""The facts of a non-empty literal, or a non-empty character class."""
_EMPTY_TEXT = _known(_SEQUENCE_FACTS, _NONEMPTY)
"""The facts of an empty literal."""
_UNKNOWN_TERMINAL = _known(_PRODUCTIVE | _MAYBE_NULLABLE | _NONEMPTY, _NULLABLE)
"""The facts of a reference to an undefined rule, and of a ``Regex``."""
_LOOP_FACTS = _known(_SEQUENCE_FACTS, 0)
"""The facts of ``x*`` and ``x?``."""
_SEQUENCE_KNOWN = _known(_SEQUENCE_FACTS, _SEQUENCE_FACTS)
_NONEMPTY_KNOWN = _known(_NONEMPTY, _NONEMPTY)
_FALSE_NONEMPTY = _known(0, _NONEMPTY)

def _sequence_facts(all_known: int, any_known: int) -> int:
    """A sequence's facts from the AND (``all_known``) and OR (``any_known``) of its items'.

    Productive and both nullables need every item; non-empty needs the sequence productive
    and some item non-empty.
    """
    yes = all_known & _SEQUENCE_FACTS
    if yes & _PRODUCTIVE and any_known & _NONEMPTY:
        yes |= _NONEMPTY
    no = any_known >> _FALSE & _SEQUENCE_FACTS
    if no & _PRODUCTIVE or all_known & _FALSE_NONEMPTY:
        no |= _NONEMPTY
    return yes | no << _FALSE


def _choice_facts(all_known: int, any_known: int) -> int:
    """A choice's facts: true if some alternative's are, false if every alternative's are."""
    return any_known & _ALL_FACTS | all_known & ~_ALL_FACTS


_LITERAL, _SEQUENCE, _CHOICE, _REPEAT, _RULE_REF, _CHAR_CLASS = (
    ast.Literal, ast.Sequence, ast.Choice, ast.Repeat, ast.RuleRef, ast.CharClass)
"""The node types the folds test for (module constants: cheaper to read than closure cells)."""
_ANYTHING = _known(_ALL_FACTS, 0)
"""The facts of what may be empty and may be anything (``TagDispatch``)."""
_NOTHING = _known(0, _ALL_FACTS)
"""The facts of what matches nothing (an empty class)."""


class GrammarProperties:
    """Facts about a grammar's rules and expressions, each computed on first use.

    Per-node facts are lists indexed by :meth:`ExprGraph.index`; per-rule facts read the node of
    the rule's body. A reference to an undefined rule is treated as an unknown terminal.
    ``tree`` is passed to :class:`ExprGraph`.
    """

    def __init__(self, grammar: ast.GrammarAST, root: str, *, tree: bool = False):
        self.grammar = grammar
        self.root = root
        self.graph = ExprGraph(grammar, tree=tree)

    # -- boolean facts -----------------------------------------------------------------------
    @cached_property
    def _facts(self) -> list[int]:
        """Per node, the boolean facts known true (low bits; the fixpoint's answer).

        Constants are folded bottom-up through the expression trees, twice: a reference knows
        what its rule's body knew when it was reached, so the second pass (over the nodes still
        undecided) settles references to rules folded later. What is left (recursion) is solved
        per fact by counting (Horn clauses, :meth:`_solve_undecided`). Linear in nodes plus edges.
        """
        if self.graph.folded is not None:
            facts, undecided = self.graph.folded
        else:
            facts = [0] * len(self.graph.nodes)
            undecided = self._fold(self.graph.postorder(), facts)
        undecided = self._fold(undecided, facts)
        if undecided:
            for fact in (_PRODUCTIVE, _NULLABLE, _MAYBE_NULLABLE, _NONEMPTY):
                for node in self._solve_undecided(fact, undecided, facts):
                    facts[node] |= fact
        return facts

    def _fold(self, order: Iterable[int], facts: list[int]) -> list[int]:
        """Fold known facts over ``order`` (children first); return the nodes left undecided.

        Of a sequence, AND over its items' facts gives what all items surely have and surely
        lack, OR what some item surely has and surely lacks; so of a choice.
        """
        graph = self.graph
        nodes, types, children, target = graph.nodes, graph.types, graph.children, graph.target
        literal, sequence, choice, repeat, rule_ref, char_class = (
            ast.Literal, ast.Sequence, ast.Choice, ast.Repeat, ast.RuleRef, ast.CharClass)
        text, empty_text = _TEXT, _EMPTY_TEXT
        nonempty, sequence_facts, false_nonempty = _NONEMPTY, _SEQUENCE_FACTS, _FALSE_NONEMPTY
        undecided: list[int] = []
        for node in order:
            kind = types[node]
            if kind is literal:  # the commonest node: inline its facts
                facts[node] = text if nodes[node].value else empty_text  # type: ignore[union-attr]
                continue
            if kind is sequence:
                all_known, any_known = _KNOWN, 0
                for kid in children[node]:
                    known = facts[kid]
                    all_known &= known
                    any_known |= known
                value = _sequence_facts(all_known, any_known)
            elif kind is choice:
                all_known, any_known = _KNOWN, 0
                for kid in children[node]:
                    known = facts[kid]
                    all_known &= known
                    any_known |= known
                value = _choice_facts(all_known, any_known)
            elif kind is rule_ref:
                body = target.get(node)
                if body is None:  # an undefined rule: an unknown terminal
                    facts[node] = _UNKNOWN_TERMINAL
                    continue
                value = facts[body]
            elif kind is repeat:
                expr = nodes[node]
                known = facts[children[node][0]]
                if expr.min == 0:  # type: ignore[union-attr]
                    value = _known(sequence_facts, 0)
                else:
                    value = known & (sequence_facts | sequence_facts << _FALSE)
                if expr.max == 0:  # type: ignore[union-attr]
                    value |= false_nonempty
                else:
                    value |= known & (nonempty | false_nonempty)
            elif kind is char_class:
                expr = nodes[node]
                if expr.ranges and not expr.negated:  # type: ignore[union-attr]
                    facts[node] = text
                else:
                    facts[node] = text if class_charset(expr) else _NOTHING  # type: ignore[arg-type]
                continue
            else:
                facts[node] = _leaf_facts(nodes[node])
                continue
            facts[node] = value
            if (value | value >> _FALSE) & _ALL_FACTS != _ALL_FACTS:
                undecided.append(node)
        return undecided

    def _solve_undecided(self, fact: int, undecided: list[int], facts: list[int]) -> list[int]:
        """The undecided nodes where ``fact`` holds in the least fixpoint."""
        graph = self.graph
        types, children, target = graph.types, graph.children, graph.target
        open_nodes = {node for node in undecided
                      if not (facts[node] | facts[node] >> _FALSE) & fact}
        missing: dict[int, int] = {}
        parents: dict[int, list[int]] = {}
        ready: list[int] = []
        for node in open_nodes:
            if node in target:
                body = target[node]
                if facts[body] & fact:
                    ready.append(node)
                    continue
                kids: tuple[int, ...] = (body,) if body in open_nodes else ()
                needed = 1
            else:
                kids = tuple(kid for kid in children[node] if kid in open_nodes)
                kind = types[node]
                if kind is ast.Choice or (kind is ast.Sequence and fact == _NONEMPTY):
                    if kind is ast.Sequence and not facts[node] & _PRODUCTIVE:
                        continue  # a nonempty sequence must be productive
                    if any(facts[kid] & fact for kid in children[node]):
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
        truth = bytes(bool(known & fact) for known in range(256))
        return list(map(bool, bytes(self._facts).translate(truth)))  # facts fit in a byte

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
        rules, nodes, target_rule = graph.rules, graph.nodes, graph.target_rule
        seen = {self.root}
        queue = deque([self.root])
        while queue:
            name = queue.popleft()
            for node in graph.naming[name]:
                target = target_rule.get(node)
                for used in (target,) if target is not None else _rules_used_by(nodes[node]):
                    if used in rules and used not in seen:
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

    def first_of(self, wanted: Iterable[int]) -> dict[int, CharSet]:
        """:attr:`first` of the ``wanted`` nodes, found over only the nodes they depend on."""
        wanted = list(wanted)
        if "first" in self.__dict__:
            return {node: self.first[node] for node in wanted}
        graph, nullable = self.graph, self.maybe_nullable
        nodes, target = graph.nodes, graph.target

        def constant(node: int) -> CharSet:
            expr = nodes[node]
            if isinstance(expr, ast.RuleRef) and node not in target:
                return ANY_CHAR
            return _first_constant(expr)

        found = union_fixpoint_from(
            wanted, lambda node: self.first_position(node, nullable), constant)
        return {node: found[node] for node in wanted}

    def follow_of(self, wanted: Iterable[int]) -> dict[int, CharSet]:
        """:attr:`follow` of the ``wanted`` nodes, found over only the nodes they depend on:
        those they inherit from (their parents, references to their rule) and the siblings
        that can come after them."""
        wanted = list(wanted)
        if "follow" in self.__dict__:
            return {node: self.follow[node] for node in wanted}
        graph, nullable = self.graph, self.maybe_nullable
        types, children, nodes = graph.types, graph.children, graph.nodes
        parents = self._parents if not graph.preorder else _LazyParents(self)
        root_body = graph.body.get(self.root)
        lookaheads = set(graph.lookahead.values())
        # per needed node: the nodes it inherits from, the nodes whose FIRST it adds, and
        # whether it follows anything (a looping dispatch, a lookahead) or ends the input
        inherits: dict[int, list[int]] = {}
        firsts: dict[int, list[int]] = {}
        anything: set[int] = set()
        pending = list(dict.fromkeys(wanted))
        inherits.update((node, []) for node in pending)
        while pending:
            node = pending.pop()
            heirs, after = inherits[node], firsts.setdefault(node, [])
            if node in lookaheads:
                anything.add(node)
            for parent in parents.get(node, ()):
                kind = types[parent]
                if kind is ast.Sequence:
                    kids = children[parent]
                    for position, kid in enumerate(kids):
                        if kid != node:
                            continue
                        for later in kids[position + 1:]:
                            after.append(later)
                            if not nullable[later]:
                                break
                        else:
                            heirs.append(parent)
                elif kind is ast.Repeat:
                    heirs.append(parent)
                    bound = nodes[parent].max  # type: ignore[union-attr]
                    if bound is None or bound > 1:
                        after.append(node)
                elif kind is ast.Choice or parent in graph.target:
                    heirs.append(parent)
                elif nodes[parent].loop_after_dispatch:  # type: ignore[union-attr]
                    anything.add(node)
                else:
                    heirs.append(parent)
            for heir in heirs:
                if heir not in inherits:
                    inherits[heir] = []
                    pending.append(heir)
        first = self.first_of({kid for kids in firsts.values() for kid in kids})

        def constant(node: int) -> CharSet:
            if node in anything:
                return ANY_CHAR_OR_END
            value = END_ONLY if node == root_body else EMPTY
            for kid in firsts[node]:
                value = value.union(first[kid])
            return value

        found = union_fixpoint_from(inherits, inherits.__getitem__, constant)
        return {node: found[node] for node in wanted}

    @cached_property
    def _referrers(self) -> dict[int, list[int]]:
        """Per rule body: the references to its rule and the dispatch macros entering it."""
        graph = self.graph
        referrers: dict[int, list[int]] = {}
        for node, body in graph.target.items():
            referrers.setdefault(body, []).append(node)
        for dispatch in (ast.TagDispatch, ast.TokenTagDispatch):
            for node in graph.of_type(dispatch):
                names = dict.fromkeys(name for _, name in graph.nodes[node].tags)  # type: ignore[union-attr]
                for name in names:
                    if name in graph.body:
                        referrers.setdefault(graph.body[name], []).append(node)
        return referrers

    @cached_property
    def _parents(self) -> dict[int, list[int]]:
        """Per node, the nodes whose FOLLOW it inherits from or learns from: its structural
        parents, the references to its rule (of a body) and the dispatch macros entering it."""
        graph = self.graph
        parents: dict[int, list[int]] = {}
        for node, kids in enumerate(graph.children):
            for kid in dict.fromkeys(kids) if graph.shared else kids:
                parents.setdefault(kid, []).append(node)
        for body, referrers in self._referrers.items():
            parents.setdefault(body, []).extend(referrers)
        return parents

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


class _LazyParents:
    """:attr:`GrammarProperties._parents` of a graph numbered in pre-order, found for the rules
    asked about only: a rule's nodes are numbered from its body (or lookahead) to the next
    rule's, so each rule's structural parents are found by going over its own nodes."""

    def __init__(self, props: GrammarProperties):
        graph = props.graph
        self._children = graph.children
        self._referrers = props._referrers
        self._roots = sorted([*graph.body.values(), *graph.lookahead.values()])
        self._parents: dict[int, int] = {}
        self._done: set[int] = set()  # the roots whose nodes' parents are known

    def get(self, node: int, default: tuple[()] = ()) -> list[int] | tuple[()]:
        """The nodes ``node`` inherits FOLLOW from (see ``_parents``), or ``default``."""
        k = bisect_right(self._roots, node) - 1
        root = self._roots[k]
        if root not in self._done:
            self._done.add(root)
            stop = self._roots[k + 1] if k + 1 < len(self._roots) else len(self._children)
            parents, children = self._parents, self._children
            for parent in range(root, stop):
                for kid in children[parent]:
                    parents[kid] = parent
        if node == root:
            return self._referrers.get(node, default)
        return [self._parents[node]]


_NAMING = frozenset({ast.RuleRef, ast.TagDispatch, ast.TokenTagDispatch})
"""The node types that name rules."""


def _leaf_facts(expr: ast.Expr) -> int:
    """The facts a leaf (or a reference to an undefined rule) has (see :func:`_known`)."""
    kind = type(expr)
    if kind is ast.Literal:
        return _TEXT if expr.value else _EMPTY_TEXT  # type: ignore[union-attr]
    if kind is ast.CharClass:
        return _TEXT if class_charset(expr) else _NOTHING  # type: ignore[arg-type]
    if kind is ast.RuleRef or kind is ast.RegexMacro:  # an undefined rule: an unknown terminal
        return _UNKNOWN_TERMINAL
    if kind is ast.Substring:
        if any(expr.strings):  # type: ignore[union-attr]
            return _ANYTHING
        return _EMPTY_TEXT
    if kind is ast.TokenSet:
        return _TEXT
    return _ANYTHING  # TagDispatch, TokenTagDispatch: may be empty, may be anything


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
