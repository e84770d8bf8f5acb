"""Texts from xgrammar's own test suite (minimized) on which grammarkit's verdict once differed.

Each case is a grammar and some inputs: xgrammar 0.2.8 either rejects the grammar, when it is
parsed or when its automata are built (then grammarkit must raise :class:`GrammarError` from
``from_ebnf``, and ``lint`` must report an error), or accepts it (then both engines must give
the same verdict on every input).
"""

from __future__ import annotations

import pytest
import xgrammar as xgr
from xgrammar.testing import _is_grammar_accept_string

from grammarkit import Grammar, GrammarError, lint

pytestmark = pytest.mark.xgrammar

CASES: list[tuple[str, list[str]]] = [
    # `\/` in a string literal
    ('root ::= "a\\/b"', ["a/b", "a\\/b"]),
    # Regex: inline `(?i)` at the start of the pattern, also with json_string and non-ASCII
    ('root ::= Regex("(?i)abc")', ["ABC", "abc", "aBc", "abd"]),
    ('root ::= Regex("(?i)σ")', ["Σ", "σ"]),
    ('root ::= Regex("(?i)[a-c]x", json_string=true)', ["Bx", "BX", '"x']),
    ('root ::= Regex("(?i)a.", flags="s")', ["A\n", "Ab"]),
    ('root ::= Regex("(?i)a.")', ["A\n", "Ab"]),
    ('root ::= Regex("(?i)a.", flags="u")', ["A\n", "Ab"]),
    ('root ::= Regex("a(?i)b")', ["ab"]),
    ('root ::= Regex("(?s)a")', ["a"]),
    # named groups
    ('root ::= Regex("(?P<n>ab)c")', ["abc", "c"]),
    ('root ::= Regex("(?<n>ab)c")', ["abc"]),
    ('root ::= Regex("(?<>ab)c")', ["abc"]),
    # lookahead is ignored, lookbehind refused
    ('root ::= Regex("a(?=b)b")', ["ab"]),
    ('root ::= Regex("a(?=b)")', ["a", "ab"]),
    ('root ::= Regex("a(?!b)c")', ["ac", "abc"]),
    ('root ::= Regex("(?<=a)b")', ["b"]),
    # flags
    ('root ::= Regex("abc", flags="u")', ["abc", "ABC"]),
    ('root ::= Regex("a.", flags="iu")', ["A\n", "Ab"]),
    ('root ::= Regex("a", flags="m")', ["a"]),
    # `flags=""` is not the same as no flags: `.` stops at a newline (xgrammar's own test)
    ('root ::= Regex("a.b", flags="")', ["acb", "a\nb"]),
    ('root ::= Regex("a.b")', ["acb", "a\nb"]),
    ('root ::= Regex("a[.]b\\\\.", flags="")', ["a.b.", "acb.", "a.bc"]),
    # malformed patterns xgrammar refuses
    ('root ::= Regex("[^]")', ["a"]),
    ('root ::= Regex("[]a]")', ["a"]),
    ('root ::= Regex("a]")', ["a]"]),
    ('root ::= Regex("+a")', ["a"]),
    ('root ::= Regex("(?#c)a")', ["a"]),
    # quantified quantifiers nest; `?` after one is lazy
    ('root ::= Regex("a+*")', ["", "aa"]),
    ('root ::= Regex("a{2}{3}")', ["aa", "aaaaaa"]),
    ('root ::= Regex("a+?")', ["", "aa"]),
    ('root ::= Regex("a}")', ["a}"]),
    # a large counted group, not unrolled
    ('root ::= Regex("(ab){2,50000}")', ["ab", "abab", "aba", "ab" * 50000, "ab" * 50001]),
    # rule attributes temperature and max_chars
    ('root ::= value\nvalue[temperature=0.7] ::= "a"', ["a", "b"]),
    ('root ::= v\nv[temperature=1.5e3] ::= "a"', ["a"]),
    ('root ::= v\nv[temperature=.5] ::= "a"', ["a"]),
    ('root ::= v\nv[temperature=-1] ::= "a"', ["a"]),
    ('root ::= v\nv[max_chars=-1] ::= "a"', ["a"]),
    ('root ::= v\nv[max_chars=2, max_chars=3] ::= "a"', ["a"]),
    ('root ::= any_text "."\nany_text[max_tokens=2, max_chars=4] ::= [^.]*',
     ["abcd.", "abcde.", "\u4f60\u4f60\u4f60\u4f60.", "."]),
    ('root ::= value\nvalue[temperature=0.7, max_chars=3] ::= [a-z]+', ["abc", "abcd"]),
]


def xgrammar_outcome(text: str, inputs: list[str]) -> list[bool] | None:
    try:
        grammar = xgr.Grammar.from_ebnf(text)
        return [_is_grammar_accept_string(grammar, s) for s in inputs]
    except RuntimeError:
        return None


def grammarkit_outcome(text: str, inputs: list[str]) -> list[bool] | None:
    try:
        grammar = Grammar.from_ebnf(text)
    except GrammarError:
        assert any(d.is_error for d in lint(text)), "lint must report what from_ebnf refuses"
        return None
    assert not any(d.is_error for d in lint(text))
    return [grammar.matches(s) for s in inputs]


@pytest.mark.parametrize(("text", "inputs"), CASES)
def test_same_verdict_as_xgrammar(text: str, inputs: list[str]) -> None:
    assert grammarkit_outcome(text, inputs) == xgrammar_outcome(text, inputs)


def test_empty_flags_survive_printing() -> None:
    printed = Grammar.from_ebnf('root ::= Regex("a.b", flags="")').to_ebnf()
    assert 'flags=""' in printed
    assert grammarkit_outcome(printed, ["acb", "a\nb"]) == xgrammar_outcome(printed, ["acb", "a\nb"])
    assert grammarkit_outcome(printed, ["a\nb"]) == [False]
