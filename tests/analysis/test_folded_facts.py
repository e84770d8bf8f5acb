"""The folded boolean facts and the shortcuts of the lint rules, pinned against plain definitions.

``GrammarProperties`` folds productive, nullable, maybe_nullable and nonempty together and solves
only what folding leaves open; ``ends_input`` walks instead of computing FOLLOW sets. Here each is
compared with its textbook formulation (one Horn system per fact, solved by
``graph.boolean_fixpoint``; END in the full FOLLOW set) on random grammars with macros and
lookaheads, parsed as trees and rebuilt with shared sub-expressions (as converters make them).
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.analysis.charset import END
from grammarkit.analysis.graph import Gate, boolean_fixpoint
from grammarkit.analysis.lint import lint, lint_grammar_ast
from grammarkit.analysis.properties import GrammarProperties, class_charset
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import parse

NAMES = ("root", "r1", "r2", "ws")
ATOMS = ('"a"', '""', '" "', "[ \\n]", "[]", "[^a]", "[a-bb]", '"\\t"', "()", 'Regex("a*")',
         'Substring("ab")', 'Substring("")', "Token(1)", 'TagDispatch(("<", r1))',
         'TagDispatch(("<", r2), loop_after_dispatch=false)', "nowhere", *NAMES)
QUANTIFIERS = ("?", "*", "+", "{2}", "{0,2}", "{1,}", "{0}")

expressions = st.recursive(
    st.sampled_from(ATOMS),
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(" ".join),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: "(" + " | ".join(xs) + ")"),
        st.tuples(inner, st.sampled_from(QUANTIFIERS)).map(lambda t: f"({t[0]}){t[1]}"),
    ),
    max_leaves=7,
)
rules = st.tuples(expressions, st.one_of(st.none(), expressions))
grammars = st.lists(rules, min_size=4, max_size=4).map(lambda bodies: "".join(
    f"{name} ::= {body}{'' if ahead is None else f' (= {ahead})'}\n"
    for name, (body, ahead) in zip(NAMES, bodies)))


def shared(grammar: ast.GrammarAST) -> ast.GrammarAST:
    """``grammar`` with equal sub-expressions made one object (a DAG, as converters build)."""
    pool: dict[ast.Expr, ast.Expr] = {}

    def rebuild(expr: ast.Expr) -> ast.Expr:
        if isinstance(expr, ast.Sequence):
            expr = ast.Sequence(tuple(rebuild(item) for item in expr.items), expr.span)
        elif isinstance(expr, ast.Choice):
            expr = ast.Choice(tuple(rebuild(item) for item in expr.alternatives), expr.span)
        elif isinstance(expr, ast.Repeat):
            expr = ast.Repeat(rebuild(expr.item), expr.min, expr.max, expr.op, expr.span)
        return pool.setdefault(expr, expr)

    return ast.GrammarAST(tuple(
        ast.Rule(rule.name, rebuild(rule.body),
                 None if rule.lookahead is None else rebuild(rule.lookahead),
                 rule.attributes, rule.span, rule.name_span)
        for rule in grammar.rules))


def textbook(props: GrammarProperties, gate: Callable[[int, ast.Expr], Gate]) -> list[bool]:
    graph = props.graph
    successors = [graph.structural_and_refs(node) for node in range(len(graph.nodes))]
    return boolean_fixpoint(successors, [gate(n, e) for n, e in enumerate(graph.nodes)])


def textbook_facts(props: GrammarProperties) -> dict[str, list[bool]]:
    graph = props.graph

    def ref(node: int, undefined: Gate) -> Gate:
        return Gate.ANY if node in graph.target else undefined

    def productive(node: int, expr: ast.Expr) -> Gate:
        if isinstance(expr, ast.CharClass):
            return Gate.TRUE if class_charset(expr) else Gate.FALSE
        if isinstance(expr, ast.RuleRef):
            return ref(node, Gate.TRUE)
        if isinstance(expr, ast.Sequence):
            return Gate.ALL
        if isinstance(expr, ast.Choice):
            return Gate.ANY
        if isinstance(expr, ast.Repeat):
            return Gate.TRUE if expr.min == 0 else Gate.ALL
        return Gate.TRUE

    def nullable(unknown: Gate) -> Callable[[int, ast.Expr], Gate]:
        def gate(node: int, expr: ast.Expr) -> Gate:
            if isinstance(expr, ast.Literal):
                return Gate.FALSE if expr.value else Gate.TRUE
            if isinstance(expr, ast.RuleRef):
                return ref(node, unknown)
            if isinstance(expr, ast.Sequence):
                return Gate.ALL
            if isinstance(expr, ast.Choice):
                return Gate.ANY
            if isinstance(expr, ast.Repeat):
                return Gate.TRUE if expr.min == 0 else Gate.ALL
            if isinstance(expr, (ast.TagDispatch, ast.TokenTagDispatch, ast.Substring)):
                return Gate.TRUE
            return unknown if isinstance(expr, ast.RegexMacro) else Gate.FALSE
        return gate

    found = {"productive": textbook(props, productive),
             "nullable": textbook(props, nullable(Gate.FALSE)),
             "maybe_nullable": textbook(props, nullable(Gate.TRUE))}

    def nonempty(node: int, expr: ast.Expr) -> Gate:
        if isinstance(expr, ast.Literal):
            return Gate.TRUE if expr.value else Gate.FALSE
        if isinstance(expr, ast.CharClass):
            return Gate.TRUE if class_charset(expr) else Gate.FALSE
        if isinstance(expr, ast.RuleRef):
            return ref(node, Gate.TRUE)
        if isinstance(expr, ast.Sequence):
            return Gate.ANY if found["productive"][node] else Gate.FALSE
        if isinstance(expr, ast.Choice):
            return Gate.ANY
        if isinstance(expr, ast.Repeat):
            return Gate.FALSE if expr.max == 0 else Gate.ANY
        if isinstance(expr, ast.Substring):
            return Gate.TRUE if any(expr.strings) else Gate.FALSE
        return Gate.TRUE

    found["nonempty"] = textbook(props, nonempty)
    return found


@settings(max_examples=150, deadline=None)
@given(grammars, st.sampled_from(NAMES))
def test_folded_facts_and_ends_input_equal_their_definitions(text: str, root: str) -> None:
    result = parse(text, root)
    for grammar in (result.ast, shared(result.ast)):
        props = GrammarProperties(grammar, root)
        for fact, expected in textbook_facts(props).items():
            assert getattr(props, fact) == expected, fact
        assert props.ends_input == [END in follow for follow in props.follow]
        rules = grammar.rule_map()
        reachable, pending = {root}, [root]
        while pending:
            rule = rules[pending.pop()]
            for body in (rule.body, rule.lookahead):
                for name, _ in ast.referenced_rules(body) if body is not None else ():
                    if name in rules and name not in reachable:
                        reachable.add(name)
                        pending.append(name)
        assert props.reachable == reachable


def test_a_whitespace_loop_shared_by_two_rules_is_found_below_the_second() -> None:
    loop = ast.Repeat(ast.CharClass(((32, 32),)), 0, None, "*")
    grammar = ast.GrammarAST((
        ast.Rule("root", ast.Sequence((ast.Literal("y"), ast.RuleRef("a"), ast.RuleRef("b"),
                                       ast.Literal("z")))),
        ast.Rule("a", ast.Sequence((ast.Literal("x"), loop, ast.Literal("x")))),  # harmless
        ast.Rule("b", ast.Repeat(ast.Choice((loop, ast.Literal("b"))), 1, 2, "{}")),  # spins
    ))
    props = GrammarProperties(grammar, "root")
    assert props.graph.shared
    assert [d.code for d in lint_grammar_ast(grammar, "root")] == ["GK206"]


def test_duplicate_alternatives_compare_classes_as_sets_and_bounds_not_spelling() -> None:
    text = 'root ::= [a-b] "x"? | [ba] "x"{0,1} | [ab] "x"{0,2} | "y"\n'
    found = [(d.code, d.span.start) for d in lint(text) if d.code == "GK207"]  # type: ignore[union-attr]
    assert found == [("GK207", text.index("[ba]"))]
