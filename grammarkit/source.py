"""Source texts and positions: character offsets to 1-based line and column (and byte column)."""

from __future__ import annotations

import bisect
import os
import re
import sys
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True)
class Position:
    """A 1-based line and column; ``byte_column`` counts UTF-8 bytes as xgrammar does."""

    line: int
    column: int
    byte_column: int


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class SourceText:
    """A text with a name (a path, ``<stdin>`` or ``<string>``) and a line index.

    Line breaks are ``\\n``, ``\\r\\n`` and a lone ``\\r``, as in xgrammar's lexer.
    """

    text: str
    path: str = "<string>"

    @cached_property
    def _line_starts(self) -> list[int]:
        """Where each line starts (found when a position is first asked for)."""
        return [0, *(m.end() for m in _LINE_BREAK.finditer(self.text))]

    def position(self, offset: int) -> Position:
        """The line and column of character ``offset``."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self._line_starts, offset) - 1
        start = self._line_starts[index]
        prefix = self.text[start:offset]
        byte_column = len(prefix.encode("utf-8", "surrogatepass")) + 1
        return Position(index + 1, offset - start + 1, byte_column)

    def line(self, offset: int) -> int:
        """The 1-based line of character ``offset`` (what :meth:`position` says, cheaper)."""
        return bisect.bisect_right(self._line_starts, max(0, min(offset, len(self.text))))

    def line_text(self, line: int) -> str:
        """The text of 1-based ``line`` without its line break."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] if line < len(self._line_starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")

    def offset(self, line: int, column: int) -> int:
        """The character offset of a 1-based line and character column."""
        return self._line_starts[line - 1] + column - 1


def decode_source(text: str | bytes) -> str:
    """Grammar text as ``str``; undecodable bytes survive as lone surrogates (then diagnosed)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text).decode("utf-8", "surrogateescape")
    return text


def read_source(path: str | os.PathLike[str]) -> SourceText:
    """Read a grammar file (``-`` for standard input) as a :class:`SourceText`."""
    if str(path) == "-":
        return SourceText(decode_source(sys.stdin.buffer.read()), "<stdin>")
    with open(path, "rb") as f:
        return SourceText(decode_source(f.read()), str(path))
