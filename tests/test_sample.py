"""Random sentences (``grammarkit.sample``) and the hypothesis strategy ``from_grammar``."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.grammar import Grammar
from grammarkit.sample import Coverage, Deriver, sample, samples, why_no_samples
from grammarkit.strategies import from_grammar
from tests.analysis import random_grammars
from tests.automata.grammars import CASES, JSON, Case
from tests.conftest import GRAMMARS

ARITHMETIC = Grammar.from_ebnf(next(c for c in CASES if c.name == "arithmetic").ebnf)
JSON_GRAMMAR = Grammar.from_ebnf(JSON)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_samples_match_their_grammar(case: Case) -> None:
    grammar = Grammar.from_ebnf(case.ebnf)
    sentences = sample(grammar, n=8, seed=3)
    assert len(sentences) == 8
    assert all(grammar.matches(s) for s in sentences)


def test_deterministic_per_seed_and_varied() -> None:
    assert sample(ARITHMETIC, n=10, seed=7) == sample(ARITHMETIC, n=10, seed=7)
    assert sample(ARITHMETIC, n=10, seed=7) != sample(ARITHMETIC, n=10, seed=8)
    assert len(set(sample(ARITHMETIC, n=20, seed=1))) > 10


@pytest.mark.parametrize("max_length", [5, 40, 200])
def test_length_stays_near_the_bound(max_length: int) -> None:
    sentences = sample(JSON_GRAMMAR, n=20, seed=0, max_length=max_length)
    assert len(sentences) == 20
    assert max(map(len, sentences)) <= 2 * max_length + 20


@pytest.mark.parametrize("source", [
    'root ::= x\nx ::= x x | "" | "a" x',  # nullable, ambiguous, explosive
    'root ::= "(" root ")" | root root | "x"',
    'root ::= "a" b\nb ::= b "b" | "c" | "d" b "e"',
    'root ::= [a-z]{1000} | "short"',
])
def test_terminates_quickly_on_explosive_grammars(source: str) -> None:
    started = time.perf_counter()
    grammar = Grammar.from_ebnf(source)
    sentences = sample(grammar, n=10, seed=0, max_length=30)
    assert len(sentences) == 10 and all(grammar.matches(s) for s in sentences)
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("source", ['root ::= "a" root', "root ::= []", "root ::= Token(1)"])
def test_empty_language_gives_no_samples(source: str) -> None:
    assert sample(Grammar.from_ebnf(source), n=3) == []


def test_alternatives_without_finite_derivations_are_avoided() -> None:
    grammar = Grammar.from_ebnf('root ::= "a" loop | "b" | Token(3) "c"\nloop ::= "x" loop')
    assert set(sample(grammar, n=10)) == {"b"}


def test_lazy_rules_produce_their_shortest_match() -> None:
    grammar = Grammar.from_ebnf('root ::= x "b"?\nx[lazy] ::= "a"+')
    assert set(sample(grammar, n=20, seed=2)) <= {"a", "ab"}


def test_tag_dispatch_samples_dispatch() -> None:
    grammar = Grammar.from_ebnf('root ::= TagDispatch(("<t>", call))\ncall ::= "{" [0-9]+ "}"')
    sentences = sample(grammar, n=30, seed=0)
    assert any("<t>{" in s for s in sentences)


@settings(max_examples=30)
@given(from_grammar(ARITHMETIC))
def test_strategy_yields_sentences(text: str) -> None:
    assert ARITHMETIC.matches(text)


@settings(max_examples=20)
@given(st.data())
def test_strategy_respects_the_bound(data: st.DataObject) -> None:
    text = data.draw(from_grammar(JSON_GRAMMAR, max_length=10))
    assert len(text) <= 40


def test_strategy_of_an_empty_language_is_nothing() -> None:
    assert from_grammar(Grammar.from_ebnf('root ::= "a" root')).is_empty


# -- previews that read like real output (issue 10), bounded on hostile input (issue 8) --------
@pytest.mark.parametrize("source", [
    'root ::= "a"{4294967296}',
    'root ::= [0-9]{2147483648,}',
    'root ::= (("a"){1000}){1000}',
    'root ::= ((("a"){1000}){1000}){1000}',
])
def test_huge_repetitions_are_refused_at_once(source: str) -> None:
    started = time.perf_counter()
    grammar = Grammar.from_ebnf(source)
    assert sample(grammar, n=3) == []
    diagnostic = why_no_samples(grammar)
    assert diagnostic.code == "GK356" and "characters" in diagnostic.message
    assert time.perf_counter() - started < 5


def test_huge_regex_repetition_is_refused() -> None:
    grammar = Grammar.from_regex("x{4294967296}")
    assert sample(grammar, n=2) == []
    assert why_no_samples(grammar).code == "GK356"


def test_huge_repetition_of_an_item_that_can_be_empty_is_not_unrolled() -> None:
    deriver = Deriver(Grammar.from_ebnf('root ::= ("a"?){4294967296} "!"'))
    assert deriver.shortest == 1 and deriver.possible


def test_a_grammar_that_needs_a_token_says_so() -> None:
    grammar = Grammar.from_ebnf('root ::= Token(128010) "{" [a-z]+ "}"')
    assert sample(grammar, n=2) == []
    diagnostic = why_no_samples(grammar)
    assert diagnostic.code == "GK355" and "--tokenizer" in (diagnostic.hint or "")
    assert "vocab=" in (diagnostic.hint or "")  # the library's way too
    assert diagnostic.headline().startswith("<string>:1:1: GK355")  # at the root rule
    assert why_no_samples(Grammar.from_ebnf('root ::= "a" root')).code == "GK357"


def test_whitespace_loops_give_one_space_or_none() -> None:
    grammar = Grammar.from_ebnf('root ::= "a" ws "b" ws "c"\nws ::= [ \\t\\n\\r]*')
    assert set(sample(grammar, n=30, seed=5)) <= {"abc", "a bc", "ab c", "a b c"}
    sql = Grammar.from_ebnf((GRAMMARS / "sql_select.ebnf").read_text())
    assert not any("  " * 2 in s or "\n" in s for s in sample(sql, n=20, seed=1))


def test_strings_are_short_and_readable() -> None:
    sentences = sample(JSON_GRAMMAR, n=40, seed=2)
    strings = [m for s in sentences for m in re.findall(r'"((?:[^"\\]|\\.)*)"', s)]
    assert strings and max(map(len, strings)) <= 40
    letters = sum(c.isascii() and c.isalnum() for s in strings for c in s)
    assert letters >= 0.6 * sum(map(len, strings))


def test_alternatives_not_yet_used_come_first() -> None:
    grammar = Grammar.from_ebnf('root ::= "a" | "b" | "c" | "d" | "e"')
    assert sorted(sample(grammar, n=5, seed=0)) == ["a", "b", "c", "d", "e"]
    coverage = Coverage(grammar)
    sample(grammar, n=3, seed=0, coverage=coverage)
    report = coverage.report()
    assert report.startswith("coverage: 1 of 1 rules, 3 of 5 alternatives")
    assert report.count("never used:") == 2
    assert coverage.to_json()["alternatives"] == {"used": 3, "total": 5}


def test_coverage_names_unused_rules() -> None:
    grammar = Grammar.from_ebnf('root ::= "x" | big\nbig ::= "y"{100}')
    coverage = Coverage(grammar)
    sample(grammar, n=3, max_length=10, coverage=coverage)
    assert coverage.to_json()["unused_rules"] == ["big"]
    assert "never used: rule `big`" in coverage.report()


def test_first_samples_do_not_depend_on_n() -> None:
    assert sample(ARITHMETIC, n=3, seed=4) == sample(ARITHMETIC, n=8, seed=4)[:3]


@settings(max_examples=60)
@given(random_grammars.grammars, st.integers(0, 2**16))
def test_samples_of_random_grammars_are_accepted(text: str, seed: int) -> None:
    grammar = Grammar.from_ebnf(text)
    assert all(grammar.matches(s) for s in sample(grammar, n=3, seed=seed, max_length=12))


@settings(max_examples=40)
@given(st.data())
def test_strategy_of_random_grammars_yields_accepted_strings(data: st.DataObject) -> None:
    grammar = Grammar.from_ebnf(data.draw(random_grammars.grammars))
    strategy = from_grammar(grammar, max_length=12)
    if not strategy.is_empty:
        assert grammar.matches(data.draw(strategy))


def test_strategy_shrinks_to_the_simplest_sentence() -> None:
    from hypothesis import find

    grammar = Grammar.from_ebnf('root ::= "[" item ("," item)* "]"\nitem ::= [0-9]+ | "x"')
    assert find(from_grammar(grammar), lambda s: "," in s) == "[x,x]"


def test_a_long_chain_of_rules_samples_its_only_length() -> None:
    """Every sentence of the chain has one character per rule; measuring the rules' shortest
    derivations once per chain link (not one sweep per link) keeps this quick."""
    count = 2000
    links = "\n".join(f'r{k} ::= "x" r{k + 1} | "y" r{k + 1}' for k in range(count))
    grammar = Grammar.from_ebnf(f'root ::= r0\n{links}\nr{count} ::= "."\n')
    sentences = sample(grammar, n=2, seed=1, max_length=5000)
    assert [len(s) for s in sentences] == [count + 1] * 2
    assert all(set(s[:-1]) <= {"x", "y"} and s.endswith(".") for s in sentences)


def test_previews_show_optional_parts_more_often_than_not() -> None:
    grammar = Grammar.from_ebnf('root ::= "[" ("x" ("," "x")*)? "]"')
    sentences = samples(grammar, seed=0)
    previews = [next(sentences) for _ in range(60)]
    filled = sum(text != "[]" for text in previews)
    assert 30 < filled < 60  # about two in three; never only the empty list
