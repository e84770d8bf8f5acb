"""Token masks of spread counters (a counted loop whose body has several lengths) are xgrammar's.

Both engines walk the same seeded random path of allowed tokens over a small vocabulary of
``a``/``b`` runs, comparing the whole mask at every step, through the bounds of
``("a" | "aa"){m,n}``-like loops (nested ones too), with counters forced on every repetition
(``UNROLL_LIMIT`` below zero) and as usual.
"""

from __future__ import annotations

import importlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.automata import construct
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

pytestmark = pytest.mark.xgrammar
xgr = importlib.import_module("xgrammar")

TOKENS = [b"a", b"aa", b"aaa", b"aaaa" * 4, b"b", b"ab", b"ba", b"bb", b"c", b"ac", b".", b"a.",
          b"</s>"]
STOP = len(TOKENS) - 1
STEPS = 80

GRAMMARS = [
    'root ::= ("a" | "aa"){40,100000} "."',
    'root ::= ("a" | "bb" | "ccc"){10,50} "."',
    'root ::= ("ab" | "a" | "b"){5,30}',
    'root ::= (("a" | "aa"){2,12} "c"?){1,3} "."',
    'root ::= (("a" | "ba"){0,8} "c"){2,4}',
]


def _allowed(bitmask: np.ndarray) -> set[int]:
    bits = np.unpackbits(bitmask.view(np.uint8), bitorder="little")[: len(TOKENS)]
    return set(np.nonzero(bits)[0].tolist())


def _walk(ebnf: str, seed: int) -> None:
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, vocab_size=len(TOKENS),
                             stop_token_ids=[STOP])
    reference = xgr.GrammarMatcher(xgr.GrammarCompiler(info, cache_enabled=False)
                                   .compile_grammar(xgr.Grammar.from_ebnf(ebnf)))
    theirs = xgr.allocate_token_bitmask(1, len(TOKENS))
    ours_matcher = TokenMatcher(Grammar.from_ebnf(ebnf), Vocabulary(TOKENS, stop_ids=[STOP]))
    ours = allocate_token_bitmask(1, len(TOKENS))
    rng = random.Random(seed)
    path: list[int] = []
    for _ in range(STEPS):
        reference.fill_next_token_bitmask(theirs)
        ours_matcher.fill_next_token_bitmask(ours)
        allowed = _allowed(theirs.numpy())
        assert _allowed(ours) == allowed, (ebnf, path)
        if not allowed or allowed == {STOP}:  # a finished sentence: start over
            reference.reset()
            ours_matcher.reset()
            path = []
            continue
        # mostly go on rather than end the sentence, so the walk reaches the bounds
        going_on = [t for t in allowed if t != STOP and b"." not in TOKENS[t]]
        choices = sorted(going_on if going_on and rng.random() < 0.9 else allowed)
        token = rng.choice(choices)
        path.append(token)
        assert reference.accept_token(token)
        assert ours_matcher.accept_token(token)
        if token == STOP:
            reference.reset()
            ours_matcher.reset()
            path = []
            continue
        if rng.random() < 0.05 and len(path) > 2:
            back = rng.randint(1, 2)
            reference.rollback(back)
            ours_matcher.rollback(back)
            del path[-back:]


@pytest.mark.parametrize("ebnf", GRAMMARS)
def test_spread_counter_masks_match_xgrammar(ebnf: str) -> None:
    for seed in range(3):
        _walk(ebnf, seed)


@settings(max_examples=10)
@given(ebnf=st.sampled_from(GRAMMARS), seed=st.integers(0, 10_000))
def test_spread_counter_masks_with_counters_forced(ebnf: str, seed: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(construct, "UNROLL_LIMIT", -1)  # every repetition a counter
        _walk(ebnf, seed)
