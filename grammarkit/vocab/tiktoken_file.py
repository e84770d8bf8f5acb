"""``.tiktoken`` files (one ``<base64 token> <rank>`` line per token) -> `RawVocab`.

The rank is the token id. Special tokens are not in such files: they come from the caller's
``special_tokens`` mapping or, for well-known files, from `grammarkit.vocab.known`.
"""

from __future__ import annotations

import binascii
import re
from pathlib import Path

from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab

_LINE = rb"[A-Za-z0-9+/]*={0,2}[ \t]+[0-9]+[ \t]*\r?"
_FILE = re.compile(rb"(?:" + _LINE + rb"\n|[ \t]*\r?\n)*(?:" + _LINE + rb")?[ \t\r\n]*")
_ONE_LINE = re.compile(_LINE + rb"|[ \t\r]*")
_RANK_DIGITS = len(str(MAX_TOKEN_ID))


def looks_like_tiktoken(data: bytes) -> bool:
    """Whether the first line of ``data`` has the ``<base64> <rank>`` shape."""
    return _ONE_LINE.fullmatch(data.split(b"\n", 1)[0]) is not None and bool(data.strip())


def _first_bad_line(data: bytes) -> tuple[int, bytes]:
    for number, line in enumerate(data.split(b"\n"), start=1):
        if _ONE_LINE.fullmatch(line) is None:
            return number, line
    return 0, b""


def read_tiktoken(data: bytes, path: Path) -> RawVocab:
    """Parse the bytes of a ``.tiktoken`` file.

    Raises
    ------
    VocabularyError
        On a malformed line, bad base64, a repeated rank or token (what a truncated last line
        usually produces), or an empty file.
    """
    source = str(path)
    truncated = "" if data.endswith(b"\n") else " (the file looks truncated)"
    if _FILE.fullmatch(data) is None:
        number, line = _first_bad_line(data)
        shown = line[:60].decode("utf-8", "replace")
        raise VocabularyError(
            f"{source}: not a .tiktoken file: line {number} is not '<base64 token> <rank>' "
            f"({shown!r}){truncated}"
        )
    fields = data.split()
    if not fields:
        raise VocabularyError(f"{source}: the .tiktoken file has no tokens")
    if len(fields) % 2:
        raise VocabularyError(f"{source}: the last line has no rank{truncated}")
    try:
        tokens = [binascii.a2b_base64(b64) for b64 in fields[0::2]]
    except binascii.Error as exc:
        raise VocabularyError(f"{source}: bad base64 token ({exc}){truncated}") from exc
    too_long = next((rank for rank in fields[1::2] if len(rank.lstrip(b"0")) > _RANK_DIGITS), None)
    ranks = [MAX_TOKEN_ID if too_long else int(rank) for rank in fields[1::2]]
    if max(ranks) >= MAX_TOKEN_ID:
        shown = (too_long or str(max(ranks)).encode())[:20].decode()
        raise VocabularyError(
            f"{source}: rank {shown}{'...' if too_long else ''} is out of range (ranks are "
            f"token ids, which must be below {MAX_TOKEN_ID:,})"
        )
    if len(set(ranks)) != len(ranks) or len(set(tokens)) != len(tokens):
        _raise_duplicate(source, tokens, ranks, truncated)
    raw = RawVocab([b""] * (max(ranks) + 1), source)
    for rank, token in zip(ranks, tokens):
        raw.tokens[rank] = token
    return raw


def _raise_duplicate(source: str, tokens: list[bytes], ranks: list[int], truncated: str) -> None:
    seen_ranks: set[int] = set()
    seen_tokens: set[bytes] = set()
    for line, (token, rank) in enumerate(zip(tokens, ranks), start=1):
        if rank in seen_ranks or token in seen_tokens:
            what = f"rank {rank}" if rank in seen_ranks else f"token {token!r}"
            raise VocabularyError(f"{source}: line {line} repeats {what}{truncated}")
        seen_ranks.add(rank)
        seen_tokens.add(token)
