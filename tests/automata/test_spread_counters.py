"""Counted repetitions whose body has several lengths ("spread" counters), against xgrammar 0.2.8.

After *k* bytes of ``("a" | "aa"){m,n}`` any count from k/2 to k may have been made: positions
hold a loop's counts as intervals and drop dominated counts (:mod:`grammarkit.automata.lazy_dfa`).
Grammars are drawn from bodies of several lengths, nested loops and bounds near the input's
length; each is compiled with counters forced on every repetition (``UNROLL_LIMIT`` below zero,
so small bounds exercise the counters too) and as usual. Both must give xgrammar's verdict and
reject at the same byte (the longest prefix xgrammar accepts).
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.automata import construct
from grammarkit.automata.lazy_dfa import SubsetBuilder

pytestmark = pytest.mark.xgrammar
xgr = importlib.import_module("xgrammar")
testing = importlib.import_module("xgrammar.testing")

WORDS = ["a", "aa", "aaa", "ab", "b", "ba", "abb"]


@st.composite
def spread_cases(draw: st.DrawFn) -> tuple[str, str]:
    """A grammar with a counted loop over words of several lengths (maybe nested in another
    counted loop), and a text made of about as many words as its bounds allow, maybe broken."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=2, max_size=3, unique=True))
    low = draw(st.integers(0, 40))
    high = draw(st.one_of(st.none(), st.integers(max(low, 1), 60), st.just(100_000)))
    inner = "(" + " | ".join(f'"{w}"' for w in words) + ")"
    bounds = f"{{{low},{'' if high is None else high}}}"
    nested = draw(st.booleans())
    if nested:
        outer_low = draw(st.integers(0, 4))
        outer_high = draw(st.integers(max(outer_low, 1), 6))
        separator = draw(st.sampled_from(['"c"', '"c"?', '""']))
        body = f"({inner}{bounds} {separator}){{{outer_low},{outer_high}}}"
    else:
        body = f"{inner}{bounds}"
    ebnf = f'root ::= {body} "."'
    repeats = draw(st.integers(0, 1 if nested else 0))
    count = draw(st.integers(max(low - 2, 0), low + 3 if high is None else min(high, 60) + 2))
    chunks = []
    for _ in range(repeats + 1):
        chunks.append("".join(draw(st.sampled_from(words)) for _ in range(count)))
    text = ("c" if nested else "").join(chunks) + "."
    edit = draw(st.sampled_from(["none", "drop-last", "insert", "truncate"]))
    if edit == "drop-last":
        text = text[:-1]
    elif edit == "insert" and text:
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.sampled_from(WORDS)) + text[at:]
    elif edit == "truncate":
        text = text[:draw(st.integers(0, len(text)))]
    return ebnf, text


def _reference(ebnf: str, text: str) -> tuple[bool, int]:
    """xgrammar's verdict on ``text``, and how many bytes of it it accepts."""
    matcher = testing._get_matcher_from_grammar(xgr.Grammar.from_ebnf(ebnf))
    if matcher.accept_string(text):
        return bool(matcher.is_terminated()), len(text)
    for i, char in enumerate(text):  # the whole text was refused, the matcher is unchanged
        if not matcher.accept_string(char):
            return False, i
    return bool(matcher.is_terminated()), len(text)


def _ours(ebnf: str, text: str) -> tuple[bool, int]:
    grammar = Grammar.from_ebnf(ebnf)
    explanation = grammar.explain(text)
    return explanation is None, len(text) if explanation is None else explanation.offset


@settings(max_examples=60)
@given(case=spread_cases())
def test_spread_counters_match_like_xgrammar(case: tuple[str, str]) -> None:
    ebnf, text = case
    expected = _reference(ebnf, text)
    assert _ours(ebnf, text) == expected
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(construct, "UNROLL_LIMIT", -1)  # every repetition a counter
        assert _ours(ebnf, text) == expected


@pytest.mark.parametrize(("ebnf", "text"), [
    ('root ::= ("a" | "aa"){1000,100000} "b"', "a" * 2000 + "b"),
    ('root ::= ("a" | "aa"){1000,100000} "b"', "a" * 999 + "b"),
    ('root ::= ("a" | "aa"){1000,100000} "b"', "a" * 999 + "ab"),
    ('root ::= ("a" | "bb" | "ccc"){10,500} "."', "abbccc" * 80 + "cc."),
    ('root ::= ("a" | "bb" | "ccc"){10,500} "."', "abbccc" * 83 + "a."),
    ('root ::= ("a" | "bb" | "ccc"){10,500} "."', "abbccc" * 83 + "."),
    # nested spread: xgrammar takes over a minute on 900 bytes of {2,300}
    ('root ::= (("a" | "aa"){2,50} "c"?){1,3} "."', "a" * 150 + "."),
    ('root ::= (("a" | "aa"){2,50} "c"?){1,3} "."', "a" * 201 + "c" + "."),
    ('root ::= (("a" | "aa"){2,50} "c"?){1,3} "."', "a" * 100 + "c" + "a" * 99 + "."),
])
def test_long_spread_inputs_match_like_xgrammar(ebnf: str, text: str) -> None:
    assert _ours(ebnf, text) == _reference(ebnf, text)


def test_spread_states_stay_small() -> None:
    """After k bytes every count from k/2 to k is one interval, then one count (the others
    are dominated once the minimum is reached): a handful of positions at every byte."""
    grammar = Grammar.from_ebnf('root ::= ("a" | "aa"){1000,100000} "b"')
    rule = grammar.compiled._rules[0]
    builder = SubsetBuilder.for_nfa(rule)
    positions = builder.start()
    sizes = []
    for _ in range(3000):
        ((_, _, positions),) = [move for move in builder.byte_moves(positions)
                                if move[0] <= ord("a") <= move[1]]
        sizes.append(len(positions))
    assert max(sizes) <= 3
    counts = {(low, high) for _, counters in positions for _, low, high, _ in counters}
    assert counts == {(1500, 1500)}
