"""Where a JSON pointer sits in schema text, so diagnostics can show a line, a column and a caret.

:func:`pointer_spans` walks (already validated) JSON text down the paths of the pointers asked
for and records, for each object member on them, the span of its key, and for each array
element, the span of its first character. A keyword's diagnostic then points at the keyword
itself (``"uniqueItems"``). Values off those paths are skipped by the C JSON scanner, so a
diagnostic costs about one parse of the text, however large the schema.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

from grammarkit.ebnf.ast import Span

_scanstring: Callable[[str, int], tuple[str, int]] = (
    json.decoder.scanstring)  # type: ignore[attr-defined]  # (not in typeshed)
"""The C scanner of a JSON string's rest (after its opening quote): its value and end."""

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)
"""Skips values: numbers stay text (an integer of 5,000 digits is no error here)."""


def pointer_spans(text: str, pointers: Iterable[str]) -> dict[str, Span]:
    """Spans of the members and elements of the JSON ``text`` named by ``pointers`` and by
    their ancestors, by JSON pointer (a pointer the text lacks has no entry)."""
    wanted: set[str] = set()
    for pointer in pointers:
        while pointer and pointer not in wanted:
            wanted.add(pointer)
            pointer = pointer[: pointer.rfind("/")]
    spans: dict[str, Span] = {}
    if wanted:
        _walk(text, _skip_space(text, 0), "", wanted, spans)
    return spans


def _skip_space(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _walk(text: str, index: int, pointer: str, wanted: set[str], spans: dict[str, Span]) -> int:
    """Record the wanted spans inside the value at ``index``; return the index after it. One
    frame per level on the wanted paths (schemas are at most 256 levels deep)."""
    opening = text[index]
    if opening not in "[{":
        return _DECODER.raw_decode(text, index)[1]
    index = _skip_space(text, index + 1)
    position = 0
    while text[index] not in "]}":
        if opening == "{":
            key, end = _scanstring(text, index + 1)
            child = f"{pointer}/{_escape(key)}"
            if child in wanted:
                spans[child] = Span(index, end)
            index = _skip_space(text, _skip_space(text, end) + 1)  # past the colon
        else:
            child = f"{pointer}/{position}"
            position += 1
            if child in wanted:
                spans[child] = Span(index, index + 1)
        index = _skip_space(text, _walk(text, index, child, wanted, spans) if child in wanted
                            else _DECODER.raw_decode(text, index)[1])
        if text[index] == ",":
            index = _skip_space(text, index + 1)
    return index + 1


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
