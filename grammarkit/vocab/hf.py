"""Tokenizer objects (transformers, tokenizers, tiktoken-style) and cached models -> `RawVocab`.

Objects are recognised by duck typing; transformers itself is imported only by
`raw_from_pretrained`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from grammarkit.vocab.decoding import BYTE_TO_UNICODE, TokenDecoding
from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab
from grammarkit.vocab.tokenizer_json import raw_from_spec

_BYTE_LEVEL_ALPHABET = frozenset(BYTE_TO_UNICODE.values())


def _ids(value: Any) -> set[int]:
    """An id, a list of ids or None, as a set of ids."""
    values: Iterable[Any] = value if isinstance(value, (list, tuple, set)) else [value]
    return {i for i in values if isinstance(i, int) and 0 <= i < MAX_TOKEN_ID}


def _guess_decoding(strings: list[str]) -> TokenDecoding:
    """The decoding scheme of a bare ``token -> id`` vocabulary (a slow tokenizer)."""
    present = set(strings)
    if sum(f"<0x{b:02X}>" in present for b in range(256)) >= 128:
        return TokenDecoding((("▁", " "),), byte_fallback=True)
    in_alphabet = sum(_BYTE_LEVEL_ALPHABET.issuperset(s) for s in strings)
    if len(_BYTE_LEVEL_ALPHABET & present) >= 128 and in_alphabet >= 0.99 * len(strings):
        return TokenDecoding(byte_level=True)
    if any(s.startswith("▁") for s in strings):
        return TokenDecoding((("▁", " "),))
    return TokenDecoding()


def _raw_from_vocab_dict(tokenizer: Any, source: str) -> RawVocab:
    vocab = tokenizer.get_vocab()
    if not isinstance(vocab, Mapping) or not vocab:
        raise VocabularyError(f"{source}: get_vocab() returned no vocabulary")
    strings = [str(s) for s in vocab]
    ids = list(_ids(list(vocab.values())))
    if len(ids) != len(strings):
        raise VocabularyError(f"{source}: get_vocab() has repeated or invalid ids")
    decoding = _guess_decoding(strings)
    raw = RawVocab([b""] * (max(ids) + 1), source)
    for string, token in zip(strings, decoding.decode_all(strings)):
        raw.tokens[vocab[string]] = token
    return raw


def _raw_from_encoding(encoding: Any, source: str) -> RawVocab:
    """A tiktoken-style encoding (``n_vocab``, ``decode_single_token_bytes``)."""
    raw = RawVocab([], source)
    for token_id in range(int(encoding.n_vocab)):
        try:
            token = encoding.decode_single_token_bytes(token_id)
        except KeyError:
            continue
        raw.add_token(token_id, bytes(token))
    for text in getattr(encoding, "special_tokens_set", ()):
        token_id = encoding.encode_single_token(text)
        raw.flagged_ids.add(token_id)
        raw.added_ids.add(token_id)
    try:
        raw.eos_ids.update(_ids(encoding.eot_token))
    except (AttributeError, KeyError, ValueError):
        pass
    return raw


def _apply_transformers_metadata(raw: RawVocab, tokenizer: Any) -> None:
    """Added tokens (which stand for their own text), special ids and eos of a transformers
    tokenizer."""
    added = getattr(tokenizer, "added_tokens_decoder", None)
    for token_id, added_token in (added or {}).items():
        content = getattr(added_token, "content", added_token)
        if isinstance(content, str) and isinstance(token_id, int) and 0 <= token_id < MAX_TOKEN_ID:
            raw.add_token(token_id, content.encode("utf-8"))
            raw.added_ids.add(token_id)
            if getattr(added_token, "special", False):
                raw.flagged_ids.add(token_id)
    special = _ids(list(getattr(tokenizer, "all_special_ids", None) or []))
    raw.flagged_ids.update(i for i in special if i < len(raw.tokens))
    eos = _ids(getattr(tokenizer, "eos_token_id", None))
    raw.eos_ids.update(i for i in eos if i < len(raw.tokens))


def raw_from_tokenizer(tokenizer: Any) -> RawVocab:
    """Read a tokenizer object.

    Raises
    ------
    VocabularyError
        When the object is of no supported kind or its vocabulary is malformed.
    """
    source = f"<{type(tokenizer).__module__}.{type(tokenizer).__qualname__}>"
    name = getattr(tokenizer, "name_or_path", None)
    if isinstance(name, str) and name:
        source = f"{name} {source}"
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None and hasattr(backend, "to_str"):
        raw = raw_from_spec(json.loads(backend.to_str()), source)
        _apply_transformers_metadata(raw, tokenizer)
    elif hasattr(tokenizer, "to_str") and hasattr(tokenizer, "get_vocab_size"):
        raw = raw_from_spec(json.loads(tokenizer.to_str()), source)
    elif hasattr(tokenizer, "decode_single_token_bytes") and hasattr(tokenizer, "n_vocab"):
        raw = _raw_from_encoding(tokenizer, source)
    elif hasattr(tokenizer, "get_vocab"):
        raw = _raw_from_vocab_dict(tokenizer, source)
        _apply_transformers_metadata(raw, tokenizer)
    else:
        raise VocabularyError(
            f"{source}: not a tokenizer (expected a transformers tokenizer, a "
            "tokenizers.Tokenizer or a tiktoken-style encoding)"
        )
    size = len(tokenizer) if hasattr(tokenizer, "__len__") else 0
    if len(raw.tokens) < size <= MAX_TOKEN_ID:
        raw.tokens.extend([b""] * (size - len(raw.tokens)))
    return raw


def _transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:
        raise ImportError(
            "loading a pretrained tokenizer needs transformers: pip install 'grammarkit[hf]'"
        ) from exc
    return transformers


def raw_from_pretrained(name: str) -> tuple[RawVocab, int | None]:
    """Read a cached model's tokenizer, plus its lm head size when its config is cached.

    Raises
    ------
    VocabularyError
        Naming the model when its tokenizer is not in the local cache or unreadable.
    """
    transformers = _transformers()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(name, local_files_only=True)
    except Exception as exc:  # transformers raises OSError, ValueError, KeyError, ...
        raise VocabularyError(
            f"model {name!r}: no usable tokenizer in the local HuggingFace cache "
            f"(looked up with local_files_only=True; grammarkit never downloads): {exc}"
        ) from exc
    raw = raw_from_tokenizer(tokenizer)
    raw.source = name
    # Optional metadata: without a cached config the tokenizer's own size and eos stand.
    config = _optional(transformers.AutoConfig, name)
    text_config = getattr(config, "text_config", None) or config
    size = getattr(text_config, "vocab_size", None)
    generation = _optional(transformers.GenerationConfig, name)
    eos = _ids(getattr(generation, "eos_token_id", None))
    raw.eos_ids.update(i for i in eos if i < len(raw.tokens))
    return raw, size if isinstance(size, int) else None


def _optional(loader: Any, name: str) -> Any:
    """``loader.from_pretrained(name)`` from local files, or None when that fails."""
    try:
        return loader.from_pretrained(name, local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError):
        return None
