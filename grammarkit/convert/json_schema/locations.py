"""Where a JSON pointer sits in schema text, so diagnostics can show a line, a column and a caret.

:func:`pointer_spans` scans (already validated) JSON text once and records, for every object
member, the span of its key, and for every array element, the span of its first character. A
keyword's diagnostic then points at the keyword itself (``"uniqueItems"``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from grammarkit.ebnf.ast import Span

_WHITESPACE = " \t\n\r"
_VALUE_END = _WHITESPACE + ",]}"


@dataclass
class _Container:
    """An open array or object: its pointer, the member whose value comes next (objects), and
    the index of the next element (arrays)."""

    pointer: str
    is_object: bool
    member: str | None = None
    position: int = 0


def pointer_spans(text: str) -> dict[str, Span]:
    """Spans of the members and elements of the JSON ``text``, by JSON pointer."""
    spans: dict[str, Span] = {}
    stack: list[_Container] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char in _WHITESPACE or char == ":":
            index += 1
            continue
        if char == ",":
            stack[-1].member = None
            index += 1
            continue
        if char in "]}":
            stack.pop()
            index += 1
            continue
        start = index
        index = _string_end(text, index) if char == '"' else (
            index + 1 if char in "[{" else _scalar_end(text, index))
        top = stack[-1] if stack else None
        if top is not None and top.is_object and top.member is None:
            top.member = f"{top.pointer}/{_escape(json.loads(text[start:index]))}"
            spans[top.member] = Span(start, index)
            continue
        if top is None:
            pointer = ""
        elif top.is_object:
            assert top.member is not None
            pointer = top.member
        else:
            pointer = f"{top.pointer}/{top.position}"
            spans[pointer] = Span(start, start + 1)
            top.position += 1
        if char in "[{":
            stack.append(_Container(pointer, char == "{"))
    return spans


def _string_end(text: str, start: int) -> int:
    index = start + 1
    while text[index] != '"':
        index += 2 if text[index] == "\\" else 1
    return index + 1


def _scalar_end(text: str, start: int) -> int:
    index = start
    while index < len(text) and text[index] not in _VALUE_END:
        index += 1
    return index


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def locate(spans: dict[str, Span], pointer: str) -> Span:
    """The span for ``pointer``, or for its nearest located ancestor (the text's start for the
    root)."""
    probe = pointer
    while probe:
        if probe in spans:
            return spans[probe]
        probe = probe[: probe.rfind("/")]
    return Span(0, 1)
