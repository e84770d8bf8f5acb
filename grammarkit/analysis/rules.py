"""The lint rules: grammars xgrammar accepts but that are almost surely wrong.

Each rule is a small generator function registered with a stable code (``GK2xx``) and a kebab-case
name; docs/diagnostics.md documents every one with a bad and a fixed example. A rule points at the
offending sub-expression and gives a one-line hint.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterator
from collections.abc import Sequence as PySequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from grammarkit.analysis.charset import END, CharSet
from grammarkit.analysis.graph import is_cyclic, strongly_connected_components
from grammarkit.analysis.properties import (
    SMALL_CLASS,
    ExprGraph,
    GrammarProperties,
    class_charset,
)
from grammarkit.diagnostics import Diagnostic, Severity, warning
from grammarkit.ebnf import ast
from grammarkit.ebnf.escapes import class_char, decode_escape
from grammarkit.ebnf.lexer import GkToken, tokenize
from grammarkit.source import SourceText

HUGE_BOUND = 10_000
"""Repetition bounds above this are reported (GK210)."""

INT32_MAX = 2**31 - 1
"""xgrammar 0.2.8 stores repetition bounds as 32-bit integers."""

WHITESPACE = CharSet.of_string(" \t\n\r")

_LONG_HEX_ESCAPE = re.compile(r"\\x[0-9a-fA-F]{3}")


@dataclass
class LintContext:
    """What a rule may look at: the grammar, its root, shared analyses and, if known, the text.

    ``tree``: the grammar is the parser's tree, no node object in two places (see
    :class:`~grammarkit.analysis.properties.ExprGraph`).
    """

    grammar: ast.GrammarAST
    root: str
    source: SourceText | None = None
    tree: bool = False

    @cached_property
    def properties(self) -> GrammarProperties:
        return GrammarProperties(self.grammar, self.root, tree=self.tree)

    def where(self, span: ast.Span | None) -> str:
        """`` (line L, column C)`` for a span when the text is known, else ``""``."""
        if span is None or self.source is None:
            return ""
        position = self.source.position(span.start)
        return f" (line {position.line}, column {position.column})"

    def skip_space(self, span: ast.Span) -> ast.Span:
        """``span`` without the whitespace it starts with, when the text is known."""
        if self.source is None:
            return span
        text = self.source.text
        start = span.start
        while start < span.end - 1 and text[start] in " \t\r\n":
            start += 1
        return ast.Span(start, span.end)


Check = Callable[[LintContext], Iterator[Diagnostic]]
"""A rule's check: every diagnostic it finds in one grammar."""


@dataclass(frozen=True)
class LintRule:
    """A registered rule: a stable code, a kebab-case name and its check."""

    code: str
    name: str
    check: Check


RULES: list[LintRule] = []
"""Every lint rule, in code order."""


def _rule(code: str, name: str) -> Callable[[Check], Check]:
    def register(check: Check) -> Check:
        RULES.append(LintRule(code, name, check))
        return check

    return register


def _name_span(rule: ast.Rule) -> ast.Span | None:
    if rule.name_span is None:
        return None
    return ast.Span(rule.name_span.start, rule.name_span.start + len(rule.name))


def _unbounded_loop_spelling(repeat: ast.Repeat) -> str:
    return repeat.op if repeat.op in ("*", "+") else f"{{{repeat.min},}}"


def _range_text(low: int, high: int) -> str:
    return class_char(low) if low == high else f"{class_char(low)}-{class_char(high)}"


# -- GK201 ---------------------------------------------------------------------------------------
@_rule("GK201", "unreachable-rule")
def unreachable_rule(ctx: LintContext) -> Iterator[Diagnostic]:
    """A rule that no derivation from the root can use."""
    rules = ctx.properties.graph.rules
    if ctx.root not in rules:
        return
    reachable = ctx.properties.reachable
    for name, rule in rules.items():
        if name not in reachable:
            yield warning(
                "GK201", f"rule `{name}` is never used: it is not reachable from `{ctx.root}`",
                _name_span(rule), f"remove it, or reference it from a rule `{ctx.root}` uses")


# -- GK202 ---------------------------------------------------------------------------------------
def _blocking_elements(props: GrammarProperties, name: str) -> Iterator[int]:
    """The rule references and empty classes that keep rule ``name`` from ever completing.

    Walks the rule's body through unproductive nodes only, so every element found lies on every
    attempt to finish the rule; pre-order, so the leftmost comes first.
    """
    graph, productive = props.graph, props.productive
    start = graph.body[name]
    if productive[start]:
        return
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        expr = graph.nodes[node]
        if node in graph.target or isinstance(expr, ast.CharClass):
            yield node
            continue
        for kid in reversed(graph.children[node]):
            if not productive[kid] and kid not in seen:
                seen.add(kid)
                stack.append(kid)


