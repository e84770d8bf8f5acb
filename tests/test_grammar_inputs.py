"""What ``Grammar`` accepts as grammar text and as text to match."""

from __future__ import annotations

import pytest

from grammarkit import Grammar, GrammarError, lint


@pytest.mark.parametrize("text", [5, 3.0, None, ["a"], 0])
def test_matches_and_explain_refuse_what_is_not_text(text: object) -> None:
    grammar = Grammar.from_ebnf('root ::= "\\0"*')
    with pytest.raises(TypeError, match="expected str or bytes"):
        grammar.matches(text)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="expected str or bytes"):
        grammar.explain(text)  # type: ignore[arg-type]


def test_bytes_like_inputs_are_matched() -> None:
    grammar = Grammar.from_ebnf('root ::= "ab"')
    assert grammar.matches(bytearray(b"ab")) and grammar.matches(memoryview(b"ab"))


@pytest.mark.parametrize(
    "text", ['root ::= "a\ud800"', "root ::= [a\udfff]", 'root ::= "\udc80"', b'root ::= "\xff"']
)
def test_lone_surrogates_are_invalid_text_like_invalid_utf8(text: str | bytes) -> None:
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf(text)
    assert [d.code for d in info.value.diagnostics] == ["GK113"]
    assert [d.code for d in lint(text)] == ["GK113"]


def test_max_chars_is_parsed_printed_and_enforced_when_matching() -> None:
    grammar = Grammar.from_ebnf('root ::= v ">"\nv[max_chars=2] ::= [a-z]*')
    assert grammar.to_ebnf() == 'root ::= v ">"\nv[max_chars=2] ::= [a-z]*\n'
    assert grammar.matches("ab>") and not grammar.matches("abc>")
    recursive = Grammar.from_ebnf('root ::= v ">"\nv[max_chars=2] ::= "(" v ")" | [a-z]*')
    assert recursive.matches("(ab)>") and not recursive.matches("abc>")
    # inside a lazy rule the budget is dropped, as in xgrammar (tests/automata/test_max_chars.py)
    lazy = Grammar.from_ebnf('root ::= u\nu[lazy] ::= v ">"\nv[max_chars=2] ::= [a-z]*')
    assert lazy.matches("abc>")
