"""Linting a document again after an edit, rerunning the rule-local checks only where it changed.

Some lint rules judge each grammar rule on its own (an empty class, a duplicate alternative,
overlapping class ranges, a huge repetition bound): what they find in a chunk of the text
(:class:`~grammarkit.authoring.incremental.Chunk`) depends on the chunk's text alone, so it is
kept per chunk and moved with it. The rules about the whole grammar (unused rules, rules that
never complete, nullable loops, left recursion, lookaheads, lazy rules, hex escapes) run on the
whole grammar every time. The result is exactly :func:`~grammarkit.analysis.lint.lint_parsed`'s
(the incremental parser's property test compares them).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import replace

from grammarkit.analysis.rules import RULES, LintContext
from grammarkit.analysis.suppression import Suppressions
from grammarkit.authoring.incremental import Chunk, IncrementalParse
from grammarkit.automata.regex_macro import check_regex_macros
from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf import ast
from grammarkit.source import SourceText

LOCAL_RULES = frozenset({"GK204", "GK207", "GK208", "GK210"})
"""The lint rules whose findings in one grammar rule depend on that rule alone."""

_POSITIONED = frozenset({"GK207"})
"""Local rules whose messages name a line and column (found again when their chunk moves)."""


class IncrementalLinter:
    """Lints successive versions of one document, keeping each chunk's rule-local findings.

    Parameters
    ----------
    root
        The root rule's name.
    cold_chunks
        When more chunks than this are new, the local rules run once on the whole grammar and
        their findings are shared out to the chunks (faster than one run per chunk).
    """

    def __init__(self, root: str = "root", cold_chunks: int = 50):
        self.root = root
        self.cold_chunks = cold_chunks
        self._local: dict[str, tuple[int, list[Diagnostic]]] = {}
        self.relinted = 0
        """How many chunks the last :meth:`lint` ran the local rules on."""

    def lint(self, parsed: IncrementalParse, source: SourceText) -> list[Diagnostic]:
        """What :func:`~grammarkit.analysis.lint.lint_parsed` returns for ``parsed.result``.

        ``parsed`` is the incremental parser's parse of ``source``'s text. Its rules are
        needed only when there is no error (the lint rules run only then).
        """
        self.relinted = 0
        diagnostics = [*parsed.diagnostics, *check_regex_macros(parsed.regex_macros)]
        if not any(d.is_error for d in diagnostics):
            result = parsed.result
            local = self._local_findings(source, parsed.chunks)
            context = LintContext(result.ast, self.root, source)
            found = [d for rule in RULES for d in (
                local.get(rule.code, ()) if rule.code in LOCAL_RULES else rule.check(context))]
            found.sort(key=lambda d: (d.span.start if d.span else -1, d.code))
            diagnostics.extend(Suppressions(result.ast, source).filter(found))
        return [d.with_source(source) for d in diagnostics]

    def _local_findings(self, source: SourceText, chunks: list[Chunk]
                        ) -> dict[str, list[Diagnostic]]:
        """The local rules' findings, by code, in the order the whole grammar's run gives."""
        kept: dict[str, tuple[int, list[Diagnostic]]] = {}
        by_code: dict[str, list[Diagnostic]] = {}
        if sum(chunk.text not in self._local for chunk in chunks) > self.cold_chunks:
            kept = _shared_out(chunks, self.root, source)
            self.relinted = len(chunks)
        for chunk in chunks:
            entry = kept.get(chunk.text) or self._local.get(chunk.text)
            if entry is not None and entry[0] != chunk.start:
                moved = chunk.start - entry[0]
                if any(d.code in _POSITIONED for d in entry[1]):
                    entry = None
                else:
                    entry = (chunk.start, [_moved(d, moved) for d in entry[1]])
            if entry is None:
                entry = (chunk.start, _check(chunk.rules, self.root, source))
                self.relinted += 1
            kept[chunk.text] = entry
            for d in entry[1]:
                by_code.setdefault(d.code, []).append(d)
        self._local = kept
        return by_code


def _check(rules: tuple[ast.Rule, ...], root: str, source: SourceText) -> list[Diagnostic]:
    """The local rules' findings in ``rules``, in rule order."""
    if not rules:
        return []
    context = LintContext(ast.GrammarAST(rules), root, source)
    return [d for rule in RULES if rule.code in LOCAL_RULES for d in rule.check(context)]


def _shared_out(chunks: list[Chunk], root: str, source: SourceText
                ) -> dict[str, tuple[int, list[Diagnostic]]]:
    """The local rules' findings in every chunk, from one run on all their rules."""
    starts = [chunk.start for chunk in chunks]
    found: list[list[Diagnostic]] = [[] for _ in chunks]
    for d in _check(tuple(rule for chunk in chunks for rule in chunk.rules), root, source):
        found[max(bisect_right(starts, d.span.start if d.span else 0) - 1, 0)].append(d)
    return {chunk.text: (chunk.start, findings) for chunk, findings in zip(chunks, found)}


def _moved(d: Diagnostic, delta: int) -> Diagnostic:
    if d.span is None:
        return d
    return replace(d, span=ast.Span(d.span.start + delta, d.span.end + delta))