@_rule("GK202", "no-finite-derivation")
def no_finite_derivation(ctx: LintContext) -> Iterator[Diagnostic]:
    """Rules that can never complete because every way to finish them recurses again.

    Reported at the recursive reference of each such rule, and for the root rule whenever it
    accepts nothing at all, at the element in its body that blocks it.
    """
    props = ctx.properties
    graph = props.graph
    stuck = [name for name in graph.rules if not props.productive[graph.body[name]]]
    blocking = {name: list(_blocking_elements(props, name)) for name in stuck}
    number = {name: k for k, name in enumerate(stuck)}
    refs = {
        name: [(node, graph.target_rule[node]) for node in blocking[name] if node in graph.target]
        for name in stuck
    }
    successors = [[number[target] for _, target in refs[name]] for name in stuck]
    cycle_of: dict[str, int] = {}
    for k, component in enumerate(strongly_connected_components(successors)):
        if is_cyclic(component, successors):
            for member in component:
                cycle_of[stuck[member]] = k
    for name in stuck:
        if name not in cycle_of:
            continue
        node, target = next((n, t) for n, t in refs[name] if cycle_of.get(t) == cycle_of[name])
        reason = ("without recursing into itself" if target == name else
                  f"without `{target}`, which leads back to `{name}`")
        yield warning(
            "GK202", f"rule `{name}` can never complete: it cannot finish {reason}",
            graph.nodes[node].span,
            f"add a base case: an alternative of `{name}` that does not lead back to it")
    if ctx.root in number and ctx.root not in cycle_of:
        yield _root_accepts_nothing(ctx, blocking, cycle_of)


def _root_accepts_nothing(ctx: LintContext, blocking: dict[str, list[int]],
                          cycle_of: dict[str, int]) -> Diagnostic:
    graph = ctx.properties.graph
    message = f"the root rule `{ctx.root}` accepts no string"
    hint = "fix the cause first; until then every input is rejected"
    if not blocking[ctx.root]:
        return warning("GK202", message, _name_span(graph.rules[ctx.root]), hint)
    culprit = blocking[ctx.root][0]
    cause = culprit
    seen = {ctx.root}
    while cause in graph.target:
        name = graph.target_rule[cause]
        if name in cycle_of or name in seen or not blocking[name]:
            break
        seen.add(name)
        cause = blocking[name][0]
    expr = graph.nodes[cause]
    if isinstance(expr, ast.RuleRef):
        why = f"`{expr.name}` can never complete"
    else:
        why = f"an empty character class{ctx.where(expr.span)} matches nothing"
    return warning("GK202", f"{message}: {why}", graph.nodes[culprit].span, hint)


# -- GK203 ---------------------------------------------------------------------------------------
@_rule("GK203", "root-matches-only-empty")
def root_matches_only_empty(ctx: LintContext) -> Iterator[Diagnostic]:
    """A root rule whose whole language is the empty string."""
    props = ctx.properties
    if ctx.root not in props.graph.body:
        return
    body = props.graph.body[ctx.root]
    if props.productive[body] and not props.nonempty[body]:
        yield warning(
            "GK203", f"the root rule `{ctx.root}` matches only the empty string",
            props.graph.nodes[body].span,
            "give it something to match; look for `\"\"`, `()` or `{0}` standing in for content")


# -- GK204 ---------------------------------------------------------------------------------------
@_rule("GK204", "empty-class")
def empty_class(ctx: LintContext) -> Iterator[Diagnostic]:
    """A character class that matches no character (``[]``); ``[^]`` matches any and is fine."""
    graph = ctx.properties.graph
    for node in graph.of_type(ast.CharClass):
        expr: ast.CharClass = graph.nodes[node]  # type: ignore[assignment]
        if expr.ranges and not expr.negated:
            continue  # the usual class: not empty
        if not class_charset(expr):
            what = "excludes every character" if expr.negated else "is empty"
            yield warning(
                "GK204", f"this character class {what}, so it matches nothing", expr.span,
                "list the characters it should match; `[^]` matches any character")


# -- GK205 ---------------------------------------------------------------------------------------
@_rule("GK205", "nullable-loop-body")
def nullable_loop_body(ctx: LintContext) -> Iterator[Diagnostic]:
    """An unbounded loop whose body can match the empty string."""
    props = ctx.properties
    graph = props.graph
    for node in graph.of_type(ast.Repeat):
        expr: ast.Repeat = graph.nodes[node]  # type: ignore[assignment]
        if expr.max is None:
            body = graph.children[node][0]
            if props.nullable[body]:
                loop = _unbounded_loop_spelling(expr)
                yield warning(
                    "GK205", f"the body of this `{loop}` loop can match the empty string",
                    expr.item.span,
                    "make the body non-empty: `(x?)*` is `x*`, `(\"\" | \"a\")+` is `\"a\"*`")


