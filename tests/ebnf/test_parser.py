"""The parser builds the right AST and locates every error with a code, a span and a hint."""

from __future__ import annotations

import pytest

from grammarkit import Grammar, GrammarError
from grammarkit.ebnf import ast


def rule_body(text: str, name: str = "root") -> ast.Expr:
    return Grammar.from_ebnf(text).ast.rule_map()[name].body


def errors(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf(text)
    result = []
    for d in info.value.diagnostics:
        position = d.position
        assert position is not None
        result.append((d.code, position.line, position.column))
    return result


def test_sequence_choice_and_precedence() -> None:
    body = rule_body('root ::= "a" "b" | "c"')
    assert body == ast.Choice(
        (ast.Sequence((ast.Literal("a"), ast.Literal("b"))), ast.Literal("c"))
    )


def test_quantifiers_become_repeats() -> None:
    body = rule_body('root ::= "a"? "b"* "c"+ "d"{2} "e"{2,} "f"{2,5} "g"{1,-1}')
    assert isinstance(body, ast.Sequence)
    bounds = [(r.min, r.max) for r in body.items if isinstance(r, ast.Repeat)]
    assert bounds == [(0, 1), (0, None), (1, None), (2, 2), (2, None), (2, 5), (1, None)]


def test_escapes_decode_to_code_points() -> None:
    assert rule_body('root ::= "\\x41B\\u00e9\\U0001F600\\e\\0"') == ast.Literal(
        "\u041b\u00e9\U0001f600\x1b\x00"
    )


def test_classes_pair_ranges_like_xgrammar() -> None:
    body = rule_body("root ::= [a-c-e\\-]")
    assert body == ast.CharClass(((97, 99), (45, 45), (101, 101), (45, 45)))
    assert rule_body("root ::= [^]") == ast.CharClass((), negated=True)


def test_macros_and_attributes() -> None:
    grammar = Grammar.from_ebnf(
        'root[max_tokens=5, lazy] ::= TagDispatch(("<a>", x), loop_after_dispatch=false, '
        'excludes=("q",)) | Token(3, 1, 3) | ExcludeToken(2) | Regex("[a-z]", json_string=true)'
        ' | Substring("ab")\nx ::= "x"'
    )
    root = grammar.ast.rules[0]
    assert [(a.key, a.value) for a in root.attributes] == [("max_tokens", 5), ("lazy", None)]
    assert isinstance(root.body, ast.Choice)
    tag, token, exclude, regex, substring = root.body.alternatives
    assert tag == ast.TagDispatch((("<a>", "x"),), False, ("q",))
    assert token == ast.TokenSet((1, 3))
    assert exclude == ast.TokenSet((2,), exclude=True)
    assert regex == ast.RegexMacro("[a-z]", json_string=True)
    assert substring == ast.Substring(("ab",))


def test_lookahead_is_kept_on_the_rule() -> None:
    rule = Grammar.from_ebnf('root ::= [a-z]+ (= "x")').ast.rules[0]
    assert rule.lookahead == ast.Literal("x")


def test_spans_point_into_the_source() -> None:
    text = 'root ::= "a" value\nvalue ::= [0-9]+'
    grammar = Grammar.from_ebnf(text)
    body = grammar.ast.rules[0].body
    assert isinstance(body, ast.Sequence)
    ref = body.items[1]
    assert ref.span is not None and text[ref.span.start : ref.span.end] == "value"


def test_all_errors_are_reported_not_only_the_first() -> None:
    found = errors('root ::= a b\nx ::= "a" |\ny ::= [z-a] "\\q"')
    codes = [code for code, *_ in found]
    assert codes == ["GK107", "GK103", "GK103", "GK101", "GK108"]


def test_undefined_rule_suggests_a_close_name() -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf('root ::= valu\nvalue ::= "v"')
    (d,) = info.value.diagnostics
    assert d.code == "GK103" and d.hint == "did you mean `value`?"


def test_rendering_has_location_snippet_caret_and_help() -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf('root ::= "[" valu "]"\nvalue ::= "v"', path="g.ebnf")
    assert info.value.render() == (
        "g.ebnf:1:14: GK103 rule `valu` is not defined\n"
        "  |\n"
        '1 | root ::= "[" valu "]"\n'
        "  |              ^^^^\n"
        "  = help: did you mean `value`?"
    )


def test_byte_column_differs_from_character_column_after_multibyte_text() -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf('root ::= "é€" x')
    position = info.value.diagnostics[0].position
    assert position is not None
    assert (position.column, position.byte_column) == (15, 18)


def test_json_form() -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf("root ::= x", path="g.ebnf")
    data = info.value.diagnostics[0].to_json()
    assert data["code"] == "GK103" and data["line"] == 1 and data["column"] == 10
    assert data["severity"] == "error" and data["path"] == "g.ebnf" and data["hint"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('root ::= "a" b ::= "b"', [("GK109", 1, 14)]),
        ('root ::= "a"++', [("GK101", 1, 14)]),
        ('root ::= "a"{3,1}', [("GK110", 1, 16)]),
        ("root ::= [a", [("GK108", 1, 12)]),
        ('root ::= "a" (= "b" | "c")', [("GK115", 1, 17)]),
        ("root ::= Token()", [("GK112", 1, 15)]),
    ],
)
def test_codes_and_positions(text: str, expected: list[tuple[str, int, int]]) -> None:
    assert errors(text)[: len(expected)] == expected


def test_bytes_input_and_invalid_utf8() -> None:
    assert Grammar.from_ebnf('root ::= "\xc3\xa9"'.encode("latin-1")).ast.rules[
        0
    ].body == ast.Literal("é")
    codes = [code for code, *_ in errors(b'root ::= "\xff"')]
    assert codes == ["GK113"]


def test_rendering_names_the_byte_column_where_it_differs() -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf('root ::= "é€" x')
    assert info.value.render().endswith("= note: byte column 18 (xgrammar counts bytes)")
