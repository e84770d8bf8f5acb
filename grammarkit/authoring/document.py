"""One grammar text as an editor sees it: rules, references, diagnostics, fixes, hover facts.

Everything the language server answers is computed here, from character offsets, with no
protocol types, so it is tested directly; :mod:`grammarkit.authoring.language_server` only
converts positions and wires the LSP requests. A half-typed grammar is the normal case: the
parser keeps every rule that parses, and each query works on those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from grammarkit.analysis.charset import CharSet
from grammarkit.analysis.lint import lint_parsed
from grammarkit.analysis.properties import GrammarProperties
from grammarkit.authoring.incremental import IncrementalParse, IncrementalParser
from grammarkit.authoring.incremental_lint import IncrementalLinter
from grammarkit.codepoints import MAX_CODEPOINT
from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import ParseResult, parse
from grammarkit.ebnf.printer import print_rule
from grammarkit.source import SourceText

MACROS = ("TagDispatch", "TokenTagDispatch", "Regex", "Substring", "Token", "ExcludeToken")
"""Macro names offered by completion."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_DID_YOU_MEAN = re.compile(r"^did you mean `([^`]+)`\?$")
_WRITE = re.compile(r"^write `([^`]+)`$")


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``new_text``."""

    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A mechanical fix of one diagnostic."""

    title: str
    diagnostic: Diagnostic
    edits: tuple[Edit, ...]


class DocumentHistory:
    """What one open document keeps from version to version: its incremental parser and linter.

    Parameters
    ----------
    root
        The root rule's name.
    """

    def __init__(self, root: str = "root"):
        self.parser = IncrementalParser(root)
        self.linter = IncrementalLinter(root)


class GrammarDocument:
    """A grammar text and everything derived from it (each computed on first use).

    Parameters
    ----------
    text
        The whole document.
    path
        Its name in diagnostics.
    root
        The root rule's name.
    history
        The parser and linter of earlier versions of this document (an editor's), whose work
        on the rules an edit did not touch is reused; by default everything is computed anew.
    """

    def __init__(self, text: str, path: str = "<string>", root: str = "root",
                 history: DocumentHistory | None = None):
        if history is not None and history.parser.root != root:
            raise ValueError(f"the history's root is `{history.parser.root}`, not `{root}`")
        self.text = text
        self.source = SourceText(text, path)
        self.root = root
        self._history = history

    @cached_property
    def _incremental(self) -> IncrementalParse | None:
        return None if self._history is None else self._history.parser.update(self.text)

    @cached_property
    def _parsed(self) -> ParseResult:
        if self._incremental is None:
            return parse(self.text, self.root)
        return self._incremental.result

    @cached_property
    def rules(self) -> tuple[ast.Rule, ...]:
        """The rules that parse, in source order."""
        return self._parsed.ast.rules

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        """Errors and lint warnings, as ``grammarkit lint`` reports them."""
        if self._history is None or self._incremental is None:
            return lint_parsed(self._parsed, self.source, root=self.root)
        return self._history.linter.lint(self._incremental, self.source)

    # -- names -------------------------------------------------------------------------------
    @cached_property
    def definitions(self) -> dict[str, ast.Span]:
        """Each rule name's defining occurrence (the first definition of a duplicated name)."""
        found: dict[str, ast.Span] = {}
        for rule in self.rules:
            if rule.name_span is not None:
                found.setdefault(rule.name, rule.name_span)
        return found

    @cached_property
    def references(self) -> list[tuple[str, ast.Span]]:
        """Every use of a rule name, in source order (``TagDispatch`` targets included)."""
        found = []
        for rule in self.rules:
            bodies = [rule.body] if rule.lookahead is None else [rule.body, rule.lookahead]
            for body in bodies:
                for node in ast.walk(body):
                    if isinstance(node, ast.RuleRef) and node.span is not None:
                        found.append((node.name, node.span))
                    elif isinstance(node, ast.TagDispatch | ast.TokenTagDispatch):
                        found.extend(self._dispatch_targets(node))
        return sorted(found, key=lambda item: item[1].start)

    def _dispatch_targets(self, node: ast.TagDispatch | ast.TokenTagDispatch
                          ) -> list[tuple[str, ast.Span]]:
        """The spans of a dispatch macro's rule names, found in its source text."""
        if node.span is None:
            return []
        targets = {name for _, name in node.tags}
        found = []
        for match in _NAME.finditer(self.text, node.span.start, node.span.end):
            if match.group() in targets and not self._inside_string(match.start(), node.span):
                found.append((match.group(), ast.Span(match.start(), match.end())))
        return found

    def _inside_string(self, offset: int, within: ast.Span) -> bool:
        quotes = 0
        i = within.start
        while i < offset:
            if self.text[i] == "\\":
                i += 2
                continue
            quotes += self.text[i] == '"'
            i += 1
        return quotes % 2 == 1

    def name_at(self, offset: int) -> str | None:
        """The rule name defined or referenced at ``offset``, if any."""
        for name, span in self.definitions.items():
            if span.start <= offset <= span.end:
                return name
        for name, span in self.references:
            if span.start <= offset <= span.end:
                return name
        return None

    def occurrences(self, name: str, include_definition: bool = True) -> list[ast.Span]:
        """Every reference to ``name`` (and its definitions), in source order."""
        spans = [span for ref, span in self.references if ref == name]
        if include_definition:
            spans += [rule.name_span for rule in self.rules
                      if rule.name == name and rule.name_span is not None]
        return sorted(spans, key=lambda span: span.start)

    def rename(self, offset: int, new_name: str) -> list[Edit] | None:
        """The edits renaming the rule at ``offset`` everywhere; ``None`` if there is none.

        Raises
        ------
        ValueError
            If ``new_name`` is not a valid rule name or is already taken.
        """
        name = self.name_at(offset)
        if name is None:
            return None
        if _NAME.fullmatch(new_name) is None:
            raise ValueError(f"`{new_name}` is not a valid rule name")
        if new_name != name and new_name in self.definitions:
            raise ValueError(f"a rule `{new_name}` already exists")
        return [Edit(span.start, span.end, new_name) for span in self.occurrences(name)]

    # -- editor helpers ----------------------------------------------------------------------
    def hover(self, offset: int) -> str | None:
        """Markdown about the rule at ``offset``: definition, nullable, first characters, sample."""
        name = self.name_at(offset)
        rule = next((r for r in self.rules if r.name == name), None)
        if rule is None:
            return None
        facts = self._properties
        node = facts.graph.index(rule.body)
        lines = ["```ebnf", print_rule(rule), "```",
                 f"- nullable: {'yes' if facts.nullable[node] else 'no'}",
                 f"- first characters: {_charset_text(facts.first[node])}"]
        example = _sample(facts.grammar, rule.name)
        if example is not None:
            lines.append(f"- example: `{example}`" if example else "- example: the empty string")
        return "\n".join(lines)

    @cached_property
    def _properties(self) -> GrammarProperties:
        return GrammarProperties(ast.GrammarAST(self.rules), self.root)

    def completions(self) -> list[tuple[str, str]]:
        """``(label, kind)`` pairs: rule names (``"rule"``), then macros (``"macro"``)."""
        return [(name, "rule") for name in self.definitions] + [(m, "macro") for m in MACROS]

    def fixes(self) -> list[Fix]:
        """A fix for each diagnostic that has a mechanical one."""
        return [fix for d in self.diagnostics if (fix := self._fix(d)) is not None]

    def _fix(self, diagnostic: Diagnostic) -> Fix | None:
        span, hint = diagnostic.span, diagnostic.hint or ""
        if span is None:
            return None
        if diagnostic.code == "GK103" and (match := _DID_YOU_MEAN.match(hint)):
            return Fix(f"Replace with `{match[1]}`", diagnostic,
                       (Edit(span.start, span.end, match[1]),))
        if diagnostic.code == "GK108" and (match := _WRITE.match(hint)):
            return Fix(f"Swap the range to `{match[1]}`", diagnostic,
                       (Edit(span.start, span.end, match[1]),))
        if diagnostic.code == "GK110" and (match := _WRITE.match(hint)):
            braces = self._enclosing_braces(span.start)
            if braces is not None:
                return Fix(f"Swap the bounds to `{match[1]}`", diagnostic,
                           (Edit(braces.start, braces.end, match[1]),))
        if (diagnostic.code == "GK101" and self.text[span.start:span.end] == ","
                and self.text[:span.start].rstrip().endswith("{")):
            return Fix("Write the lower bound `0`", diagnostic, (Edit(span.start, span.start, "0"),))
        return None

    def _enclosing_braces(self, offset: int) -> ast.Span | None:
        start = self.text.rfind("{", 0, offset + 1)
        end = self.text.find("}", offset)
        if start < 0 or end < 0 or "\n" in self.text[start:end]:
            return None
        return ast.Span(start, end + 1)

    def formatted(self) -> str | None:
        """The canonical layout of the document; ``None`` when it has errors."""
        from grammarkit.diagnostics import GrammarError
        from grammarkit.grammar import Grammar

        try:
            return Grammar.from_ebnf(self.text, self.root).to_ebnf()
        except GrammarError:
            return None


def _sample(grammar: ast.GrammarAST, rule: str) -> str | None:
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar
    from grammarkit.sample import sample

    try:
        found = sample(Grammar(grammar, rule), n=1, seed=0)
    except (GrammarError, RecursionError, ValueError):
        return None
    if not found:
        return None
    text = found[0]
    return text if len(text) <= 80 else text[:79] + "…"


def _charset_text(charset: CharSet) -> str:
    ranges = [(lo, min(hi, MAX_CODEPOINT)) for lo, hi in charset.intervals if lo <= MAX_CODEPOINT]
    if not ranges:
        return "none (only the empty string, or tokens)"
    shown = []
    for lo, hi in ranges[:8]:
        shown.append(_char(lo) if lo == hi else f"{_char(lo)}-{_char(hi)}")
    more = " …" if len(ranges) > 8 else ""
    return "`[" + "".join(shown) + "]`" + more


def _char(code: int) -> str:
    c = chr(code)
    if c in "\\]-^":
        return "\\" + c
    return c if c.isprintable() and code < 0x7F else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"