# -- GK206 ---------------------------------------------------------------------------------------
def _whitespace_only(expr: ast.Expr) -> bool:
    """Whether ``expr`` matches only non-empty runs of space, tab, CR and LF (no rule lookups)."""
    seen = {id(expr)}
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Choice):
            fresh = [kid for kid in node.alternatives if id(kid) not in seen]
            seen.update(id(kid) for kid in fresh)
            stack.extend(fresh)
            continue
        if isinstance(node, ast.Literal):
            if not node.value or not _WHITESPACE_CHARS.issuperset(node.value):
                return False
        elif isinstance(node, ast.CharClass):
            check = _cached_whitespace_class if len(node.ranges) <= SMALL_CLASS else (
                _whitespace_class)
            if not check(node.ranges, node.negated):
                return False
        else:
            return False
    return True


_WHITESPACE_CHARS = frozenset(" \t\n\r")


def _whitespace_class(ranges: tuple[tuple[int, int], ...], negated: bool) -> bool:
    """Whether a class matches something, and only whitespace."""
    members = class_charset(ast.CharClass(ranges, negated))
    return bool(members) and members.is_subset(WHITESPACE)


_cached_whitespace_class = lru_cache(maxsize=1024)(_whitespace_class)


@_rule("GK206", "unbounded-whitespace")
def unbounded_whitespace(ctx: LintContext) -> Iterator[Diagnostic]:
    """Unbounded whitespace inside another loop, or at the very end of the root's language.

    Either lets a model emit whitespace forever instead of producing content or stopping.
    """
    props = ctx.properties
    graph = props.graph
    loops = _whitespace_loop_nodes(graph)
    if not loops:
        return
    types, children, nullable = graph.types, graph.children, props.nullable
    ends = props.ends_input
    reported: set[int] = set()
    # numbered as a tree, a node's subtree is the numbers from it to its last descendant's:
    # the walk skips the subtrees without a loop (and meets no node twice)
    ordered = sorted(loops) if graph.preorder else None
    for name in _rules_containing(graph, loops):
        start = graph.body[name]
        seen = {(start, False)}
        stack = [(start, False)]
        while stack:
            node, in_loop = stack.pop()
            if node in loops:
                at_end = ends[node] and (node != start or name == ctx.root)
                if (in_loop or at_end) and node not in reported:
                    reported.add(node)
                    where = ("inside a loop that can repeat on whitespace alone" if in_loop
                             else f"at the end of `{ctx.root}`'s text, before the end of input")
                    yield warning(
                        "GK206", f"unbounded whitespace {where}: a model can emit whitespace "
                        "forever", graph.nodes[node].span, "bound it, e.g. `[ \\t\\n]{0,8}`")
                continue
            kind = types[node]
            kids = children[node]
            if not kids:
                continue
            looping = in_loop
            if kind is ast.Repeat:
                high = graph.nodes[node].max  # type: ignore[union-attr]
                looping = looping or high is None or high > 1
            # Inside a sequence, the loop can spin on whitespace alone only if everything
            # beside it may be empty: `("," ws value)*` always needs a comma.
            solid = [kid for kid in kids if not nullable[kid]] if kind is ast.Sequence else []
            for kid in reversed(kids):
                spins = looping and (not solid or solid == [kid])
                if ordered is not None:
                    if kid in loops or _subtree_holds(children, kid, ordered):
                        stack.append((kid, spins))
                elif (kid, spins) not in seen:
                    seen.add((kid, spins))
                    stack.append((kid, spins))


def _subtree_holds(children: list[tuple[int, ...]], node: int, ordered: list[int]) -> bool:
    """Whether ``node`` has one of the ``ordered`` nodes below it, in a graph numbered in
    pre-order (:attr:`ExprGraph.preorder`: its descendants are the numbers up to its last
    descendant's)."""
    last = node
    while children[last]:
        last = children[last][-1]
    if last == node:
        return False
    k = bisect_right(ordered, node)
    return k < len(ordered) and ordered[k] <= last


def _whitespace_loop_nodes(graph: ExprGraph) -> set[int]:
    """The unbounded whitespace repetitions, and the references to rules that are one (directly
    or through a chain of rules like ``ws ::= spaces``)."""
    nodes, types, target = graph.nodes, graph.types, graph.target
    char_class = ast.CharClass
    loops = set()
    for node in graph.of_type(ast.Repeat):
        expr: ast.Repeat = nodes[node]  # type: ignore[assignment]
        if expr.max is not None:
            continue
        item = expr.item
        if type(item) is char_class:  # the usual `[ \t]*`, and all other loops over classes
            if len(item.ranges) <= SMALL_CLASS:
                found = _cached_whitespace_class(item.ranges, item.negated)
            else:
                found = _whitespace_class(item.ranges, item.negated)
        else:
            found = _whitespace_only(item)
        if found:
            loops.add(node)
    if not loops:
        return loops
    rule_ref = ast.RuleRef
    ends: dict[int, int] = {}  # per body that is a reference: where its chain of references ends
    names = set()
    for name, node in graph.body.items():
        chain: dict[int, None] = {}
        while types[node] is rule_ref and node in target and node not in ends:
            if node in chain:  # a cycle of rules that are only references
                break
            chain[node] = None
            node = target[node]
        end = ends.get(node, node)
        for member in chain:
            ends[member] = end
        if end in loops:
            names.add(name)
    if names:
        loops.update(node for node in graph.target if graph.target_rule[node] in names)
    return loops


