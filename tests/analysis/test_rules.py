"""Each lint rule: a grammar that triggers it (code, severity, line, column) and its fix."""

from __future__ import annotations

import pytest

from grammarkit.analysis.lint import lint
from grammarkit.analysis.rules import RULES
from grammarkit.diagnostics import Diagnostic, Severity

# (code, bad grammar, expected (line, column) of every diagnostic with that code, fixed grammar)
CASES = [
    ("GK201", 'root ::= "a"\nunused ::= "b"', [(2, 1)], 'root ::= "a" | used\nused ::= "b"'),
    ("GK201", 'root ::= "a"\nx[max_tokens=3] ::= y\ny ::= "b"', [(2, 1), (3, 1)],
     'root ::= "a" x\nx[max_tokens=3] ::= y\ny ::= "b"'),
    ("GK202", 'root ::= "a" | x\nx ::= "b" x', [(2, 11)],
     'root ::= "a" | x\nx ::= "b" x | "b"'),
    ("GK202", 'root ::= "<" x ">"\nx ::= x', [(1, 14), (2, 7)],
     'root ::= "<" x ">"\nx ::= x | "."'),
    ("GK202", 'root ::= "a" root', [(1, 14)], 'root ::= "a" root | "a"'),
    ("GK202", 'root ::= a\na ::= "(" b ")"\nb ::= "x" a', [(1, 10), (2, 11), (3, 11)],
     'root ::= a\na ::= "(" b ")"\nb ::= "x" a | "x"'),
    ("GK202", 'root ::= "a" x\nx ::= "b" []', [(1, 14)], 'root ::= "a" x\nx ::= "b" [^]'),
    ("GK203", 'root ::= "" | ()', [(1, 10)], 'root ::= "" | "a"'),
    ("GK203", 'root ::= x x\nx ::= "a"{0}', [(1, 10)], 'root ::= x x\nx ::= "a"{0,1}'),
    ("GK204", 'root ::= "a" | []', [(1, 16)], 'root ::= "a" | [^]'),
    ("GK204", 'root ::= "a" | [^\\x00-\\U0010FFFF]', [(1, 16)], 'root ::= "a" | [^\\x00]'),
    ("GK205", 'root ::= ("a"?)*', [(1, 11)], 'root ::= "a"*'),
    ("GK205", 'root ::= ("" | "a")+ "b"', [(1, 11)], 'root ::= "a"* "b"'),
    ("GK205", 'root ::= maybe{2,}\nmaybe ::= "x" | ""', [(1, 10)],
     'root ::= maybe{2,}\nmaybe ::= "x"'),
    ("GK206", 'root ::= ("x"? ws)* "."\nws ::= [ \\t]*', [(1, 16)],
     'root ::= ("x"? ws)* "."\nws ::= [ \\t]{0,4}'),
    ("GK206", 'root ::= "x" [ \\n]+', [(1, 14)], 'root ::= "x" [ \\n]+ "."'),
    ("GK206", 'root ::= body\nbody ::= "{" "}" sp\nsp ::= ws\nws ::= (" " | "\\n")*', [(2, 18)],
     'root ::= body\nbody ::= "{" sp "}"\nsp ::= ws\nws ::= (" " | "\\n")*'),
    ("GK206", 'root ::= " "*', [(1, 10)], 'root ::= " "* "."'),
    ("GK207", 'root ::= "a" | "b" | "a"', [(1, 22)], 'root ::= "a" | "b"'),
    ("GK207", 'root ::= [ab] x | ("y" | [ba] x)\nx ::= "x"', [(1, 26)],
     'root ::= [ab] x | ("y" | [ba])\nx ::= "x"'),
    ("GK208", 'root ::= [a-zA-Zm]', [(1, 10)], 'root ::= [a-zA-Z]'),
    ("GK208", 'root ::= [\\t\\t ]', [(1, 10)], 'root ::= [\\t ]'),
    ("GK209", 'root ::= root "a" | "b"', [(1, 10)], 'root ::= "b" "a"*'),
    ("GK209", 'root ::= a\na ::= b? "x" | "y"\nb ::= a "z"', [(2, 7)],
     'root ::= a\na ::= b? "x" | "y"\nb ::= "z" a'),
    ("GK210", 'root ::= "a"{0,20000}', [(1, 13)], 'root ::= "a"{0,10000}'),
    ("GK210", 'root ::= "a" {3000000000}', [(1, 14)], 'root ::= "a"{3000}'),
    ("GK211", 'root ::= word " "\nword ::= [a-z]+ (= ",")', [(2, 20)],
     'root ::= word " "\nword ::= [a-z]+ (= " ")'),
    ("GK211", 'root ::= "a" (= "b")', [(1, 17)], 'root ::= "a"'),
    ("GK212", 'root ::= "\\x41B"', [(1, 11)], 'root ::= "\\x41" "B"'),
    ("GK212", 'root ::= [\\x2Dab]', [(1, 11)], 'root ::= [\\u002Dab]'),
    # SchemaStore's pre-commit-config.json: a repository URL that is neither `meta` nor `local`
    ("GK215", 'root ::= Regex("^(?!(?:meta|local)$).*$")', [(1, 10)],
     'root ::= Regex("^.*$")'),
    ("GK215", 'root ::= "<" x ">"\nx ::= Regex("[a-z]+") | Regex("a(?=b)b")', [(2, 25)],
     'root ::= "<" x ">"\nx ::= Regex("[a-z]+") | Regex("(?:ab)")'),
    ("GK214", 'root ::= x "!"\nx[lazy] ::= "k" [0-9]{2,4}', [(2, 17)],
     'root ::= x "!"\nx[lazy] ::= "k" [0-9] [0-9]'),
    ("GK214", 'root ::= x\nx[lazy] ::= TagDispatch(("<a>", y))\ny ::= "y"', [(2, 13)],
     'root ::= x\nx ::= TagDispatch(("<a>", y))\ny ::= "y"'),
]


