"""Highly ambiguous grammars: the bitset scan (``_WideScan``) beside xgrammar and the main engine.

Whole-input scans switch to the bitset representation once more than ``_WIDE_GROUPS`` origins
are live; here its verdicts are checked against xgrammar 0.2.8 on the ambiguous grammars of
issue 8 and on every grammar of :mod:`tests.automata.grammars` with the switch forced at the
first position, and its explanations against the main engine's.
"""

from __future__ import annotations

import tracemalloc

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st
from xgrammar.testing import _get_matcher_from_grammar

from grammarkit.automata import earley
from grammarkit.grammar import Grammar
from grammarkit.strategies import from_grammar
from tests.automata.grammars import CASES, Case
from tests.automata.test_differential import grammar, mutations, reference

pytestmark = pytest.mark.xgrammar

AMBIGUOUS = [
    ('root ::= x\nx ::= x x | "a" | ""', (b"a", b"b")),
    ('root ::= root root | "a"', (b"a", b"b")),
    ('root ::= e\ne ::= e "+" e | e e | "(" e ")" | [0-9]', (b"1", b"+", b"(", b")", b"2")),
    ('root ::= (a | b)* "."\na ::= "x" | a a | ""\nb ::= "x" "y"? | b b', (b"x", b"y", b".")),
    ('root ::= x\nx ::= x x | "a" | "b" x "c" | y\ny ::= "" | y "a"', (b"a", b"b", b"c")),
]


def _verdict(ebnf: str) -> xgr.GrammarMatcher:
    return _get_matcher_from_grammar(xgr.Grammar.from_ebnf(ebnf))


def _xgrammar_accepts(matcher: xgr.GrammarMatcher, data: bytes) -> bool:
    matcher.reset()
    return bool(matcher.accept_string(data) and matcher.is_terminated())


@pytest.fixture
def wide_scans(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the scans that switched to the bitset representation."""
    started: list[int] = []
    run = earley._WideScan.run

    def counted(self: earley._WideScan, data: bytes, start: int, *rest: object) -> object:
        started.append(start)
        return run(self, data, start, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(earley._WideScan, "run", counted)
    return started


@pytest.mark.parametrize("source", [source for source, _ in AMBIGUOUS[:2]])
@pytest.mark.parametrize("length", [0, 1, 2, 3, 40, 150])
def test_issue_inputs_equal_xgrammar(source: str, length: int, wide_scans: list[int]) -> None:
    g, matcher = Grammar.from_ebnf(source), _verdict(source)
    for text in (b"a" * length, b"a" * length + b"b", b"b" + b"a" * length,
                 b"a" * (length // 2) + b"b" + b"a" * (length // 2)):
        assert g.matches(text) == _xgrammar_accepts(matcher, text), text
    assert bool(wide_scans) == (length > 32)


@pytest.mark.parametrize(("source", "atoms"), AMBIGUOUS, ids=range(len(AMBIGUOUS)))
@settings(max_examples=15)
@given(data=st.data())
def test_ambiguous_verdicts_equal_xgrammar(source: str, atoms: tuple[bytes, ...],
                                           data: st.DataObject) -> None:
    g, matcher = Grammar.from_ebnf(source), _verdict(source)
    sentence = data.draw(from_grammar(g, max_length=80)).encode()
    texts = [sentence, *mutations(data, sentence, atoms),
             data.draw(st.lists(st.sampled_from(atoms), max_size=60).map(b"".join))]
    for text in texts:
        assert g.matches(text) == _xgrammar_accepts(matcher, text), text
    with pytest.MonkeyPatch.context() as patch:  # renumber the live origins at every step
        patch.setattr(earley, "_COMPACT_AT", 1)
        for text in texts:
            assert g.matches(text) == _xgrammar_accepts(matcher, text), text


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=4)
@given(data=st.data())
def test_forced_wide_scan_equals_xgrammar(case: Case, data: st.DataObject) -> None:
    g = grammar(case)
    sentences = data.draw(st.lists(from_grammar(g, max_length=40), min_size=3, max_size=3))
    texts: list[bytes] = []
    for sentence in sentences:
        encoded = sentence.encode("utf-8", "surrogatepass")
        texts += [encoded, *mutations(data, encoded, case.atoms)]
    texts += data.draw(st.lists(st.lists(st.sampled_from(case.atoms), max_size=12)
                                .map(b"".join), min_size=4, max_size=4))
    expected = reference(case)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(earley, "_WIDE_GROUPS", 0)
        patch.setattr(earley, "_COMPACT_AT", 2)
        disagreements = [t for t in texts if g.matches(t) != expected(t)]
    assert not disagreements, f"the wide scan differs from xgrammar on {disagreements[:5]}"


@pytest.mark.parametrize(("source", "text"), [
    (AMBIGUOUS[0][0], "a" * 100 + "b"),
    (AMBIGUOUS[2][0], "1+2" * 40 + "+"),
    (AMBIGUOUS[2][0], "12" * 40 + ")"),
    (AMBIGUOUS[2][0], "(1+2)" * 40 + "+)"),
    (AMBIGUOUS[3][0], "xy" * 40 + "yy"),
])
def test_explanations_equal_the_main_engines(source: str, text: str,
                                             wide_scans: list[int]) -> None:
    g = Grammar.from_ebnf(source)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(earley, "_WIDE_GROUPS", 10**9)
        expected = g.explain(text)
    assert not wide_scans
    assert expected is not None and g.explain(text) == expected
    assert wide_scans


def test_a_long_input_after_an_ambiguous_stretch_keeps_memory_small() -> None:
    """Origins no item can reach are dropped and the rest renumbered (else the bitsets and
    per-position items would grow with the square of the input)."""
    g = Grammar.from_ebnf('root ::= x " " t\nx ::= x x | "a"\nt ::= ("(" t ")" | [a-z])*')
    text = "a" * 100 + " " + "(ab)" * 5000
    g.matches(text)
    tracemalloc.start()
    try:
        assert g.matches(text) and not g.matches(text + ")")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * len(text)  # ~80; ~900 without renumbering, growing with the length
