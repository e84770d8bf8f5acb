"""Fixtures: real vocabularies (with their package encoders), each loaded once per session."""

from __future__ import annotations

import pytest

from grammarkit.check.tokenizers import LoadedTokenizer, load_tokenizer
from grammarkit.vocab import Vocabulary


@pytest.fixture(scope="session")
def qwen36() -> LoadedTokenizer:
    return load_tokenizer("qwen3.6")


@pytest.fixture(scope="session")
def deepseek() -> LoadedTokenizer:
    return load_tokenizer("deepseek-v4")


@pytest.fixture(scope="session")
def llama3() -> LoadedTokenizer:
    return load_tokenizer("llama3")


def letters_vocabulary() -> Vocabulary:
    """docs/diagnostics.md's toy vocabulary without byte fallback: a-z, space, ``</s>``."""
    tokens = [bytes([c]) for c in range(ord("a"), ord("z") + 1)] + [b" ", b"</s>"]
    stop = len(tokens) - 1
    return Vocabulary.from_tokens(tokens, special_ids=[stop], stop_ids=[stop])