def _codes_at(diagnostics: list[Diagnostic], code: str) -> list[tuple[int, int]]:
    positions = []
    for d in diagnostics:
        if d.code == code:
            assert d.position is not None
            positions.append((d.position.line, d.position.column))
    return positions


@pytest.mark.parametrize(("code", "bad", "where", "fixed"), CASES)
def test_rule_fires_at_the_offending_element(code: str, bad: str, where: list[tuple[int, int]],
                                             fixed: str) -> None:
    found = lint(bad)
    assert not any(d.is_error for d in found), found
    assert _codes_at(found, code) == where
    fixed_found = lint(fixed)
    assert not any(d.is_error for d in fixed_found), fixed_found
    assert _codes_at(fixed_found, code) == []


def test_every_rule_has_a_case() -> None:
    assert {rule.code for rule in RULES} == {case[0] for case in CASES}


def test_codes_and_names_are_unique_and_ordered() -> None:
    codes = [rule.code for rule in RULES]
    assert codes == sorted(set(codes))
    assert len({rule.name for rule in RULES}) == len(RULES)


def test_every_warning_has_a_hint_and_a_span() -> None:
    for _, bad, _, _ in CASES:
        for d in lint(bad):
            assert d.hint and d.span is not None, d


def test_left_recursion_is_a_note_and_others_are_warnings() -> None:
    severities = {d.code: d.severity for _, bad, _, _ in CASES for d in lint(bad)}
    assert severities.pop("GK209") is Severity.NOTE
    assert set(severities.values()) == {Severity.WARNING}


def test_messages_name_what_is_wrong() -> None:
    def message(code: str, text: str) -> str:
        return "\n".join(d.message for d in lint(text) if d.code == code)

    assert "`unused`" in message("GK201", 'root ::= "a"\nunused ::= "b"')
    assert "itself" in message("GK202", 'root ::= "a" root')
    assert "`b`, which leads back to `a`" in message("GK202", 'root ::= a\na ::= "(" b\nb ::= a')
    assert "`x` can never complete" in message("GK202", 'root ::= "a" x\nx ::= "b" x')
    assert "empty character class (line 2, column 11)" in message(
        "GK202", 'root ::= "a" x\nx ::= "b" []')
    assert "(line 1, column 10)" in message("GK207", 'root ::= "a" | "b" | "a"')
    assert "`a-z` and `m`" in message("GK208", "root ::= [a-zm]")
    assert "`m` appears twice" in message("GK208", "root ::= [mm]")
    assert "root -> a -> root" in message("GK209", 'root ::= a "x" | "y"\na ::= root')
    assert "-1530494976" in message("GK210", 'root ::= "a"{0,1000000000000000}')
    assert "only the end of the input" in message("GK211", 'root ::= "a" (= "b")')
    assert "U+041B" in message("GK212", 'root ::= "\\x41B"')


