"""The `Vocabulary` value: construction, special/stop detection, padding, lookups, arrays."""

from __future__ import annotations

import numpy as np
import pytest

from grammarkit.vocab import Vocabulary, VocabularyError

TOKENS = [
    b"<|endoftext|>",  # 0 special + stop by the strict name rule
    b"a",
    b"",  # 2 unused
    b" hello",
    b"<\xef\xbd\x9cend\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",  # 4 <｜end▁of▁sentence｜>
    b"<|im start|>",  # 5 whitespace inside: ordinary text
    b"<s>",  # 6 ordinary: broad names only apply to added tokens
    b"\xe2\x96",  # 7 partial UTF-8
    b"a",  # 8 duplicate bytes
    b"<|reserved_special_token_5|>",  # 9
]


def test_from_tokens_detection() -> None:
    vocab = Vocabulary.from_tokens(TOKENS)
    assert len(vocab) == vocab.vocab_size == len(TOKENS)
    assert vocab.special_ids == {0, 2, 4, 9}
    assert vocab.stop_ids == {0, 4}
    assert vocab.token_bytes(7) == b"\xe2\x96"
    assert not vocab.is_special(6) and not vocab.is_special(5)
    assert vocab.source == "<tokens>"


def test_from_tokens_explicit() -> None:
    vocab = Vocabulary.from_tokens(TOKENS, special_ids={6}, stop_ids={6})
    assert vocab.special_ids == {2, 6} and vocab.stop_ids == {6}
    vocab = Vocabulary.from_tokens(TOKENS, special_ids={6, 0})
    assert vocab.stop_ids == {0}  # stop names are looked for among the given special ids
    assert Vocabulary.from_tokens(TOKENS, stop_ids=()).stop_ids == frozenset()


def test_init_is_exact_and_stops_are_special() -> None:
    vocab = Vocabulary(TOKENS, stop_ids=[3])
    assert vocab.special_ids == {2, 3} and vocab.stop_ids == {3}


def test_padding_and_trimming() -> None:
    vocab = Vocabulary.from_tokens(TOKENS, vocab_size=16)
    assert len(vocab) == 16 and vocab.tokens[10:] == (b"",) * 6
    assert vocab.special_ids == {0, 2, 4, 9, *range(10, 16)}
    assert vocab.with_vocab_size(10) == Vocabulary.from_tokens(TOKENS)
    assert vocab.with_vocab_size(9).special_ids == {0, 2, 4}  # trailing special 9 dropped
    with pytest.raises(VocabularyError, match="would drop 1 ordinary tokens"):
        vocab.with_vocab_size(8)
    with pytest.raises(VocabularyError, match="must be positive"):
        vocab.with_vocab_size(0)


def test_with_stop_ids() -> None:
    vocab = Vocabulary.from_tokens(TOKENS).with_stop_ids([9])
    assert vocab.stop_ids == {9} and vocab.special_ids == {0, 2, 4, 9}


def test_bad_arguments() -> None:
    with pytest.raises(VocabularyError, match="tokens must be bytes, got str"):
        Vocabulary.from_tokens(["a", "b"])  # type: ignore[list-item]
    with pytest.raises(VocabularyError, match=r"out of range: \[10\]"):
        Vocabulary(TOKENS, special_ids=[10])
    with pytest.raises(VocabularyError, match=r"out of range: \[-1\]"):
        Vocabulary(TOKENS, stop_ids=[-1], vocab_size=12)
    vocab = Vocabulary.from_tokens(TOKENS)
    with pytest.raises(IndexError):
        vocab.token_bytes(len(TOKENS))
    with pytest.raises(IndexError):
        vocab.is_special(-1)


def test_token_id() -> None:
    vocab = Vocabulary.from_tokens(TOKENS)
    assert vocab.token_id("a") == vocab.token_id(b"a") == 1  # lowest id of equal bytes
    assert vocab.token_id("<｜end▁of▁sentence｜>") == 4
    with pytest.raises(KeyError, match="no token 'zzz'"):
        vocab.token_id("zzz")
    with pytest.raises(KeyError):
        vocab.token_id(b"")  # unused ids have no text
    clash = Vocabulary([b"<x>", b"<x>"], special_ids=[1])
    assert clash.token_id("<x>") == 1  # a grammar naming a token means the special one


def test_value_semantics() -> None:
    a = Vocabulary.from_tokens(TOKENS)
    b = Vocabulary.from_tokens(list(TOKENS))
    assert a == b and hash(a) == hash(b) and a != a.with_vocab_size(11)
    assert a != TOKENS
    assert "vocab_size=10" in repr(a) and "'<|endoftext|>'" in repr(a)
    assert isinstance(a.tokens, tuple)


def test_arrays() -> None:
    vocab = Vocabulary.from_tokens(TOKENS, vocab_size=12)
    arrays = vocab.to_arrays()
    assert arrays is vocab.to_arrays()
    assert arrays.offsets.shape == (13,) and arrays.offsets.dtype == np.int64
    for i, token in enumerate(vocab.tokens):
        start, end = arrays.offsets[i], arrays.offsets[i + 1]
        assert arrays.data[start:end].tobytes() == token and arrays.lengths[i] == len(token)
    assert [vocab.tokens[i] for i in arrays.sorted_ids] == sorted(vocab.tokens)
    assert list(arrays.sorted_ids[:3]) == [2, 10, 11]  # empty tokens first, then by id
    assert set(np.flatnonzero(arrays.special_mask)) == vocab.special_ids
    assert set(np.flatnonzero(arrays.stop_mask)) == vocab.stop_ids
    with pytest.raises(ValueError):
        arrays.sorted_ids[0] = 1
