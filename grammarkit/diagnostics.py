"""Diagnostics: a stable code, a severity, a message, a span and a hint, rendered like a compiler.

Text form::

    grammar.ebnf:3:12: GK103 rule "valu" is not defined
      |
    3 | root ::= "[" valu "]"
      |              ^^^^
      = help: did you mean "value"?
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from grammarkit.ebnf.ast import Span
from grammarkit.source import Position, SourceText

_CONTEXT = 80
"""Characters of source shown on each side of a diagnostic's position."""

_VISIBLE_CONTROLS = {c: 0x2400 + c for c in range(0x20)}
"""Control characters in a snippet are shown as their Unicode control pictures (NUL as U+2400)."""

MAX_DIAGNOSTICS = 200
"""At most this many diagnostics are reported for one input; a GK100 note says how many more."""


class Severity(str, enum.Enum):
    """How bad a diagnostic is: errors make a grammar unusable, warnings do not."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Diagnostic:
    """One finding about a grammar.

    Parameters
    ----------
    code
        Stable identifier, ``GK1xx`` for errors and ``GK2xx`` for warnings (see docs/diagnostics.md).
    severity
        :class:`Severity`.
    message
        One line saying what is wrong.
    span
        Where, as character offsets into ``source``; ``None`` for whole-input findings.
    hint
        One line saying how to fix it, or ``None``.
    source
        The text the span points into, used for line/column and the caret snippet.
    pointer
        For JSON Schema inputs: the JSON pointer of the offending keyword.
    """

    code: str
    severity: Severity
    message: str
    span: Span | None = None
    hint: str | None = None
    source: SourceText | None = None
    pointer: str | None = None

    @property
    def position(self) -> Position | None:
        """The 1-based line and column where the span starts, if known."""
        if self.span is None or self.source is None:
            return None
        return self.source.position(self.span.start)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def with_source(self, source: SourceText) -> Diagnostic:
        """This diagnostic, attached to ``source``."""
        return replace(self, source=source)

    def headline(self) -> str:
        """``path:line:col: CODE message``."""
        return self._headline(self.position)

    def _headline(self, pos: Position | None) -> str:
        path = self.source.path if self.source is not None else "<input>"
        where = f"{path}:{pos.line}:{pos.column}" if pos else path
        pointer = f" (at {self.pointer})" if self.pointer is not None else ""
        return f"{where}: {self.code} {self.message}{pointer}"

    def render(self) -> str:
        """The full text form: headline, source line with a caret under the span, and help."""
        pos = self.position
        lines = [self._headline(pos)]
        if pos is not None and self.source is not None and self.span is not None:
            text = self.source.line_text(pos.line).expandtabs(1).translate(_VISIBLE_CONTROLS)
            end = self.source.position(max(self.span.end, self.span.start))
            last = end.column if end.line == pos.line else len(text) + 1
            width = max(1, min(last - pos.column, len(text) - pos.column + 1))
            # Long lines are shown as a window around the span.
            left = max(0, pos.column - 1 - _CONTEXT)
            shown = text[left : pos.column - 1 + _CONTEXT]
            prefix = "..." if left else ""
            gutter = " " * len(str(pos.line))
            lines.append(f"{gutter} |")
            lines.append(f"{pos.line} | {prefix}{shown}")
            caret = " " * (len(prefix) + pos.column - 1 - left) + "^" * min(width, _CONTEXT)
            lines.append(f"{gutter} | {caret}")
        if self.hint:
            lines.append(f"  = help: {self.hint}")
        if pos is not None and pos.byte_column != pos.column:
            lines.append(f"  = note: byte column {pos.byte_column} (xgrammar counts bytes)")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: code, severity, message, hint, path, line, column, byte_column, span."""
        pos = self.position
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "hint": self.hint,
            "path": self.source.path if self.source is not None else None,
            "line": pos.line if pos else None,
            "column": pos.column if pos else None,
            "byte_column": pos.byte_column if pos else None,
            "span": [self.span.start, self.span.end] if self.span else None,
            "pointer": self.pointer,
        }


def error(code: str, message: str, span: Span | None, hint: str | None = None) -> Diagnostic:
    """An error diagnostic."""
    return Diagnostic(code, Severity.ERROR, message, span, hint)


def warning(code: str, message: str, span: Span | None, hint: str | None = None) -> Diagnostic:
    """A warning diagnostic."""
    return Diagnostic(code, Severity.WARNING, message, span, hint)


def render_all(diagnostics: Iterable[Diagnostic]) -> str:
    """All diagnostics in text form, separated by blank lines."""
    return "\n\n".join(d.render() for d in diagnostics)


def to_json(diagnostics: Iterable[Diagnostic]) -> str:
    """All diagnostics as a JSON array."""
    return json.dumps([d.to_json() for d in diagnostics], indent=2, ensure_ascii=False)


class GrammarError(ValueError):
    """A grammar could not be built; ``diagnostics`` holds every error found (and warnings)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.is_error] or diagnostics
        first = errors[0].headline() if errors else "invalid grammar"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(first + more)

    def render(self) -> str:
        return render_all(self.diagnostics)

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle as ``cls(*self.args)``, but ``args`` holds the message, not the
        # diagnostics: rebuild from the message and the attributes instead (any subclass too).
        return _restore_error, (type(self), self.args, self.__dict__)


def _restore_error(cls: type[GrammarError], args: tuple[Any, ...], state: dict[str, Any]
                   ) -> GrammarError:
    """Unpickle a :class:`GrammarError` (or subclass) without calling its ``__init__``."""
    error = cls.__new__(cls)
    ValueError.__init__(error, *args)
    error.__dict__.update(state)
    return error