def _rules_containing(graph: ExprGraph, nodes: set[int]) -> list[str]:
    """The rules (in order) whose body or lookahead contains one of ``nodes``."""
    if graph.shared:  # a node may lie below several rules
        return list(graph.rules)
    # unshared, each rule's nodes are numbered consecutively from its body on
    starts = [graph.body[name] for name in graph.rules]
    names = list(graph.rules)
    return [names[k] for k in sorted({bisect_right(starts, node) - 1 for node in nodes})]


# -- GK207 ---------------------------------------------------------------------------------------
def _structure_keys(graph: ExprGraph, starts: list[int]) -> dict[int, int]:
    """Per node below ``starts``, an integer equal for structurally equal nodes (spans ignored,
    classes as sets)."""
    nodes, types, children = graph.nodes, graph.types, graph.children
    interned: dict[tuple[object, ...], int] = {}
    keys: dict[int, int] = {}
    stack = [(start, False) for start in starts]
    while stack:
        node, expanded = stack.pop()
        if node in keys:
            continue
        kids = children[node]
        if kids and not expanded:
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids if kid not in keys)
            continue
        kind, expr = types[node], nodes[node]
        shape: tuple[object, ...]
        if kind is ast.CharClass:
            shape = ("class", class_charset(expr).intervals)  # type: ignore[arg-type]
        elif kind is ast.Repeat:
            shape = ("repeat", expr.min, expr.max,  # type: ignore[union-attr]
                     keys[kids[0]])
        elif kind is ast.Sequence or kind is ast.Choice:
            shape = (kind.__name__, tuple(keys[kid] for kid in kids))
        else:
            shape = (expr,)  # leaves: dataclass equality already ignores spans
        keys[node] = interned.setdefault(shape, len(interned))
    return keys


def _outline(graph: ExprGraph, node: int) -> object:
    """What structurally equal nodes share: their own shape and their children's kinds."""
    kids = graph.children[node]
    if not kids:
        return _shape(graph, node)
    return _shape(graph, node), tuple(_shape(graph, kid) for kid in kids)


def _shape(graph: ExprGraph, node: int) -> object:
    kind, expr = graph.types[node], graph.nodes[node]
    if kind is ast.CharClass:
        return class_charset(expr).intervals  # type: ignore[arg-type]
    if kind is ast.Repeat:
        return expr.min, expr.max  # type: ignore[union-attr]
    if kind is ast.Sequence or kind is ast.Choice:
        return kind, len(graph.children[node])
    return expr


@_rule("GK207", "duplicate-alternative")
def duplicate_alternative(ctx: LintContext) -> Iterator[Diagnostic]:
    """An alternative that repeats an earlier alternative of the same choice."""
    graph = ctx.properties.graph
    nodes, types, children = graph.nodes, graph.types, graph.children
    choice, literal, rule_ref, sequence = ast.Choice, ast.Literal, ast.RuleRef, ast.Sequence
    choices = graph.of_type(choice)
    # the choices directly inside another (spliced into it); in a tree, found on the way, as a
    # parent is numbered before its children
    nested = {kid for node in choices for kid in children[node]
              if types[kid] is choice} if graph.shared else set()
    groups = []  # per outermost choice, its alternatives with nested choices spliced in
    for node in choices:
        if node in nested:
            continue
        alternatives: PySequence[int] = children[node]
        if len(alternatives) == 2:  # the commonest choice: decide without building anything
            first, second = alternatives
            kind = types[first]
            if kind is not types[second]:
                if kind is not choice and types[second] is not choice:
                    continue
            elif (kind is literal and nodes[first].value != nodes[second].value  # type: ignore[union-attr]
                  or kind is rule_ref and nodes[first].name != nodes[second].name):  # type: ignore[union-attr]
                continue
        kinds = [types[alternative] for alternative in alternatives]
        if choice in kinds:
            alternatives = []
            stack = list(reversed(children[node]))
            while stack:
                alternative = stack.pop()
                if types[alternative] is choice:
                    nested.add(alternative)
                    stack.extend(reversed(children[alternative]))
                else:
                    alternatives.append(alternative)
            kinds = [types[alternative] for alternative in alternatives]
        if len(set(kinds)) == len(kinds):
            continue  # no two alternatives of one kind
        # cheap necessary conditions: equal literals have equal values, equal references equal
        # names, equal sequences items of equal kinds
        cheap: list[object] = []
        for alternative, kind in zip(alternatives, kinds):
            if kind is literal:
                cheap.append(nodes[alternative].value)  # type: ignore[union-attr]
            elif kind is rule_ref:
                cheap.append(nodes[alternative].name)  # type: ignore[union-attr]
            elif kind is sequence:
                cheap.append(tuple(map(types.__getitem__, children[alternative])))
            else:
                cheap.append(kind)
        if len(set(cheap)) == len(cheap):
            continue
        # equal alternatives have equal outlines: compare in depth only those that share one
        outlines = [_outline(graph, alternative) for alternative in alternatives]
        if len(set(outlines)) == len(outlines):
            continue
        sharing = {outline for outline, n in Counter(outlines).items() if n > 1}
        groups.append([a for a, o in zip(alternatives, outlines) if o in sharing])
    keys = _structure_keys(graph, [node for group in groups for node in group])
    for alternatives in groups:
        first_seen: dict[int, int] = {}
        for alternative in alternatives:
            earlier = first_seen.get(keys[alternative])
            if earlier is None:
                first_seen[keys[alternative]] = alternative
            else:
                yield warning(
                    "GK207", "this alternative repeats an earlier one"
                    f"{ctx.where(graph.nodes[earlier].span)}", graph.nodes[alternative].span,
                    "remove the duplicate; it adds nothing but ambiguity")


