"""Fixtures: a small byte-level vocabulary (fast) for the generation tests."""

from __future__ import annotations

import pytest

from grammarkit.vocab import Vocabulary

WORDS = [b"true", b"false", b"null", b'{"', b'":', b'", "', b"name", b"age", b" ", b"  ",
         b"\n", b"ab", b"abc", b"SELECT", b" FROM", b"12", b"00"]


def small_vocabulary() -> Vocabulary:
    """Every byte, some words, and ``<|endoftext|>`` (the stop token) last."""
    tokens = [bytes([b]) for b in range(256)] + WORDS + [b"<|endoftext|>"]
    return Vocabulary.from_tokens(tokens)


@pytest.fixture(scope="session")
def small_vocab() -> Vocabulary:
    return small_vocabulary()
