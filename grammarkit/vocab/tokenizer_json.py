"""HuggingFace ``tokenizer.json`` (the `tokenizers` library's serialisation) -> `RawVocab`.

The decoding scheme comes from the ``decoder`` section (``ByteLevel``, ``Metaspace``,
``Replace``, ``ByteFallback``), falling back to the ``pre_tokenizer`` and ``normalizer``
sections when a file has no decoder; ``model.byte_fallback`` turns on ``<0xNN>`` byte pieces.
Added tokens stand for their own text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from grammarkit.vocab.decoding import TokenDecoding
from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab

_TOO_DEEP = "the JSON is nested too deeply to read"

_SEQUENCE_KEYS = {"decoders", "normalizers", "pretokenizers"}
_UNSUPPORTED_MODELS = {"WordPiece"}


def _flatten(node: Any) -> list[Mapping[str, Any]]:
    """A decoder/normalizer/pre-tokenizer node as the flat list of its steps."""
    if not isinstance(node, Mapping):
        return []
    if node.get("type") == "Sequence":
        children: list[Any] = next((node[k] for k in _SEQUENCE_KEYS if k in node), [])
        return [step for child in children for step in _flatten(child)]
    return [node]


def _replacement(step: Mapping[str, Any], source: str) -> tuple[str, str]:
    pattern = step.get("pattern") or {}
    if "String" not in pattern:
        raise VocabularyError(
            f"{source}: a Replace step with a regex pattern ({pattern!r}) is not supported"
        )
    return str(pattern["String"]), str(step.get("content", ""))


def decoding_for(spec: Mapping[str, Any], source: str) -> TokenDecoding:
    """Decide how this tokenizer's token strings map to bytes.

    Raises
    ------
    VocabularyError
        For decoders whose tokens are not self-contained byte strings (WordPiece, CTC, ...).
    """
    replacements: list[tuple[str, str]] = []
    byte_level = False
    byte_fallback = bool((spec.get("model") or {}).get("byte_fallback"))
    decoder_steps = _flatten(spec.get("decoder"))
    for step in decoder_steps:
        kind = step.get("type")
        if kind == "ByteLevel":
            byte_level = True
        elif kind == "ByteFallback":
            byte_fallback = True
        elif kind == "Metaspace":
            replacements.append((str(step.get("replacement", "▁")), " "))
        elif kind == "Replace":
            replacements.append(_replacement(step, source))
        elif kind not in ("Fuse", "Strip"):
            raise VocabularyError(
                f"{source}: decoder {kind!r} is not supported (grammarkit reads byte-level BPE, "
                "byte-fallback and metaspace vocabularies)"
            )
    if not decoder_steps:
        for step in _flatten(spec.get("pre_tokenizer")):
            if step.get("type") == "ByteLevel":
                byte_level = True
            elif step.get("type") == "Metaspace":
                replacements.append((str(step.get("replacement", "▁")), " "))
        for step in _flatten(spec.get("normalizer")):
            if step.get("type") == "Replace":
                old, new = _replacement(step, source)
                if old == " ":
                    replacements.append((new, " "))
    return TokenDecoding(tuple(replacements), byte_level, byte_fallback)


def _model_vocab(model: Mapping[str, Any], source: str) -> tuple[list[str], list[int], int | None]:
    """Token strings, their ids, and the unknown-token id of the ``model`` section."""
    kind = model.get("type") or ("BPE" if "merges" in model else "WordLevel")
    if kind in _UNSUPPORTED_MODELS:
        raise VocabularyError(
            f"{source}: model type {kind!r} is not supported (its tokens are word pieces, "
            "not byte strings)"
        )
    vocab = model.get("vocab")
    if kind == "Unigram":
        if not isinstance(vocab, list):
            raise VocabularyError(f"{source}: Unigram model has no vocab list")
        strings = [str(entry[0]) for entry in vocab]
        unk = model.get("unk_id")
        if unk is not None and not (type(unk) is int and 0 <= unk < len(strings)):
            raise VocabularyError(
                f"{source}: Unigram unk_id {unk!r} is not an id of its {len(strings)} tokens"
            )
        return strings, list(range(len(strings))), unk
    if not isinstance(vocab, Mapping):
        raise VocabularyError(f"{source}: model {kind!r} has no vocab mapping")
    strings = list(vocab.keys())
    ids = list(vocab.values())
    if not all(type(i) is int for i in ids):
        raise VocabularyError(f"{source}: model vocab has a non-integer id")
    unk_token = model.get("unk_token")
    return strings, ids, vocab.get(unk_token) if isinstance(unk_token, str) else None


def raw_from_spec(spec: Any, source: str) -> RawVocab:
    """Read a parsed ``tokenizer.json`` document.

    Raises
    ------
    VocabularyError
        When the document is not a tokenizer description or is malformed.
    """
    if not isinstance(spec, Mapping) or not isinstance(spec.get("model"), Mapping):
        raise VocabularyError(
            f"{source}: not a HuggingFace tokenizer.json (no 'model' section with a vocabulary)"
        )
    try:
        return _raw_from_spec(spec, source)
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as exc:
        if isinstance(exc, VocabularyError):
            raise
        why = "a token is not valid Unicode" if isinstance(exc, UnicodeError) else repr(exc)
        raise VocabularyError(f"{source}: malformed tokenizer.json ({why})") from exc


def _raw_from_spec(spec: Mapping[str, Any], source: str) -> RawVocab:
    decoding = decoding_for(spec, source)
    strings, ids, unk_id = _model_vocab(spec["model"], source)
    added = spec.get("added_tokens") or []
    all_ids = ids + [entry["id"] for entry in added]
    if not all_ids:
        raise VocabularyError(f"{source}: the tokenizer has an empty vocabulary")
    if min(all_ids) < 0 or max(all_ids) >= MAX_TOKEN_ID:
        raise VocabularyError(
            f"{source}: token id out of range ({min(all_ids)}..{max(all_ids)}; ids must be "
            f"below {MAX_TOKEN_ID:,})"
        )
    raw = RawVocab([b""] * (max(all_ids) + 1), source)
    tokens = raw.tokens
    for token_id, token in zip(ids, decoding.decode_all(strings)):
        tokens[token_id] = token
    if unk_id is not None:
        raw.flagged_ids.add(unk_id)
    for entry in added:
        token_id = entry["id"]
        tokens[token_id] = str(entry["content"]).encode("utf-8")
        raw.added_ids.add(token_id)
        if entry.get("special"):
            raw.flagged_ids.add(token_id)
    return raw


def read_tokenizer_json(data: bytes, path: Path) -> RawVocab:
    """Parse the bytes of a ``tokenizer.json`` file, then its sibling config files."""
    source = str(path)
    try:
        spec = json.loads(data)
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{source}: not a tokenizer.json (not UTF-8 text: {exc})") from exc
    except json.JSONDecodeError as exc:
        hint = "" if data.rstrip().endswith(b"}") else " (the file looks truncated)"
        raise VocabularyError(
            f"{source}: not valid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}{hint}"
        ) from exc
    except RecursionError as exc:
        raise VocabularyError(f"{source}: not a tokenizer.json: {_TOO_DEEP}") from exc
    raw = raw_from_spec(spec, source)
    _apply_sibling_configs(raw, path.parent)
    return raw


def _read_json(path: Path) -> Mapping[str, Any] | None:
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise VocabularyError(f"{path}: unreadable tokenizer metadata ({exc})") from exc
    except RecursionError as exc:
        raise VocabularyError(f"{path}: unreadable tokenizer metadata: {_TOO_DEEP}") from exc
    return doc if isinstance(doc, Mapping) else None


def _content(value: Any) -> str | None:
    """The text of a token entry; ``None`` when it is not text (or not encodable as UTF-8)."""
    if isinstance(value, Mapping):
        value = value.get("content")
    if not isinstance(value, str):
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return None
    return value


def _apply_sibling_configs(raw: RawVocab, directory: Path) -> None:
    """Special flags and eos from ``tokenizer_config.json`` / ``generation_config.json``."""
    config = _read_json(directory / "tokenizer_config.json")
    if config is not None:
        decoder = config.get("added_tokens_decoder")
        if isinstance(decoder, Mapping):
            for key, entry in decoder.items():
                token_id = int(key) if str(key).isdigit() else -1
                content = _content(entry)
                in_range = 0 <= token_id < len(raw.tokens) and content is not None
                if in_range and raw.tokens[token_id] == str(content).encode("utf-8"):
                    raw.added_ids.add(token_id)
                    if isinstance(entry, Mapping) and entry.get("special"):
                        raw.flagged_ids.add(token_id)
        eos = _content(config.get("eos_token"))
        if eos is not None:
            eos_bytes = eos.encode("utf-8")
            matches = {i for i in raw.added_ids if raw.tokens[i] == eos_bytes}
            if not matches and eos_bytes in raw.tokens:
                matches.add(raw.tokens.index(eos_bytes))
            raw.eos_ids.update(matches)
    generation = _read_json(directory / "generation_config.json")
    if generation is not None:
        eos_ids = generation.get("eos_token_id")
        eos_list = eos_ids if isinstance(eos_ids, list) else [eos_ids]
        raw.eos_ids.update(i for i in eos_list if isinstance(i, int) and 0 <= i < len(raw.tokens))
