"""Code points to UTF-8 bytes, the way xgrammar 0.2.8 matches them.

Grammars speak in code points; input is bytes. A literal or a class matches the UTF-8 encoding of
its code points, where surrogates (U+D800..U+DFFF) encode like any other code point (``ED A0 80``
for U+D800, as Python's ``surrogatepass``) and nothing above U+10FFFF or overlong exists: exactly
the sequences xgrammar accepts.

A set of code points is a sorted tuple of disjoint inclusive ranges, e.g. ``((0x30, 0x39),)``.
:func:`byte_sequences` turns such a set into a short list of *byte-range sequences*: each
sequence is a tuple of inclusive ``(lo, hi)`` byte ranges, one per byte, and a code point is in
the set exactly when its encoding matches one of the sequences byte by byte.
"""

from __future__ import annotations

from collections.abc import Iterable

from grammarkit.codepoints import MAX_CODEPOINT, complement, merge

CodepointRanges = tuple[tuple[int, int], ...]
ByteSequence = tuple[tuple[int, int], ...]

_LENGTH_LIMITS = (0x7F, 0x7FF, 0xFFFF, MAX_CODEPOINT)


def encode(text: str) -> bytes:
    """The UTF-8 bytes of ``text``, lone surrogates included."""
    return text.encode("utf-8", "surrogatepass")


def normalize(ranges: Iterable[tuple[int, int]]) -> CodepointRanges:
    """Sort and merge ``ranges`` (clamped to valid code points) into disjoint ranges."""
    unique = set(ranges)  # first: a class may list the same characters millions of times
    clamped = ((max(0, lo), min(MAX_CODEPOINT, hi)) for lo, hi in unique)
    return merge((lo, hi) for lo, hi in clamped if lo <= hi)


def class_codepoints(ranges: Iterable[tuple[int, int]], negated: bool) -> CodepointRanges:
    """The code points a character class matches."""
    normalized = normalize(ranges)
    return complement(normalized) if negated else normalized


def byte_sequences(ranges: CodepointRanges) -> list[ByteSequence]:
    """Byte-range sequences matching exactly the UTF-8 encodings of ``ranges``."""
    result: list[ByteSequence] = []
    stack = [r for r in reversed(ranges)]
    while stack:
        lo, hi = stack.pop()
        split = _split_point(lo, hi)
        if split is not None:
            stack.append((split + 1, hi))
            stack.append((lo, split))
            continue
        lo_bytes, hi_bytes = _encode_raw(lo), _encode_raw(hi)
        result.append(tuple(zip(lo_bytes, hi_bytes)))
    return result


def _split_point(lo: int, hi: int) -> int | None:
    """Where ``[lo, hi]`` must be cut so each part is one rectangle of byte ranges, or ``None``."""
    for limit in _LENGTH_LIMITS:
        if lo <= limit < hi:
            return limit
    length = _length(lo)
    for i in range(1, length):
        mask = (1 << (6 * i)) - 1
        if lo & ~mask != hi & ~mask:
            if lo & mask:
                return lo | mask
            if hi & mask != mask:
                return (hi & ~mask) - 1
    return None


def _length(cp: int) -> int:
    return 1 if cp <= 0x7F else 2 if cp <= 0x7FF else 3 if cp <= 0xFFFF else 4


def _encode_raw(cp: int) -> bytes:
    return chr(cp).encode("utf-8", "surrogatepass")


def decode_lead(byte: int) -> tuple[int, int] | None:
    """For a first byte: ``(payload bits, continuation bytes)``; ``None`` for a non-lead byte."""
    if byte < 0x80:
        return byte, 0
    if 0xC2 <= byte <= 0xDF:
        return byte & 0x1F, 1
    if 0xE0 <= byte <= 0xEF:
        return byte & 0x0F, 2
    if 0xF0 <= byte <= 0xF4:
        return byte & 0x07, 3
    return None


def char_start(data: bytes, offset: int) -> int:
    """Where the (possibly malformed) UTF-8 character covering byte ``offset`` starts.

    That is the nearest lead byte at most 3 bytes before ``offset``, followed only by
    continuation bytes, whose sequence is long enough to reach ``offset``; else ``offset``.
    """
    for start in range(offset - 1, max(-1, offset - 4), -1):
        lead = decode_lead(data[start])
        if lead is not None:
            return start if start + lead[1] >= offset else offset
        if not 0x80 <= data[start] <= 0xBF:
            break
    return offset
