"""`BatchTokenMatcher`: one call fills the same rows as per-matcher fills, and as xgrammar's
``BatchGrammarMatcher``."""

from __future__ import annotations

import importlib
import random

import numpy as np
import numpy.typing as npt
import pytest

from grammarkit import Grammar
from grammarkit.decode import BatchTokenMatcher, TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

TOKENS = [b"a", b"b", b"ab", b"ba", b"c", b"1", b"12", b"+", b"</s>", b"<|x|>", b"", b"aa"]
STOP = 8

GRAMMARS = [
    'root ::= "a" "b"+',
    'root ::= ("a" | "b")* "c"',
    'root ::= [0-9]+ ("+" [0-9]+)*',
    'root ::= "ab" | "ba"',
]


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary(TOKENS, special_ids=[9], stop_ids=[STOP])


def _single(matcher: TokenMatcher, width: int) -> npt.NDArray[np.int32]:
    bitmask = allocate_token_bitmask(1, width)
    matcher.fill_next_token_bitmask(bitmask)
    return bitmask[0]


def test_batch_fill_equals_single_fills(vocab: Vocabulary) -> None:
    matchers = [TokenMatcher(Grammar.from_ebnf(text), vocab) for text in GRAMMARS * 3]
    rng = random.Random(0)
    for step in range(12):
        rows = list(range(len(matchers)))
        rng.shuffle(rows)
        bitmask = allocate_token_bitmask(len(matchers) + 2, len(vocab))
        BatchTokenMatcher().batch_fill_next_token_bitmask(matchers, bitmask, rows)
        for matcher, row in zip(matchers, rows, strict=True):
            assert bitmask[row].tolist() == _single(matcher, len(vocab)).tolist(), (step, row)
        assert (bitmask[len(matchers):] == -1).all()  # rows not named are left alone
        tokens, expected = [], []
        for matcher in matchers:
            allowed = matcher.allowed_token_ids().tolist()
            tokens.append(rng.choice(allowed) if allowed else STOP)
            expected.append(bool(allowed))
        assert BatchTokenMatcher.batch_accept_token(matchers, tokens) == expected
    assert any(m.is_terminated() for m in matchers)  # terminated rows were filled too


def test_batch_accept_string_and_rollback(vocab: Vocabulary) -> None:
    matchers = [TokenMatcher(Grammar.from_ebnf(GRAMMARS[0]), vocab) for _ in range(3)]
    assert BatchTokenMatcher.batch_accept_string(matchers, ["a", "ab", "c"]) == [True, True,
                                                                                 False]
    BatchTokenMatcher.batch_rollback(matchers[:2], [1, 1])
    assert [m.allowed_token_ids().tolist() for m in matchers] == [[0, 2]] * 3
    with pytest.raises(ValueError, match="cannot roll back"):
        BatchTokenMatcher.batch_rollback(matchers, 1)


def test_batch_rejects_bad_arguments(vocab: Vocabulary) -> None:
    matchers = [TokenMatcher(Grammar.from_ebnf(text), vocab) for text in GRAMMARS[:2]]
    batch = BatchTokenMatcher()
    bitmask = allocate_token_bitmask(2, len(vocab))
    with pytest.raises(ValueError, match="indices"):
        batch.batch_fill_next_token_bitmask(matchers, bitmask, [0])
    with pytest.raises(ValueError, match="distinct"):
        batch.batch_fill_next_token_bitmask(matchers, bitmask, [1, 1])
    with pytest.raises(ValueError, match="not a row"):
        batch.batch_fill_next_token_bitmask(matchers, bitmask, [0, 2])
    with pytest.raises(ValueError, match="int32"):
        batch.batch_fill_next_token_bitmask(matchers, bitmask.astype(np.int64))
    other = TokenMatcher(Grammar.from_ebnf(GRAMMARS[0]), Vocabulary(TOKENS + [b"d"]))
    with pytest.raises(ValueError, match="vocabulary sizes"):
        batch.batch_fill_next_token_bitmask([matchers[0], other], bitmask)
    with pytest.raises(ValueError, match="tokens"):
        BatchTokenMatcher.batch_accept_token(matchers, [0])
    batch.batch_fill_next_token_bitmask([], bitmask)
    assert (bitmask == -1).all()


@pytest.mark.xgrammar
def test_batch_fill_matches_xgrammar(qwen36: Vocabulary) -> None:
    xgr = importlib.import_module("xgrammar")
    texts = ['root ::= "{" [a-z]+ ":" [0-9]+ "}"', 'root ::= ("yes" | "no") " " [a-z ]*',
             'root ::= [0-9]+ ("+" [0-9]+)*']
    info = xgr.TokenizerInfo(list(qwen36.tokens), xgr.VocabType.RAW, vocab_size=len(qwen36),
                             stop_token_ids=sorted(qwen36.stop_ids))
    compiler = xgr.GrammarCompiler(info, cache_enabled=False)
    ours = [TokenMatcher(Grammar.from_ebnf(t), qwen36) for t in texts * 2]
    theirs = [xgr.GrammarMatcher(compiler.compile_grammar(xgr.Grammar.from_ebnf(t)))
              for t in texts * 2]
    ordinary = np.ones(len(qwen36), dtype=np.bool_)
    ordinary[sorted(qwen36.special_ids)] = False
    rng = random.Random(1)
    rows = [5, 0, 3, 1, 4, 2]
    for step in range(8):
        mine = allocate_token_bitmask(len(ours), len(qwen36))
        BatchTokenMatcher().batch_fill_next_token_bitmask(ours, mine, rows)
        reference = xgr.allocate_token_bitmask(len(theirs), len(qwen36))
        xgr.BatchGrammarMatcher().batch_fill_next_token_bitmask(theirs, reference, rows)
        tokens = []
        for row in rows:
            a = np.unpackbits(mine[row].view(np.uint8), bitorder="little")[: len(qwen36)]
            b = np.unpackbits(reference.numpy()[row].view(np.uint8),
                              bitorder="little")[: len(qwen36)]
            assert np.array_equal(a.astype(bool) & ordinary, b.astype(bool) & ordinary), (step,
                                                                                          row)
            tokens.append(int(rng.choice(np.flatnonzero(a.astype(bool) & ordinary).tolist())))
        assert BatchTokenMatcher.batch_accept_token(ours, tokens) == [True] * len(ours)
        assert xgr.BatchGrammarMatcher.batch_accept_token(theirs, tokens) == [True] * len(ours)