# -- GK208 ---------------------------------------------------------------------------------------
@_rule("GK208", "overlapping-class-ranges")
def overlapping_class_ranges(ctx: LintContext) -> Iterator[Diagnostic]:
    """A character class listing some character twice (duplicate or overlapping ranges)."""
    graph = ctx.properties.graph
    for node in graph.of_type(ast.CharClass):
        expr: ast.CharClass = graph.nodes[node]  # type: ignore[assignment]
        if len(expr.ranges) < 2:
            continue
        find = _cached_overlap if len(expr.ranges) <= SMALL_CLASS else _overlap
        message = find(expr.ranges)
        if message is not None:
            yield warning("GK208", message, expr.span,
                          "list each character once; the overlap may hide a typo")


def _overlap(ranges: tuple[tuple[int, int], ...]) -> str | None:
    """What GK208 says of a class's first range that overlaps another, or ``None``."""
    widest: tuple[int, int] | None = None
    for low, high in sorted(ranges):
        if widest is not None and low <= widest[1]:
            if (low, high) == widest:
                return f"`{_range_text(low, high)}` appears twice in this character class"
            return (f"`{_range_text(*widest)}` and `{_range_text(low, high)}` overlap in "
                    "this character class")
        if widest is None or high > widest[1]:
            widest = (low, high)
    return None


_cached_overlap = lru_cache(maxsize=4096)(_overlap)


# -- GK209 ---------------------------------------------------------------------------------------
@_rule("GK209", "left-recursion")
def left_recursion(ctx: LintContext) -> Iterator[Diagnostic]:
    """Left recursion: fine for xgrammar's Earley parser, but it costs at every step."""
    props = ctx.properties
    graph = props.graph
    names = list(graph.rules)
    number = {name: k for k, name in enumerate(names)}
    # a rule's edges: the rules its body can begin with (a cycle of these is a cycle of the
    # node graph of first positions, which always passes through rule bodies)
    successors = _left_successors(props, names, number)
    for component in strongly_connected_components(successors):
        if not is_cyclic(component, successors):
            continue
        productive = [names[k] for k in sorted(component)
                      if props.productive[graph.body[names[k]]]]
        if not productive:
            continue  # GK202 already reports these rules
        name = productive[0]
        path = _cycle_path(props, graph.body[name])
        chain = [name] + [graph.target_rule[node] for node in path if node in graph.target]
        first_ref = next(node for node in path if node in graph.target)
        yield Diagnostic(
            "GK209", Severity.NOTE,
            f"rule `{name}` is left-recursive ({' -> '.join(chain)})",
            graph.nodes[first_ref].span,
            "xgrammar parses it (Earley), but left recursion costs at every step; prefer a loop: "
            "`expr ::= term (\"+\" term)*`")


def _left_successors(props: GrammarProperties, names: list[str],
                     number: dict[str, int]) -> list[list[int]]:
    """Per rule of ``names``: the numbers of the rules its matches can begin with."""
    target_rule, shared = props.graph.target_rule, props.graph.shared
    return [[number[target_rule[ref]] for ref in _left_references(props, name, shared)]
            for name in names]


