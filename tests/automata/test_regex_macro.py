"""The ``Regex(...)`` macro: patterns, flags, ``json_string`` and xgrammar's byte-level quirks.

The verdicts are xgrammar 0.2.8's (the ``regex`` and ``regex_quirks`` grammars of the
differential test check them at random; these pin the individual rules).
"""

from __future__ import annotations

import pytest

from grammarkit.automata.regex_macro import regex_class_sequences
from grammarkit.diagnostics import GrammarError
from grammarkit.grammar import Grammar

REGEX_CASES: list[tuple[str, list[str | bytes], list[str | bytes]]] = [
    ('Regex("[a-c]+x")', ["abx", "cx"], ["x", "ab", ""]),
    ('Regex("(ab|c)*d?")', ["", "abcd", "cab"], ["a", "dd"]),
    ('Regex("\\\\d{2}")', ["12"], ["1", "123"]),
    ('"x" Regex("[0-9]+") "y"', ["x1y", "x42y"], ["xy"]),
    ('Regex("a|")', ["a", ""], ["aa"]),
    ('Regex("")', [""], ["a"]),
    # flags: i folds ASCII case only; s changes nothing; with flags but no s, . skips \n
    ('Regex("[a-c]+", flags="i")', ["ABC", "abC"], ["d"]),
    ('Regex("é", flags="i")', ["é"], ["É"]),
    ('Regex("[^a]b", flags="i")', ["xB", "cb"], ["ab", "Ab", "aB"]),
    ('Regex("a.b")', ["a\nb", "axb"], []),
    ('Regex("a.b", flags="s")', ["a\nb"], []),
    ('Regex("a.b", flags="i")', ["A\rB", "a.b"], ["a\nb"]),
    ('Regex("a.b", flags="is")', ["A\nB"], []),
    ('Regex("a[.]b", flags="i")', ["a.b"], ["axb"]),
    # json_string: no quote, backslash or control character can be matched
    ('Regex(".*", json_string=true)', ["abc", "\x7f", "é"], ['"', "\\", "\n", "\x01", '\\"']),
    ('Regex("[^a]*", json_string=true)', ["bc", " "], ['"', "\x1f"]),
    ('Regex("\\"", json_string=true)', [], ['"']),
    # classes crossing into 3- and 4-byte UTF-8 also accept the overlong sequences there
    ('Regex(".")', [b"\xe0\x80\x80", b"\xf0\x80\x80\x80", "\U0010ffff", "a"],
     [b"\xc0\x80", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80"]),
    ('Regex("[\\\\u0700-\\\\u0900]")', [b"\xe0\x9f\xbf", "\u0800"], [b"\xe0\xa4\x81"]),
    ('Regex("[\\\\u0800-\\\\uffff]")', ["\u0800"], [b"\xe0\x80\x80"]),
    ("[^a]", [], [b"\xe0\x80\x80"]),  # the same class in EBNF stays strict
]


@pytest.mark.parametrize(("body", "accepted", "rejected"), REGEX_CASES,
                         ids=[c[0] for c in REGEX_CASES])
def test_regex_macro(body: str, accepted: list[str | bytes], rejected: list[str | bytes]) -> None:
    grammar = Grammar.from_ebnf(f"root ::= {body}")
    assert [s for s in accepted if not grammar.matches(s)] == []
    assert [s for s in rejected if grammar.matches(s)] == []


def test_overlong_blocks_only_for_crossing_ranges() -> None:
    assert ((0xE0, 0xE0), (0x80, 0x9F), (0x80, 0xBF)) in regex_class_sequences(((0x7FF, 0x800),))
    assert ((0xE0, 0xE0), (0x80, 0x9F), (0x80, 0xBF)) not in regex_class_sequences(
        ((0x800, 0xFFFF),))
    assert ((0xF0, 0xF0), (0x80, 0x8F), (0x80, 0xBF), (0x80, 0xBF)) in regex_class_sequences(
        ((0xFFFF, 0x10000),))


def test_invalid_pattern_is_reported_at_the_macro() -> None:
    source = 'root ::= "a" Regex("(ab")'
    with pytest.raises(GrammarError) as caught:
        Grammar.from_ebnf(source).matches("a")
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code.startswith("GK13")
    assert diagnostic.message.startswith("invalid Regex pattern: ")
    assert diagnostic.span is not None
    assert source[diagnostic.span.start:diagnostic.span.end] == 'Regex("(ab")'


def test_unsupported_flag() -> None:
    with pytest.raises(GrammarError) as caught:
        Grammar.from_ebnf('root ::= Regex("a", flags="x")').matches("a")
    assert caught.value.diagnostics[0].code == "GK112"
