"""Reading a tokenizer file of any supported format into a `RawVocab`.

Formats, recognised by name and content: HuggingFace ``tokenizer.json`` (or a directory
holding one), ``.tiktoken`` and quicktok ``.vocab`` (with its ``.special`` sibling).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.known import file_digest, known_special_tokens
from grammarkit.vocab.quicktok_file import looks_like_quicktok, read_quicktok
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab
from grammarkit.vocab.tiktoken_file import looks_like_tiktoken, read_tiktoken
from grammarkit.vocab.tokenizer_json import read_tokenizer_json

_EXPECTED = "expected a HuggingFace tokenizer.json, a .tiktoken file or a quicktok .vocab file"


def _resolve(path: Path) -> Path:
    if path.is_dir():
        candidate = path / "tokenizer.json"
        if candidate.is_file():
            return candidate
        raise VocabularyError(f"{path}: directory has no tokenizer.json")
    if not path.exists():
        raise VocabularyError(f"{path}: no such file")
    return path


def load_file(
    path: str | os.PathLike[str], special_tokens: Mapping[str, int] | None = None
) -> RawVocab:
    """Read a tokenizer file.

    Parameters
    ----------
    path
        A ``tokenizer.json``, ``*.tiktoken`` or quicktok ``*.vocab`` file, or a directory with
        a ``tokenizer.json``.
    special_tokens
        Extra out-of-band special tokens, text -> id. For a ``.tiktoken`` file this replaces
        the special tokens known for well-known files.

    Raises
    ------
    VocabularyError
        When the file is missing, unreadable, truncated, corrupt or not a tokenizer.
    """
    file = _resolve(Path(path))
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"{file}: cannot read ({exc.strerror or exc})") from exc
    if not data.strip():
        raise VocabularyError(f"{file}: the file is empty; {_EXPECTED}")
    suffix = file.suffix.lower()
    if suffix == ".json" or data.lstrip()[:1] == b"{":
        raw = read_tokenizer_json(data, file)
    elif suffix == ".tiktoken" or (suffix != ".vocab" and looks_like_tiktoken(data)):
        raw = read_tiktoken(data, file)
        if special_tokens is None:
            special_tokens = known_special_tokens(file_digest(data))
    elif looks_like_quicktok(data):
        raw = read_quicktok(data, file)
    else:
        raise VocabularyError(f"{file}: not a recognised tokenizer file; {_EXPECTED}")
    if special_tokens:
        add_special_tokens(raw, special_tokens)
    return raw


def add_special_tokens(raw: RawVocab, special_tokens: Mapping[str, int]) -> None:
    """Add out-of-band special tokens (text -> id) to ``raw``.

    Raises
    ------
    VocabularyError
        When an id is negative or already holds a different token.
    """
    for text, token_id in special_tokens.items():
        if not isinstance(text, str):
            raise VocabularyError(f"{raw.source}: special token {text!r} is not a str")
        try:
            token = text.encode("utf-8")
        except UnicodeEncodeError:
            raise VocabularyError(
                f"{raw.source}: special token {text!r} is not valid Unicode (a lone surrogate)"
            ) from None
        if type(token_id) is not int or not 0 <= token_id < MAX_TOKEN_ID:
            raise VocabularyError(
                f"{raw.source}: special token {text!r} has bad id {token_id!r} (ids are ints "
                f"below {MAX_TOKEN_ID:,})"
            )
        if token_id < len(raw.tokens) and raw.tokens[token_id] not in (b"", token):
            raise VocabularyError(
                f"{raw.source}: special token {text!r} would replace token {token_id} "
                f"({raw.tokens[token_id]!r})"
            )
        raw.add_token(token_id, token)
        raw.flagged_ids.add(token_id)
        raw.added_ids.add(token_id)