def _left_references(props: GrammarProperties, name: str, remember: bool) -> list[int]:
    """The references to defined rules a match of rule ``name`` can begin with.

    :meth:`GrammarProperties.first_position`, inlined: this runs over every rule. Nodes met
    are only remembered when ``remember`` (a shared graph): in a tree no node is met twice on
    the way down a rule.
    """
    graph = props.graph
    types, children, nodes, target, nullable = (
        graph.types, graph.children, graph.nodes, graph.target, props.nullable)
    sequence, repeat = ast.Sequence, ast.Repeat
    start = graph.body[name]
    found = []
    seen = {start}
    stack = [start]
    while stack:
        node = stack.pop()
        if node in target:
            found.append(node)
            continue
        kids = children[node]
        if not kids:
            continue
        kind = types[node]
        if kind is sequence:
            for position, kid in enumerate(kids):
                if not nullable[kid]:
                    kids = kids[: position + 1]
                    break
        elif kind is repeat and nodes[node].max == 0:  # type: ignore[union-attr]
            continue
        if not remember:
            stack.extend(kids)
            continue
        for kid in kids:
            if kid not in seen:
                seen.add(kid)
                stack.append(kid)
    return found


def _cycle_path(props: GrammarProperties, start: int) -> list[int]:
    """The nodes of a shortest path of first positions from ``start`` back to ``start``.

    Every node on such a path lies in ``start``'s strongly connected component, so the search
    needs no restriction to it.
    """
    parent: dict[int, int] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for target in props.first_position(node, props.nullable):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            if target not in parent:
                parent[target] = node
                queue.append(target)
    raise AssertionError("a cyclic component has a cycle through every member")


# -- GK210 ---------------------------------------------------------------------------------------
def _as_int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


@_rule("GK210", "huge-repetition-bound")
def huge_repetition_bound(ctx: LintContext) -> Iterator[Diagnostic]:
    """Repetition bounds above 10,000, and above 2^31-1 (xgrammar 0.2.8 wraps them around)."""
    graph = ctx.properties.graph
    for node in graph.of_type(ast.Repeat):
        expr: ast.Repeat = graph.nodes[node]  # type: ignore[assignment]
        bound = max(expr.min, expr.max or 0)
        if bound <= HUGE_BOUND:
            continue
        span = expr.span
        if span is not None and expr.item.span is not None:
            span = ctx.skip_space(ast.Span(expr.item.span.end, span.end))
        if bound > INT32_MAX:
            yield warning(
                "GK210", f"repetition bound {bound} does not fit in 32 bits: xgrammar 0.2.8 "
                f"silently wraps it around to {_as_int32(bound)}", span,
                "use `*`, `+` or `{m,}` for no upper limit")
        else:
            yield warning(
                "GK210", f"repetition bound {bound} is huge: expanding it costs time and memory",
                span, f"use `{{m,}}` if the limit does not matter, or keep bounds <= {HUGE_BOUND}")


# -- GK211 ---------------------------------------------------------------------------------------
@_rule("GK211", "lookahead-never-follows")
def lookahead_never_follows(ctx: LintContext) -> Iterator[Diagnostic]:
    """A lookahead ``(= ...)`` that nothing following its rule can ever start with."""
    props = ctx.properties
    graph = props.graph
    checked = {name: node for name, node in graph.lookahead.items()
               if not props.maybe_nullable[node]}
    if not checked:
        return
    follows = props.follow_of(graph.body[name] for name in checked)
    firsts = props.first_of(checked.values())
    for name, node in checked.items():
        follow = follows[graph.body[name]]
        if follow and not firsts[node].intersects(follow):
            only = "only the end of the input" if follow.intervals == ((END, END),) else (
                "text that never starts like it")
            yield warning(
                "GK211", f"this lookahead can never match: `{name}` is followed by {only}",
                graph.nodes[node].span,
                f"fix the lookahead to describe what follows `{name}`, or remove it")


