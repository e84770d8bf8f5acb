"""The lint entry points: parse errors, select/ignore, suppression comments, hostile input."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.analysis.lint import lint, lint_grammar_ast
from grammarkit.analysis.selection import enabled_codes
from grammarkit.automata.regex_macro import check_regex_macros
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import parse

NOISY = (
    'root ::= ("a"?)* x\n'    # GK205 at 1:11
    'x ::= "b" | "b"\n'       # GK207 at 2:13
    'unused ::= [a-zm]'       # GK201 at 3:1, GK208 at 3:12
)


def codes(text: str | bytes, **options: object) -> list[str]:
    return [d.code for d in lint(text, **options)]  # type: ignore[arg-type]


def test_lint_reports_every_warning_in_source_order() -> None:
    found = lint(NOISY, "g.ebnf")
    assert [(d.code, d.position.line, d.position.column) for d in found if d.position] == [
        ("GK205", 1, 11), ("GK207", 2, 13), ("GK201", 3, 1), ("GK208", 3, 12)]
    assert all(d.source is not None and d.source.path == "g.ebnf" for d in found)
    assert found[0].render().startswith("g.ebnf:1:11: GK205 ")


def test_default_path_and_bytes_input() -> None:
    (d,) = lint(b'root ::= "a" | "a"')
    assert d.headline().startswith("<string>:1:16: GK207")


def test_parse_errors_are_returned_and_suppress_lint() -> None:
    found = lint('root ::= "a" | "a" | valu\nvalue ::= []')
    assert [d.code for d in found] == ["GK103"]
    assert found[0].is_error and found[0].source is not None


def test_invalid_utf8_is_a_diagnostic() -> None:
    assert codes(b'root ::= "\xff"') == ["GK113"]


@pytest.mark.parametrize(("select", "ignore", "expected"), [
    (None, None, ["GK205", "GK207", "GK201", "GK208"]),
    (["ALL"], None, ["GK205", "GK207", "GK201", "GK208"]),
    (["GK2"], ["GK20"], []),
    (["GK207"], None, ["GK207"]),
    (["gk207", " GK201 "], None, ["GK207", "GK201"]),
    (None, ["GK205", "GK208"], ["GK207", "GK201"]),
    (["GK2"], ["GK207"], ["GK205", "GK201", "GK208"]),
    (["GK207"], ["GK2"], ["GK207"]),
    (["GK207"], ["GK207"], []),
    (["ALL"], ["ALL"], []),
    (["GK1"], None, []),
])
def test_select_and_ignore(select: list[str] | None, ignore: list[str] | None,
                           expected: list[str]) -> None:
    assert codes(NOISY, select=select, ignore=ignore) == expected


def test_errors_ignore_selection() -> None:
    assert codes('root ::= "a" | valu', select=["GK201"], ignore=["GK1", "ALL"]) == ["GK103"]


@pytest.mark.parametrize("selector", ["E501", "GK", "GK2000", "", "GK-1", "GK299", "GK3"])
def test_bad_selectors_raise(selector: str) -> None:
    if selector in ("GK",):
        assert codes(NOISY, select=[selector])  # a valid prefix of every code
        return
    with pytest.raises(ValueError, match="selector"):
        lint(NOISY, select=[selector])
    with pytest.raises(ValueError, match="selector"):
        enabled_codes(["GK201"], ignore=[selector])


@pytest.mark.parametrize(("comment_line", "text", "expected"), [
    ("same line, listed code", 'root ::= "a" | "a"  # grammarkit: ignore[GK207]', []),
    ("same line, prefix", 'root ::= "a" | "a"  # grammarkit: ignore[GK2]', []),
    ("same line, bare", 'root ::= "a" | "a"  # grammarkit: ignore', []),
    ("same line, other code", 'root ::= "a" | "a"  # grammarkit: ignore[GK201]', ["GK207"]),
    ("several codes", 'root ::= ("a"?)* | ("a"?)*  # grammarkit: ignore[GK205, GK207]', []),
    ("some of several", 'root ::= ("a"?)* | ("a"?)*  # grammarkit: ignore[GK207]',
     ["GK205", "GK205"]),
    ("text around it", 'root ::= "a" | "a"  # ok: grammarkit: ignore[GK207] (on purpose)', []),
    ("rule name line covers the body",
     'root ::= "x"  # grammarkit: ignore[GK207]\n  | "y"\n  | "x"', []),
    ("body line covers only itself", 'root ::= "x"\n  | "y" # grammarkit: ignore\n  | "x"',
     ["GK207"]),
    ("rule name line does not cover the next rule",
     'root ::= "a" b # grammarkit: ignore\nb ::= "x" | "x"', ["GK207"]),
    ("line above does not count", '# grammarkit: ignore\nroot ::= "a" | "a"', ["GK207"]),
    ("rule-wide for GK201", 'root ::= "a"\nold ::= "b" # grammarkit: ignore[GK201]', []),
    ("CRLF lines", 'root ::= "a"\r\nold ::= "b" | "b" # grammarkit: ignore[GK201]\r\n', ["GK207"]),
    ("lone CR lines", 'root ::= "a" | "a"\rold ::= "b" # grammarkit: ignore\r', ["GK207"]),
])
def test_suppression_comments(comment_line: str, text: str, expected: list[str]) -> None:
    assert codes(text) == expected, comment_line


def test_errors_cannot_be_suppressed() -> None:
    assert codes('root ::= "a" | valu  # grammarkit: ignore') == ["GK103"]
    assert codes('root ::= "a" | valu  # grammarkit: ignore[GK103]') == ["GK103"]


def test_lint_grammar_ast_without_spans() -> None:
    a, b = ast.Literal("a"), ast.Literal("b")
    grammar = ast.GrammarAST((
        ast.Rule("root", ast.Choice((a, b, ast.Literal("a")))),
        ast.Rule("spare", ast.Repeat(ast.Sequence(()), 0, None, "*")),
    ))
    found = lint_grammar_ast(grammar, "root")
    assert sorted(d.code for d in found) == ["GK201", "GK205", "GK207"]
    assert all(d.span is None and d.source is None for d in found)
    assert [d.code for d in lint_grammar_ast(grammar, "root", select=["GK207"])] == ["GK207"]


def test_lint_grammar_ast_tolerates_missing_root_and_undefined_rules() -> None:
    grammar = ast.GrammarAST((ast.Rule("start", ast.RuleRef("nowhere")),))
    assert lint_grammar_ast(grammar, "root") == []
    assert lint_grammar_ast(grammar, "start") == []


def test_shared_subtrees_are_analysed_once() -> None:
    node: ast.Expr = ast.Literal("a")
    for _ in range(200):  # 2**200 paths if the DAG were expanded into a tree
        node = ast.Sequence((node, node))
    grammar = ast.GrammarAST((ast.Rule("root", ast.Choice((node, node))),))
    assert [d.code for d in lint_grammar_ast(grammar, "root")] == ["GK207"]


def _timed(text: str) -> tuple[list[str], float]:
    start = time.perf_counter()
    found = codes(text)
    return found, time.perf_counter() - start


def test_deep_nesting_is_iterative() -> None:
    found, seconds = _timed("root ::= " + "(" * 1000 + '"a"?' + ")*" * 1000)
    assert found == ["GK205"] * 1000
    assert seconds < 10


def test_very_deep_rule_chains_are_iterative() -> None:
    n = 3000
    text = "root ::= r0\n" + "".join(f'r{i} ::= r{i + 1} "a" | "b"\n' for i in range(n))
    text += f"r{n} ::= root\n"
    found, seconds = _timed(text)
    assert found == ["GK209"]
    assert seconds < 20


def test_many_unproductive_rules() -> None:
    n = 2000
    text = "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(n))
    text += f"r{n} ::= r0\n"
    found, seconds = _timed(text)
    assert found == ["GK202"] * (n + 2)
    assert seconds < 20


def test_huge_alternation_and_classes() -> None:
    alternatives = " | ".join(f'"{i}"' for i in range(5000))
    classes = "".join(f"c{i} ::= [" + "".join(chr(0x4E00 + 3 * j + i) for j in range(40)) + "]\n"
                      for i in range(3))
    text = f"root ::= ({alternatives}) c0 c1 c2\n" + classes
    found, seconds = _timed(text)
    assert found == []
    assert seconds < 20


def test_a_loop_over_a_very_long_sequence_lints_in_linear_time() -> None:
    # GK206 once compared every item of a sequence with every other: quadratic.
    items = " ".join(f'"w{i}"?' for i in range(20_000))
    start = time.process_time()
    found = lint(f'root ::= ({items} [ ]*)* "end"\n')
    assert [d.code for d in found] == ["GK205", "GK206"]
    assert time.process_time() - start < 20


def test_many_left_recursive_rules_lint_in_linear_time() -> None:
    # GK209 once searched the whole rule list for every cycle: quadratic in the rule count.
    count = 20_000
    rules = "\n".join(f'r{i} ::= r{i} "a" | "b" r{i + 1}' for i in range(count))
    text = f'root ::= r0\n{rules}\nr{count} ::= "z"\n'
    start = time.process_time()
    found = lint(text)
    assert len(found) == count and {d.code for d in found} == {"GK209"}
    assert time.process_time() - start < 20


def _regex_errors_as_checked_one_by_one(text: str) -> None:
    """lint's errors for ``text`` are those of checking every Regex call on its own."""
    expected = check_regex_macros(parse(text).regex_macros)
    found = [d for d in lint(text) if d.is_error]
    assert [(d.code, d.message, d.span, d.hint) for d in found] == [
        (d.code, d.message, d.span, d.hint) for d in expected]


