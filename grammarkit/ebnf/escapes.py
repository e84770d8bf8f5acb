"""Escape sequences of the dialect: decoding (as xgrammar's lexer does) and canonical encoding."""

from __future__ import annotations

SIMPLE_ESCAPES: dict[str, int] = {
    "'": ord("'"),
    '"': ord('"'),
    "?": ord("?"),
    "\\": ord("\\"),
    "/": ord("/"),
    "a": 0x07,
    "b": 0x08,
    "f": 0x0C,
    "n": 0x0A,
    "r": 0x0D,
    "t": 0x09,
    "v": 0x0B,
    "0": 0x00,
    "e": 0x1B,
}
"""Escapes valid in string literals and classes: ``\\' \\" \\? \\\\ \\/ \\a \\b \\f \\n \\r \\t \\v \\0 \\e``."""

CLASS_ESCAPES: dict[str, int] = {c: ord(c) for c in "^$\\.*+?()[]{}|/-"}
"""Further escapes valid only inside a character class."""

CLASS_SPECIAL_ESCAPES = frozenset("dDsSwW")
"""``\\d``-style escapes: recognised inside classes, then rejected by the parser."""

_HEX = frozenset("0123456789abcdefABCDEF")

MAX_CODEPOINT = 0x10FFFF


def decode_escape(text: str, i: int, in_class: bool = False) -> tuple[int, int] | None:
    """Decode the escape starting at ``text[i] == "\\\\"``.

    Returns ``(code point, length in characters)`` or ``None`` if the escape is invalid.
    ``\\x`` takes every hex digit that follows (so ``"\\x41B"`` is U+041B), ``\\u`` exactly four
    and ``\\U`` exactly eight, as in xgrammar.
    """
    if i + 1 >= len(text):
        return None
    c = text[i + 1]
    if in_class and c in CLASS_ESCAPES:
        return CLASS_ESCAPES[c], 2
    if c in SIMPLE_ESCAPES:
        return SIMPLE_ESCAPES[c], 2
    if c == "x":
        j = i + 2
        while j < len(text) and text[j] in _HEX:
            j += 1
        if j == i + 2:
            return None
        return int(text[i + 2 : j], 16), j - i
    if c in "uU":
        width = 4 if c == "u" else 8
        digits = text[i + 2 : i + 2 + width]
        if len(digits) != width or not all(d in _HEX for d in digits):
            return None
        return int(digits, 16), width + 2
    return None


_PRINT_ESCAPES = {
    0x22: '\\"',
    0x5C: "\\\\",
    0x07: "\\a",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
    0x0B: "\\v",
    0x00: "\\0",
    0x1B: "\\e",
}


def _escape_codepoint(cp: int, extra: dict[int, str]) -> str:
    if cp in extra:
        return extra[cp]
    if cp in _PRINT_ESCAPES:
        return _PRINT_ESCAPES[cp]
    if 0x20 <= cp <= 0x7E:
        return chr(cp)
    if cp > 0x7E and cp <= MAX_CODEPOINT and chr(cp).isprintable() and not 0xD800 <= cp <= 0xDFFF:
        return chr(cp)
    if cp <= 0xFF:
        # \x is greedy: always use \u so that a following hex digit is not swallowed.
        return f"\\u{cp:04x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def quote_string(value: str) -> str:
    """``value`` as a double-quoted literal that the dialect decodes back to ``value``."""
    return '"' + "".join(_escape_codepoint(ord(c), {}) for c in value) + '"'


_CLASS_EXTRA = {**{ord(c): "\\" + c for c in "]\\^-["}, ord('"'): '"'}


def class_char(cp: int) -> str:
    """Code point ``cp`` spelled for use inside a character class (a ``"`` needs no escape)."""
    return _escape_codepoint(cp, _CLASS_EXTRA)
