"""Token-string to bytes schemes: GPT-2 byte-level, SentencePiece metaspace, byte fallback.

A `TokenDecoding` turns one vocabulary entry (a model's token string) into the exact bytes it
stands for in the middle of a text. Sequence-level decoder steps (``Strip``, ``Fuse``, the
metaspace prefix removal of the first token) are deliberately not applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


def _byte_level_alphabet() -> dict[int, int]:
    """GPT-2's byte -> unicode code point map (``bytes_to_unicode``)."""
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    mapping = {b: b for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = 256 + extra
            extra += 1
    return mapping


BYTE_TO_UNICODE: dict[int, str] = {b: chr(c) for b, c in _byte_level_alphabet().items()}
"""GPT-2 byte-level map: byte value -> the character that stands for it in token strings."""

# str.translate table: alphabet character -> chr(byte). Code points below 256 that are not in
# the alphabet become U+FFFF so the latin-1 encode fails and the token falls back to UTF-8,
# exactly as the `tokenizers` ByteLevel decoder does for tokens outside the alphabet.
_TRANSLATE: dict[int, str] = {b: "\uffff" for b in range(256)}
_TRANSLATE.update({ord(ch): chr(b) for b, ch in BYTE_TO_UNICODE.items()})

_BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def byte_level_bytes(token: str) -> bytes:
    """Bytes of a GPT-2 byte-level token string (UTF-8 of the string if it is not one)."""
    try:
        return token.translate(_TRANSLATE).encode("latin-1")
    except UnicodeEncodeError:
        return token.encode("utf-8")


@dataclass(frozen=True)
class TokenDecoding:
    """How a vocabulary's token strings map to bytes.

    Attributes
    ----------
    replacements : tuple of (str, str)
        String replacements applied in order (e.g. ``("▁", " ")`` for metaspace).
    byte_level : bool
        Map the result through the GPT-2 byte-level alphabet.
    byte_fallback : bool
        Tokens ``<0xNN>`` stand for the single byte ``NN``.
    """

    replacements: tuple[tuple[str, str], ...] = ()
    byte_level: bool = False
    byte_fallback: bool = False

    def decode(self, token: str) -> bytes:
        """The exact bytes of one token string."""
        if self.byte_fallback and len(token) == 6:
            match = _BYTE_PIECE.fullmatch(token)
            if match:
                return bytes([int(match.group(1), 16)])
        for old, new in self.replacements:
            token = token.replace(old, new)
        if self.byte_level:
            return byte_level_bytes(token)
        return token.encode("utf-8")

    def decode_all(self, tokens: Iterable[str]) -> list[bytes]:
        """`decode` over many token strings, with a fast path for pure byte-level."""
        if self.byte_level and not self.replacements and not self.byte_fallback:
            return [byte_level_bytes(t) for t in tokens]
        return [self.decode(t) for t in tokens]
