"""Lint on big generated grammars: the fast paths give the diagnostics of the general ones.

``lint`` numbers a parsed grammar in one recursive walk that folds the facts on the way
(``ExprGraph(tree=True)``); the general walk (iterative, by node identity, as for converters'
shared trees) is the reference. Every rule is also run alone, so that no pass leans on another.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.grammar_texts import generated, varied
from grammarkit.analysis.lint import lint
from grammarkit.analysis.properties import ExprGraph
from grammarkit.analysis.rules import RULES, LintContext
from grammarkit.analysis.suppression import Suppressions
from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf.parser import parse
from grammarkit.source import SourceText

from .random_grammars import grammars

VARIED = varied(100_000)
GENERATED = generated(120_000)
Found = list[tuple[object, ...]]


def as_tuples(diagnostics: Sequence[Diagnostic]) -> Found:
    return [(d.code, d.severity, d.message, d.span, d.hint) for d in diagnostics]


def run_rules(text: str, *, tree: bool) -> Found:
    """What ``lint`` reports, with the numbering chosen by ``tree``."""
    result = parse(text)
    assert result.ok
    source = SourceText(text, "g.ebnf")
    context = LintContext(result.ast, "root", source, tree=tree)
    found = Suppressions(result.ast, source).filter(
        d for rule in RULES for d in rule.check(context))
    return sorted(as_tuples(found), key=lambda d: (d[3].start, d[0]))  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", [VARIED, GENERATED], ids=["varied", "generated"])
def test_tree_walk_reports_what_the_general_walk_reports(text: str) -> None:
    assert ExprGraph(parse(text).ast, tree=True).folded is not None  # the fast path ran
    fast = run_rules(text, tree=True)
    assert fast == run_rules(text, tree=False)
    assert fast == as_tuples(lint(text, "g.ebnf"))


def _element(depth: int) -> st.SearchStrategy[str]:
    """Rule body text with whitespace loops and left recursion in every position."""
    leaf = st.sampled_from(('"x"', '""', '" "', "ws", "[ \\t]*", "r", "root"))
    if depth == 0:
        return leaf
    inner = st.lists(_element(depth - 1), min_size=1, max_size=3)
    group = st.tuples(inner, st.sampled_from((" ", " | ")), st.sampled_from(("", "*", "+", "?",
                                                                                "{2}", "{0,3}")))
    return st.one_of(leaf, group.map(lambda parts: f"({parts[1].join(parts[0])}){parts[2]}"))


_WHITESPACE_GRAMMARS = st.tuples(*[st.lists(_element(2), min_size=1, max_size=3).map(" ".join)
                                   for _ in range(2)]).map(
    lambda bodies: f"root ::= {bodies[0]}\nr ::= {bodies[1]} | \"y\"\nws ::= [ \\n]*\n")


@settings(max_examples=150)
@given(st.one_of(grammars, _WHITESPACE_GRAMMARS))
def test_tree_walk_reports_what_the_general_walk_reports_on_random_grammars(text: str) -> None:
    """The pre-order shortcuts (GK206 skipping subtrees without a loop, GK209 remembering no
    node) on grammars of every shape."""
    assert run_rules(text, tree=True) == run_rules(text, tree=False)


def test_varied_grammar_fires_every_rule_but_the_root_ones() -> None:
    codes = {d.code for d in lint(VARIED)}
    assert codes == {rule.code for rule in RULES} - {"GK203"}


def test_each_rule_alone_reports_what_it_reports_among_all() -> None:
    text = varied(30_000)
    everything = as_tuples(lint(text))
    for rule in RULES:
        alone = as_tuples(lint(text, select=[rule.code]))
        assert alone == [d for d in everything if d[0] == rule.code], rule.code


def test_nesting_deeper_than_the_stack_falls_back_to_the_iterative_walk() -> None:
    depth = 700  # two tree levels per parenthesis: deeper than Python's default stack
    text = ("root ::= " + "(" * depth + '"a" [ \\t]* ("x" | "x")' + ')* "b"' * depth + "\n"
            'spare ::= [a-zm]\n')
    result = parse(text)
    assert result.ok
    assert ExprGraph(result.ast, tree=True).folded is None
    found = run_rules(text, tree=True)
    assert found == run_rules(text, tree=False)
    assert {d[0] for d in found} == {"GK201", "GK207", "GK208"}


def test_linting_leaves_no_reference_cycles_behind() -> None:
    """What lint builds is freed when it returns, not at the next full collection (a 1 MB
    grammar's tree kept alive by a cycle cost its memory until then, and 0.15 s at exit)."""
    gc.collect()
    gc.disable()
    try:
        lint(GENERATED)
        assert gc.collect() == 0
    finally:
        gc.enable()
