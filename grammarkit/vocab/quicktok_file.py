"""quicktok's binary ``<name>.vocab`` / ``<name>.special`` files -> `RawVocab`.

``.vocab``: little-endian ``u32 count``, then per token ``u16 length, bytes, u32 rank``.
``.special`` (optional sibling): ``u32 count``, then per token ``u32 id, u16 length, UTF-8``.
"""

from __future__ import annotations

import struct
from pathlib import Path

from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab


def looks_like_quicktok(data: bytes) -> bool:
    """Whether ``data`` starts like a quicktok ``.vocab`` file (count, then a first record)."""
    if len(data) < 10:
        return False
    (count,) = struct.unpack_from("<I", data, 0)
    (length,) = struct.unpack_from("<H", data, 4)
    return 0 < count <= MAX_TOKEN_ID and 0 < length and 10 + length <= len(data)


def read_quicktok(data: bytes, path: Path) -> RawVocab:
    """Parse a quicktok ``.vocab`` file and, when present, its ``.special`` sibling.

    Raises
    ------
    VocabularyError
        When a record runs past the end of the file (truncation) or bytes are left over.
    """
    source = str(path)
    (count,) = struct.unpack_from("<I", data, 0)
    offset = 4
    unpack = struct.unpack_from
    ranks: list[int] = []
    tokens: list[bytes] = []
    try:
        for _ in range(count):
            (length,) = unpack("<H", data, offset)
            offset += 2
            tokens.append(data[offset : offset + length])
            offset += length
            (rank,) = unpack("<I", data, offset)
            offset += 4
            ranks.append(rank)
    except struct.error as exc:
        raise VocabularyError(
            f"{source}: truncated quicktok vocab: record {len(ranks) + 1} of {count} runs past "
            f"the end of the file ({len(data)} bytes)"
        ) from exc
    if offset != len(data) or max(ranks) >= MAX_TOKEN_ID:
        raise VocabularyError(
            f"{source}: not a quicktok vocab ({len(data) - offset} stray bytes after "
            f"{count} records, largest rank {max(ranks)}; ranks must be below {MAX_TOKEN_ID:,})"
        )
    raw = RawVocab([b""] * (max(ranks) + 1), source)
    for rank, token in zip(ranks, tokens):
        raw.tokens[rank] = token
    special_path = path.with_suffix(".special")
    if special_path.is_file():
        _read_special(raw, special_path)
    return raw


def _read_special(raw: RawVocab, path: Path) -> None:
    data = path.read_bytes()
    try:
        (count,) = struct.unpack_from("<I", data, 0)
        offset = 4
        for _ in range(count):
            token_id, length = struct.unpack_from("<IH", data, offset)
            offset += 6
            if token_id >= MAX_TOKEN_ID or offset + length > len(data):
                raise struct.error("record out of range")
            raw.add_token(token_id, data[offset : offset + length])
            raw.flagged_ids.add(token_id)
            raw.added_ids.add(token_id)
            offset += length
    except struct.error as exc:
        raise VocabularyError(f"{path}: truncated or corrupt quicktok special file") from exc
