"""``Grammar.explain``: where a non-matching input fails and what was expected there."""

from __future__ import annotations

import pytest

from grammarkit.grammar import Grammar
from tests.automata.grammars import JSON

LIST = 'root ::= [0-9]+ ("," [0-9]+)*'


@pytest.fixture(scope="module")
def json_grammar() -> Grammar:
    return Grammar.from_ebnf(JSON)


def test_matching_input_has_no_explanation(json_grammar: Grammar) -> None:
    assert json_grammar.explain('{"a": [1, 2.5e3, "x"]}') is None


def described(expected: tuple[str, ...]) -> set[str]:
    """The probe characters an explanation's expected items (dialect syntax) stand for."""
    items = [e for e in expected if e != "end of input"]
    grammar = Grammar.from_ebnf("root ::= " + " | ".join(items)) if items else None
    return {c for c in PROBES if grammar is not None and grammar.matches(c)} | (
        {"end of input"} if "end of input" in expected else set())


PROBES = [chr(c) for c in range(128)] + ["é", "€", "😀"]
WHITESPACE = set(" \t\n\r")


@pytest.mark.parametrize(("text", "offset", "line", "column", "expected", "found"), [
    ('{"a": 1, "b": [1, 2}', 19, 1, 20, WHITESPACE | set(",.0123456789Ee]"), '"}"'),
    ('{"a" 1}', 5, 1, 6, WHITESPACE | {":"}, '"1"'),
    ('{"a": tru}', 9, 1, 10, {"e"}, '"}"'),
    ("[1, 2]x", 6, 1, 7, {"end of input"}, '"x"'),
    ("", 0, 1, 1, {"[", "{"}, "end of input"),
    ('{"a":\n  [1,\n   2,]}', 17, 3, 6, WHITESPACE | set('"-0123456789[{tfn'), '"]"'),
    ('["\\x"]', 3, 1, 4, set('"\\/bfnrtu'), '"x"'),
])
def test_json_failures(json_grammar: Grammar, text: str, offset: int, line: int, column: int,
                       expected: set[str], found: str) -> None:
    explanation = json_grammar.explain(text)
    assert explanation is not None
    assert (explanation.offset, explanation.line, explanation.column) == (offset, line, column)
    assert described(explanation.expected) == expected
    assert explanation.found == found


def test_few_characters_are_listed_one_by_one(json_grammar: Grammar) -> None:
    explanation = json_grammar.explain('{"a" 1}')
    assert explanation is not None
    assert explanation.expected == ('"\\t"', '"\\n"', '"\\r"', '" "', '":"')


def test_message_format() -> None:
    grammar = Grammar.from_ebnf('root ::= "{" "\\"a\\"" ("," | "}")')
    explanation = grammar.explain('{"a"x')
    assert str(explanation) == 'expected one of "," "}" at 1:5, found "x"'
    single = Grammar.from_ebnf(LIST).explain("12,")
    assert str(single) == "expected [0-9] at 1:4, found end of input"


def test_end_of_input_is_listed_where_the_input_could_stop() -> None:
    explanation = Grammar.from_ebnf(LIST).explain("12a")
    assert explanation is not None
    assert explanation.expected == ('","', "[0-9]", "end of input")


def test_columns_count_characters_and_offsets_bytes() -> None:
    explanation = Grammar.from_ebnf('root ::= "é€" "x"').explain("é€y")
    assert explanation is not None
    assert (explanation.offset, explanation.column) == (5, 3)


def test_negated_and_wide_classes() -> None:
    negated = Grammar.from_ebnf("root ::= [^a-z]").explain("a")
    anything = Grammar.from_ebnf("root ::= [^]").explain("")
    assert negated is not None and negated.expected == ("[^a-z]",)
    assert anything is not None and anything.expected == ("any character",)


def test_empty_language() -> None:
    explanation = Grammar.from_ebnf("root ::= []").explain("a")
    assert explanation is not None and explanation.expected == ()
    assert str(explanation) == 'nothing can follow at 1:1, found "a"'


def test_malformed_utf8_is_reported_at_the_character_start(json_grammar: Grammar) -> None:
    for data in (b'["\xe6\x97"]', b'["\xe6\x97'):
        explanation = json_grammar.explain(data)
        assert explanation is not None
        assert explanation.offset == 2
        assert explanation.found == "invalid UTF-8 0xE6 0x97"
        assert described(explanation.expected) == {c for c in PROBES if c >= " "}
    stray = json_grammar.explain(b'["\xff"]')
    assert stray is not None and (stray.offset, stray.found) == (2, "invalid UTF-8 0xFF")


def test_failure_inside_a_skipped_run(json_grammar: Grammar) -> None:
    """Long string bodies are scanned in one step; positions inside them are still exact."""
    text = '["' + "a" * 500 + '\x01"]'
    explanation = json_grammar.explain(text)
    assert explanation is not None and explanation.offset == 502


def test_tag_dispatch_failure() -> None:
    grammar = Grammar.from_ebnf('root ::= TagDispatch(("<a>", y))\ny ::= "1"')
    explanation = grammar.explain("free <a>2")
    assert explanation is not None
    assert (explanation.offset, explanation.expected) == (8, ('"1"',))
