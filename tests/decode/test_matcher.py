"""Unit and property tests of `TokenMatcher` on a small hand-made vocabulary."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask, apply_token_bitmask
from grammarkit.vocab import Vocabulary

TOKENS = [b"a", b"b", b"ab", b"ba", b"c", b"\xe4", b"\xbd\xa0", "你".encode(), b"</s>",
          b"<|x|>", b"", b"aa", b"(", b")"]
STOP, SPECIAL = 8, 9


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary(TOKENS, special_ids=[SPECIAL], stop_ids=[STOP])


def _allowed(matcher: TokenMatcher) -> set[int]:
    return set(matcher.allowed_token_ids().tolist())


def test_masks_follow_the_grammar(vocab: Vocabulary) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= "a" "b"+'), vocab)
    assert _allowed(m) == {0, 2}
    assert m.accept_token(0)
    assert _allowed(m) == {1}
    assert m.accept_token(1) and m.is_completed()
    assert _allowed(m) == {1, STOP}
    assert m.accept_token(STOP) and m.is_terminated()
    assert not m.accept_token(1) and not m.accept_token(STOP)
    bitmask = allocate_token_bitmask(2, len(vocab))
    m.fill_next_token_bitmask(bitmask, 1)
    assert not bitmask[1].any() and (bitmask[0] == -1).all()


def test_split_utf8_characters(vocab: Vocabulary) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= "你"+'), vocab)
    assert _allowed(m) == {5, 7}
    assert m.accept_token(5) and _allowed(m) == {6}
    assert m.accept_token(6) and m.is_completed()
    assert m.find_jump_forward_string() == ""


def test_bad_ids_and_rollback(vocab: Vocabulary) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= [a-c]*'), vocab)
    for bad in (-1, len(vocab), 10**9, SPECIAL, 10, "a"):
        assert not m.accept_token(bad)  # type: ignore[arg-type]
    assert m.accept_token(0) and m.accept_string("bc")
    with pytest.raises(ValueError, match="cannot roll back 3"):
        m.rollback(3)
    m.rollback(2)
    assert m.accept_token(2)
    m.reset()
    with pytest.raises(ValueError):
        m.rollback(1)
    with pytest.raises(ValueError):
        m.fill_next_token_bitmask(np.zeros((1, 1), dtype=np.int64))
    with pytest.raises(ValueError):
        m.fill_next_token_bitmask(allocate_token_bitmask(1, len(vocab)), 5)
    with pytest.raises(ValueError):
        TokenMatcher(Grammar.from_ebnf('root ::= "a"'), vocab, stop_token_ids=[99])


@pytest.mark.parametrize("text", [5, 0, 3.0, None, ["a"]])
def test_accept_string_refuses_what_is_not_text(vocab: Vocabulary, text: object) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= "\\0"* "a"*'), vocab)
    with pytest.raises(TypeError, match="expected str or bytes"):
        m.accept_string(text)  # type: ignore[arg-type]
    assert m.accept_string(bytearray(b"a")) and m.accept_string(memoryview(b"a"))
    assert m.accept_string("a") and m.accept_string(b"a") and m.is_completed()


def test_token_edges_and_jump_forward(vocab: Vocabulary) -> None:
    m = TokenMatcher(Grammar.from_ebnf(f'root ::= "(" Token({SPECIAL}) ")" | "(" "ab)"'), vocab)
    assert m.find_jump_forward_string() == "("
    assert m.accept_token(12)
    assert _allowed(m) == {SPECIAL, 0, 2}
    assert m.accept_token(SPECIAL) and m.find_jump_forward_string() == ")"


def test_max_rollback_tokens(vocab: Vocabulary) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= "a"*'), vocab, max_rollback_tokens=1)
    assert m.accept_token(0) and m.accept_token(0)
    with pytest.raises(ValueError):
        m.rollback(2)
    m.rollback(1)


def test_apply_token_bitmask_numpy_and_torch(vocab: Vocabulary) -> None:
    bitmask = np.zeros((1, 1), dtype=np.int32)
    bitmask[0, 0] = 0b101
    logits = np.zeros(len(vocab), dtype=np.float32)
    apply_token_bitmask(logits, bitmask)
    assert np.isfinite(logits).tolist() == [True, False, True] + [False] * (len(vocab) - 3)
    torch = importlib.import_module("torch")
    batch = torch.zeros((1, len(vocab)))
    apply_token_bitmask(batch, torch.from_numpy(bitmask))
    assert torch.isfinite(batch)[0].tolist() == np.isfinite(logits).tolist()


@settings(max_examples=30)
@given(st.lists(st.integers(0, len(TOKENS) - 1), max_size=8))
def test_mask_agrees_with_accept_token(vocab: Vocabulary, path: list[int]) -> None:
    m = TokenMatcher(Grammar.from_ebnf('root ::= ("a" | "b" "c"? | "你" | "(" root ")")*'), vocab)
    for token in path:
        allowed = _allowed(m)
        for candidate in range(len(TOKENS)):
            if candidate == STOP:
                continue
            accepted = m.accept_token(candidate)
            assert accepted == (candidate in allowed), (path, candidate)
            if accepted:
                m.rollback(1)
        if not m.accept_token(token):
            break