# -- GK212 ---------------------------------------------------------------------------------------
@_rule("GK212", "greedy-hex-escape")
def greedy_hex_escape(ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``\\x`` escape that swallows more than two hex digits (``"\\x41B"`` is U+041B)."""
    if ctx.source is None:
        return
    for token in _tokens_around(ctx, _LONG_HEX_ESCAPE.finditer(ctx.source.text)):
        if token.type not in ("STRING", "CLASS"):
            continue
        raw: str = token.value
        base = token.start
        i = 1
        while i < len(raw):
            if raw[i] != "\\" or i + 1 >= len(raw):
                i += 1
                continue
            decoded = decode_escape(raw, i, in_class=token.type == "CLASS")
            if decoded is None:
                i += 2
                continue
            point, length = decoded
            digits = raw[i + 2 : i + length]
            if raw[i + 1] == "x" and len(digits) > 2:
                wide = f"\\u{point:04X}" if point <= 0xFFFF else f"\\U{point:08X}"
                yield warning(
                    "GK212", f"`\\x{digits}` is one escape, U+{point:04X}, not `\\x{digits[:2]}` "
                    f"followed by `{digits[2:]}`",
                    ast.Span(base + i, base + i + length),
                    f"write `\\u00{digits[:2]}{digits[2:]}` for the character then "
                    f"`{digits[2:]}`, or `{wide}` for U+{point:04X}")
            i += length


def _tokens_around(ctx: LintContext, hits: Iterator[re.Match[str]]) -> Iterator[GkToken]:
    """The tokens of the rules where ``hits`` (matches in the text) are, each rule scanned on
    its own (a rule's tokens are the same read alone: it starts a line with its name)."""
    assert ctx.source is not None
    text = ctx.source.text
    spans = [rule.span for rule in ctx.grammar.rules if rule.span is not None]
    starts = [span.start for span in spans]
    scanned = -1
    for hit in hits:
        k = bisect_right(starts, hit.start()) - 1
        if k <= scanned or hit.start() >= spans[k].end:
            continue
        scanned = k
        base = spans[k].start
        for token in tokenize(text[base : spans[k].end]).tokens[:-1]:  # without `$END`
            token.start += base
            token.end += base
            yield token


# -- GK214 ---------------------------------------------------------------------------------------
@_rule("GK214", "lazy-rule-xgrammar-cannot-compile")
def lazy_rule_xgrammar_cannot_compile(ctx: LintContext) -> Iterator[Diagnostic]:
    """A ``[lazy]`` rule whose body xgrammar 0.2.8's compiler refuses.

    xgrammar compiles a lazy rule into one automaton, so its body must be terminal-like:
    literals, classes, ``class*``/``class+``, exact repetitions ``x{n}``, and alternatives and
    sequences of these (``x?``, ``Regex`` and ``Substring`` only as the whole body). Repetition
    ranges, ``x?`` inside a sequence, loops over more than one character, alternatives of
    several characters inside a sequence (but at its start) and the dispatch and token macros
    are not.
    """
    lazy = [r for r in ctx.grammar.rules
            if r.attributes and any(a.key == "lazy" for a in r.attributes)]
    if not lazy:
        return
    rules = ctx.properties.graph.rules
    recursive = _recursive_rules(rules, [rule.name for rule in lazy])
    for rule in lazy:
        if rules.get(rule.name) is not rule:
            continue
        culprit = _not_terminal_like(rule.body, rules, recursive)
        if culprit is not None:
            node, why = culprit
            yield warning(
                "GK214", f"xgrammar 0.2.8 cannot compile lazy rule `{rule.name}`: {why}",
                node.span if node.span is not None else _name_span(rule),
                "spell the alternatives out at the top of the body (`\"k\" [0-9] [0-9] | "
                "\"k\" [0-9] [0-9] [0-9]` for `\"k\" [0-9]{2,3}`), make the whole body one "
                "`Regex(...)`, or drop `lazy`")


# -- GK215 ---------------------------------------------------------------------------------------
@_rule("GK215", "regex-lookahead-ignored")
def regex_lookahead_ignored(ctx: LintContext) -> Iterator[Diagnostic]:
    """A lookahead inside ``Regex("...")``: xgrammar 0.2.8 ignores it, and so does grammarkit."""
    if ctx.source is not None and "(?" not in ctx.source.text:
        return
    from grammarkit.convert.regex import ignored_lookaheads

    graph = ctx.properties.graph
    for node, kind in enumerate(graph.types):
        if kind is not ast.RegexMacro:
            continue
        macro: ast.RegexMacro = graph.nodes[node]  # type: ignore[assignment]
        found = ignored_lookaheads(macro.pattern) if "(?" in macro.pattern else []
        if found:
            shown = macro.pattern[found[0].start:found[0].end]
            yield warning(
                "GK215", f"the lookahead `{shown}` in this Regex is ignored: it matches as if "
                "the lookahead were not there", macro.span,
                "xgrammar 0.2.8 ignores lookaheads in Regex(...) too (it logs a warning); "
                "express the constraint in the grammar, or check the text after generation")


def _recursive_rules(rules: dict[str, ast.Rule], starts: list[str]) -> set[str]:
    """The rules reachable from ``starts`` (through references) that can reach themselves.

    Only those rules are walked: every cycle through a reachable rule stays among them.
    """
    names = [name for name in dict.fromkeys(starts) if name in rules]
    number = {name: k for k, name in enumerate(names)}
    successors: list[list[int]] = []
    for name in names:  # grows as references reach new rules
        used = []
        for target, _ in ast.referenced_rules(rules[name].body):
            if target not in number and target in rules:
                number[target] = len(names)
                names.append(target)
            if target in number:
                used.append(number[target])
        successors.append(used)
    return {
        names[node]
        for component in strongly_connected_components(successors)
        if is_cyclic(component, successors)
        for node in component
    }


def _not_terminal_like(
    body: ast.Expr, rules: dict[str, ast.Rule], recursive: set[str]
) -> tuple[ast.Expr, str] | None:
    """The first part of a lazy rule's body that xgrammar cannot make one automaton of.

    As xgrammar 0.2.8 does: each alternative of the body is flattened into one sequence; inside
    it, alternatives (a group or a rule) must each be one character (they become a class),
    except at the start of the alternative, where alternatives without empty strings, rules,
    groups of alternatives and repetitions are inlined (``("a" "b" | "c") "k"``); ``Regex`` and
    ``Substring`` only make the whole body.
    """
    seen: set[tuple[str, bool, bool]] = set()
    # (node, is the whole body, is the first element of its flattened alternative)
    stack: list[tuple[ast.Expr, bool, bool]] = [(body, True, True)]
    while stack:
        node, whole, first = stack.pop()
        if isinstance(node, ast.Choice):
            alternatives = _alternatives(node)
            if whole:
                stack.extend((alternative, False, True) for alternative in alternatives)
            elif all(_single_character(a, rules) for a in alternatives):
                continue
            elif first and all(_inlinable(a) for a in alternatives):
                stack.extend((alternative, False, False) for alternative in alternatives)
            else:
                return node, ("alternatives inside a sequence must each be one character, "
                              "unless they start it")
        elif isinstance(node, ast.Sequence):
            items = _items(node)
            stack.extend((item, len(items) == 1 and whole, first and k == 0)
                         for k, item in enumerate(items))
        elif isinstance(node, ast.RuleRef):
            if node.name in recursive:
                return node, f"`{node.name}` is recursive"
            if node.name in rules and (node.name, whole, first) not in seen:
                seen.add((node.name, whole, first))
                stack.append((rules[node.name].body, whole, first))
        elif isinstance(node, ast.Repeat):
            if node.min == node.max:
                stack.append((node.item, False, False))
            elif node.max is None and node.min <= 1 and _single_character(node.item, rules):
                continue
            elif (node.min, node.max) == (0, 1) and whole:
                stack.append((node.item, False, True))
            elif node.max is None and node.min <= 1:
                return node, f"`{node.op}` repeats more than one character"
            elif (node.min, node.max) == (0, 1):
                return node, "`?` inside a sequence is not supported"
            else:
                return node, "repetition ranges `{m,n}` are not supported"
        elif isinstance(node, (ast.RegexMacro, ast.Substring)) and not whole:
            return node, "`Regex` and `Substring` must be the whole body"
        elif isinstance(node, (ast.TagDispatch, ast.TokenTagDispatch, ast.TokenSet)):
            return node, "it must be made of literals, classes and `Regex`, not macros"
    return None


def _items(sequence: ast.Sequence) -> list[ast.Expr]:
    """The items of ``sequence`` but empty strings, which xgrammar drops."""
    return [item for item in sequence.items if not (isinstance(item, ast.Literal)
                                                     and not item.value)]


def _alternatives(choice: ast.Choice) -> list[ast.Expr]:
    """The alternatives of ``choice``, with those of nested groups of alternatives."""
    found: list[ast.Expr] = []
    pending = list(reversed(choice.alternatives))
    while pending:
        alternative = pending.pop()
        while isinstance(alternative, ast.Sequence) and len(_items(alternative)) == 1:
            alternative = _items(alternative)[0]
        if isinstance(alternative, ast.Choice):
            pending.extend(reversed(alternative.alternatives))
        else:
            found.append(alternative)
    return found


def _single_character(node: ast.Expr, rules: dict[str, ast.Rule], depth: int = 0) -> bool:
    """Whether ``node`` matches one character from a set: a class, a one-byte literal, or
    alternatives (a group or a rule) of these, which xgrammar turns into a class."""
    while isinstance(node, ast.Sequence) and len(_items(node)) == 1:
        node = _items(node)[0]
    if isinstance(node, ast.CharClass):
        return True
    if isinstance(node, ast.Literal):
        return len(node.value.encode("utf-8", "surrogatepass")) == 1
    if isinstance(node, ast.RuleRef) and node.name in rules and depth < 64:
        return _single_character(rules[node.name].body, rules, depth + 1)
    if isinstance(node, ast.Choice):
        return all(_single_character(a, rules, depth + 1) for a in _alternatives(node))
    return False


def _inlinable(alternative: ast.Expr) -> bool:
    """Whether xgrammar inlines an alternative of a group that starts a sequence: not empty,
    and no rule, group of alternatives, repetition (other than ``class*``) or macro in it."""
    items = _items(alternative) if isinstance(alternative, ast.Sequence) else [alternative]
    if not items or items == [ast.Literal("")]:
        return False
    return all(isinstance(item, (ast.Literal, ast.CharClass))
               or (isinstance(item, ast.Repeat) and (item.min, item.max) in ((0, None),)
                   and isinstance(item.item, ast.CharClass))
               or (isinstance(item, ast.Repeat) and item.min == item.max)
               or (isinstance(item, ast.Sequence) and _inlinable(item))
               for item in items)