@pytest.mark.parametrize("text", [
    'root ::= TagDispatch(("<tool>", call))\ncall ::= "x"',
    'root ::= TokenTagDispatch((7, call))\ncall ::= "x"',
    'root ::= "a" (= inner)\ninner ::= "b"',
])
def test_rules_used_only_by_macros_or_lookaheads_are_reachable(text: str) -> None:
    assert "GK201" not in {d.code for d in lint(text)}


@pytest.mark.parametrize("text", [
    'root ::= TagDispatch(("<a", r))\nr ::= "x" (= "<")',
    'root ::= Regex("[a-z]*") "x"',
    'root ::= Token(1, 2)* "x"',
    'root ::= w ExcludeToken(1)\nw ::= "a" (= "q")',
    'root ::= w "x"\nw ::= [a-z]+ (= Token(5))',
    'root ::= Substring("abc") "x"',
    'root ::= "a" | "b" | [^]',
    'root ::= [-a]',
])
def test_macros_are_treated_conservatively(text: str) -> None:
    found = lint(text)
    assert not any(d.is_error for d in found), found
    assert found == []


def test_nullable_regex_is_not_assumed() -> None:
    assert lint('root ::= (Regex("a*"))*') == []


def test_whitespace_inside_a_bounded_single_repeat_is_fine() -> None:
    text = 'root ::= ("x" ws)? "."\nws ::= [ \\t]*'
    assert "GK206" not in {d.code for d in lint(text)}


def test_whitespace_in_a_loop_that_needs_other_text_is_fine() -> None:
    text = 'root ::= "[" ("x" ws ("," ws "x")*)? "]"\nws ::= [ \\t]*'
    assert "GK206" not in {d.code for d in lint(text)}


def test_whitespace_rule_itself_is_not_reported_twice() -> None:
    text = 'root ::= "x" ws\nws ::= [ \\t]*'
    assert _codes_at(lint(text), "GK206") == [(1, 14)]


def test_huge_bound_reports_the_quantifier_only() -> None:
    (d,) = [d for d in lint('root ::= "ab"{0,20001}') if d.code == "GK210"]
    assert d.source is not None and d.span is not None
    assert d.source.text[d.span.start:d.span.end] == "{0,20001}"


def test_greedy_escape_span_covers_the_escape() -> None:
    (d,) = lint('root ::= "ok\\\\x41B \\x0041"')
    assert d.source is not None and d.span is not None
    assert d.source.text[d.span.start:d.span.end] == "\\x0041"


@pytest.mark.xgrammar
@pytest.mark.parametrize(("code", "bad", "where", "fixed"), CASES)
def test_xgrammar_accepts_what_only_lint_complains_about(
        code: str, bad: str, where: list[tuple[int, int]], fixed: str) -> None:
    import xgrammar

    xgrammar.Grammar.from_ebnf(bad)
    xgrammar.Grammar.from_ebnf(fixed)


@pytest.mark.xgrammar
def test_xgrammar_semantics_behind_the_warnings() -> None:
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string as accepts

    def grammar(text: str) -> xgrammar.Grammar:
        return xgrammar.Grammar.from_ebnf(text)

    nothing = grammar('root ::= "a" root')
    assert not any(accepts(nothing, s) for s in ["", "a", "aa", "aaa"])
    only_empty = grammar('root ::= x x\nx ::= "a"{0}')
    assert accepts(only_empty, "") and not accepts(only_empty, "a")
    empty_class = grammar('root ::= "a" | "b" []')
    assert accepts(empty_class, "a") and not accepts(empty_class, "b")
    any_char = grammar("root ::= [^]")
    assert accepts(any_char, "\n") and accepts(any_char, "é")
    assert "-1530494976" in str(grammar('root ::= "a"{0,1000000000000000}'))
    assert "{1, -1}" in str(grammar('root ::= "a"{4294967297,}'))
    greedy = grammar('root ::= "\\x41B"')
    assert accepts(greedy, "\u041b") and not accepts(greedy, "AB")


@pytest.mark.xgrammar
def test_gk215_lookahead_is_ignored_by_both_engines() -> None:
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string

    from grammarkit import Grammar

    text = 'root ::= Regex("^(?!(?:meta|local)$).*$")'
    texts = ["meta", "local", "x", "metax", ""]
    reference = xgr.Grammar.from_ebnf(text)
    assert [Grammar.from_ebnf(text).matches(t) for t in texts] == [
        _is_grammar_accept_string(reference, t) for t in texts] == [True] * 5
