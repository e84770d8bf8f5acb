"""Example files beside grammars: ``NAME.examples`` in a corpus format like tree-sitter's.

::

    === an empty object ===
    {}
    --- accept

    === a missing colon ===
    {"a" 1}
    --- reject 1:6

Each example is a header line ``=== title ===``, the input (every line up to the verdict line,
joined by newlines, without the newline before the verdict), and a verdict line: ``--- accept``,
``--- reject``, or ``--- reject LINE:COLUMN`` (where :meth:`Grammar.explain` must place the
failure; the column counts characters). Blank lines and ``#`` comment lines between examples are
ignored. An input line that itself starts with ``===`` or ``---`` cannot be written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grammarkit.diagnostics import Diagnostic, GrammarError, error
from grammarkit.ebnf.ast import Span
from grammarkit.source import SourceText

EXAMPLES_SUFFIX = ".examples"

_HEADER = re.compile(r"^===\s*(?P<title>.*?)\s*===\s*$")
_VERDICT = re.compile(r"^---\s*(?P<rest>.*?)\s*$")
_REJECT_AT = re.compile(r"^reject(?:\s+(?P<line>\d+):(?P<column>\d+))?$")


@dataclass(frozen=True)
class Example:
    """One example: its input and the verdict the grammar must give.

    Attributes
    ----------
    title
        The header's text.
    text
        The input.
    accept
        Whether the grammar must accept ``text``.
    position
        For a rejection, the ``(line, column)`` where matching must fail, if given.
    span
        Where the example stands in its file (header to verdict line).
    verdict_span
        The verdict line, rewritten by ``grammarkit test --update``.
    """

    title: str
    text: str
    accept: bool
    position: tuple[int, int] | None
    span: Span
    verdict_span: Span


def parse_examples(source: SourceText) -> list[Example]:
    """Every example in an examples file.

    Raises
    ------
    GrammarError
        ``GK400`` for text outside an example, ``GK401`` for an example without a verdict line,
        ``GK402`` for a malformed verdict; each located in the file.
    """
    examples: list[Example] = []
    problems: list[Diagnostic] = []
    lines = source.text.split("\n")
    starts = _line_starts(lines)
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.startswith("#"):
            index += 1
            continue
        header = _HEADER.match(line)
        if header is None:
            problems.append(error(
                "GK400", "expected an example header `=== title ===`",
                _line_span(starts, lines, index),
                "start each example with `=== title ===`; comments start with `#`"))
            index = _next_header(lines, index + 1)
            continue
        end = index + 1
        while end < len(lines) and not _VERDICT.match(lines[end]) and not _HEADER.match(lines[end]):
            end += 1
        if end == len(lines) or _HEADER.match(lines[end]):
            problems.append(error(
                "GK401", f"example `{header['title']}` has no verdict line",
                _line_span(starts, lines, index),
                "end the input with `--- accept` or `--- reject`"))
            index = end
            continue
        rest = _verdict_text(lines[end])
        verdict = _REJECT_AT.match(rest)
        verdict_span = _line_span(starts, lines, end)
        if rest != "accept" and verdict is None:
            problems.append(error(
                "GK402", f"unknown verdict `--- {rest}`", verdict_span,
                "write `--- accept`, `--- reject` or `--- reject LINE:COLUMN`"))
            index = end + 1
            continue
        position = None
        if verdict is not None and verdict["line"] is not None:
            position = (int(verdict["line"]), int(verdict["column"]))
        examples.append(Example(
            title=header["title"],
            text="\n".join(lines[index + 1:end]),
            accept=rest == "accept",
            position=position,
            span=Span(starts[index], verdict_span.end),
            verdict_span=verdict_span,
        ))
        index = end + 1
    if problems:
        raise GrammarError([d.with_source(source) for d in problems])
    return examples


def format_verdict(accept: bool, position: tuple[int, int] | None = None) -> str:
    """The verdict line for an example (without its newline)."""
    if accept:
        return "--- accept"
    return "--- reject" if position is None else f"--- reject {position[0]}:{position[1]}"


def _line_starts(lines: list[str]) -> list[int]:
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    return starts


def _line_span(starts: list[int], lines: list[str], index: int) -> Span:
    return Span(starts[index], starts[index] + len(lines[index]))


def _verdict_text(line: str) -> str:
    found = _VERDICT.match(line)
    return found["rest"] if found else ""


def _next_header(lines: list[str], index: int) -> int:
    while index < len(lines) and not _HEADER.match(lines[index]):
        index += 1
    return index
