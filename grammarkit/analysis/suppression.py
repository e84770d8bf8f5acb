"""Inline suppression comments: ``# grammarkit: ignore[GK201, GK205]`` or ``# grammarkit: ignore``.

A comment silences the listed codes (or prefixes; all codes when bare) for diagnostics starting on
its line. On the line of a rule's name it silences them for the whole rule. Errors are never
silenced.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf import ast
from grammarkit.source import SourceText

_DIRECTIVE = re.compile(r"grammarkit:\s*ignore(?:\[([^\]]*)\])?", re.IGNORECASE)

_Codes = frozenset[str] | None
"""The code prefixes a comment silences; ``None`` means every code."""


def _merge(first: _Codes, second: _Codes) -> _Codes:
    if first is None or second is None:
        return None
    return first | second


class Suppressions:
    """The suppression comments of one grammar text.

    Parameters
    ----------
    grammar
        The parsed grammar: its comments, and its rules (for rule-wide suppression).
    source
        The text, to find each comment's and each diagnostic's line.
    """

    def __init__(self, grammar: ast.GrammarAST, source: SourceText):
        self._source = source
        self._by_line: dict[int, _Codes] = {}
        for comment in grammar.comments:
            for match in _DIRECTIVE.finditer(comment.text):
                line = source.line(comment.span.start)
                codes = None if match.group(1) is None else frozenset(
                    code.strip().upper() for code in re.split(r"[,\s]+", match.group(1))
                    if code.strip())
                self._by_line[line] = _merge(self._by_line.get(line, frozenset()), codes)
        self._rules: list[tuple[int, int, _Codes]] = []
        for rule in grammar.rules if self._by_line else ():
            if rule.span is None or rule.name_span is None:
                continue
            line = source.line(rule.name_span.start)
            if line in self._by_line:
                self._rules.append((rule.span.start, rule.span.end, self._by_line[line]))
        self._rules.sort(key=lambda entry: entry[0])
        self._rule_starts = [start for start, _, _ in self._rules]

    def __bool__(self) -> bool:
        return bool(self._by_line)

    def _codes_at(self, offset: int) -> _Codes:
        codes = self._by_line.get(self._source.line(offset), frozenset())
        k = bisect.bisect_right(self._rule_starts, offset) - 1
        if k >= 0 and self._rules[k][0] <= offset < self._rules[k][1]:
            codes = _merge(codes, self._rules[k][2])
        return codes

    def silences(self, diagnostic: Diagnostic) -> bool:
        """Whether a comment silences ``diagnostic`` (never an error, never one without a span)."""
        if diagnostic.is_error or diagnostic.span is None:
            return False
        codes = self._codes_at(diagnostic.span.start)
        return codes is None or any(diagnostic.code.startswith(code) for code in codes)

    def filter(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """The diagnostics no comment silences."""
        if not self._by_line:
            return list(diagnostics)
        return [d for d in diagnostics if not self.silences(d)]
