"""Random sentences (``grammarkit.sample``) and the hypothesis strategy ``from_grammar``."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.grammar import Grammar
from grammarkit.sample import sample
from grammarkit.strategies import from_grammar
from tests.automata.grammars import CASES, JSON, Case

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