def test_a_repeated_regex_call_is_checked_once_and_reported_at_every_call() -> None:
    text = ('root ::= a b c d e\na ::= Regex("+x")\nb ::= Regex("[a-z]+")\nc ::= Regex("+x")\n'
            'd ::= Regex("+x", flags="q")\ne ::= Regex("[a-z]+") Regex("+x", json_string=true)\n')
    _regex_errors_as_checked_one_by_one(text)
    found = [d for d in lint(text) if d.is_error]
    assert [text[d.span.start:d.span.end].split("(")[0] for d in found] == ["Regex"] * 4
    assert len({d.span for d in found}) == 4


_PATTERNS = ["[a-z]+", "+x", "a{2,1}", "(ab", "a|b", ".", "(?i)ab", "x*", "[z-a]", "a{3}"]
_CALL_OPTIONS = ["", ', flags="i"', ', flags="q"', ', flags=""', ", json_string=true"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PATTERNS), st.sampled_from(_CALL_OPTIONS)),
                min_size=1, max_size=12))
def test_regex_calls_checked_once_each_equal_every_call_checked(
        calls: list[tuple[str, str]]) -> None:
    rules = [f'r{k} ::= "a" Regex("{pattern}"{options})' for k, (pattern, options)
             in enumerate(calls)]
    text = "root ::= " + " ".join(f"r{k}" for k in range(len(calls))) + "\n" + "\n".join(rules)
    _regex_errors_as_checked_one_by_one(text)
