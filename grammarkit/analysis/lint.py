"""The linter: parse errors plus the GK2xx warnings of :mod:`grammarkit.analysis.rules`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from grammarkit._gc import paused_gc
from grammarkit.analysis.rules import RULES, LintContext
from grammarkit.analysis.selection import enabled_codes
from grammarkit.analysis.suppression import Suppressions
from grammarkit.automata.regex_macro import check_regex_macros
from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import ParseResult, parse
from grammarkit.source import SourceText, decode_source


def lint(
    text: str | bytes,
    path: str | None = None,
    *,
    root: str = "root",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> list[Diagnostic]:
    """Every diagnostic for grammar ``text``: its errors, then (if it has none) lint warnings.

    Parameters
    ----------
    text
        The grammar; bytes are read as UTF-8 (invalid bytes are reported, not raised).
    path
        The name shown in rendered diagnostics (default ``<string>``).
    root
        The rule derivations start from.
    select, ignore
        Code prefixes of the warnings to run or skip, as in ruff (``GK2``, ``GK205``, ``ALL``).
        Errors are always reported, and ``# grammarkit: ignore[...]`` comments cannot hide them.

    Returns
    -------
    list[Diagnostic]
        Attached to the text, so each renders with line, column and a caret snippet.

    Raises
    ------
    ValueError
        For a malformed ``select`` or ``ignore`` entry.
    """
    return lint_source(SourceText(decode_source(text), path or "<string>"), root=root,
                       select=select, ignore=ignore)


def lint_source(
    source: SourceText,
    *,
    root: str = "root",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> list[Diagnostic]:
    """What :func:`lint` reports, for a text already read (as the CLI reads files)."""
    enabled_codes((rule.code for rule in RULES), select, ignore)  # bad entries fail first
    return lint_parsed(parse(source.text, root), source, root=root, select=select, ignore=ignore)


def lint_parsed(
    result: ParseResult,
    source: SourceText,
    *,
    root: str = "root",
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> list[Diagnostic]:
    """What :func:`lint` reports, for a text already parsed (``result`` of ``source.text``).

    The language server parses each version of a document once and shares the result.
    """
    codes = enabled_codes((rule.code for rule in RULES), select, ignore)
    with paused_gc():  # the analyses build no cycles: spare collections over the new AST
        diagnostics = [*result.diagnostics, *_regex_errors(result.regex_macros)]
        if not any(d.is_error for d in diagnostics):
            warnings = _run(LintContext(result.ast, root, source, tree=True), codes)
            diagnostics.extend(Suppressions(result.ast, source).filter(warnings))
        return [d.with_source(source) for d in diagnostics]


def lint_grammar_ast(
    grammar: ast.GrammarAST,
    root: str,
    *,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
) -> list[Diagnostic]:
    """Lint warnings for an already built grammar (no text: spans may be ``None``).

    Rules that need the grammar's text (GK212) do not run. ``select`` and ``ignore`` work as in
    :func:`lint`.
    """
    codes = enabled_codes((r.code for r in RULES), select, ignore)
    with paused_gc():
        return _run(LintContext(grammar, root), codes)


def _regex_errors(macros: Sequence[ast.RegexMacro]) -> list[Diagnostic]:
    """What :func:`check_regex_macros` finds, each distinct call checked once: grammars repeat
    their patterns, and every error is located at its call, so a repeated call's errors are the
    first one's, moved to it."""
    errors_of: dict[tuple[str, bool, str | None], list[Diagnostic]] = {}
    found: list[Diagnostic] = []
    for node in macros:
        key = (node.pattern, node.json_string, node.flags)
        errors = errors_of.get(key)
        if errors is None:
            errors = errors_of[key] = check_regex_macros((node,))
            found.extend(errors)
        else:
            found.extend(replace(d, span=node.span) for d in errors)
    return found


def _run(context: LintContext, codes: Sequence[str]) -> list[Diagnostic]:
    wanted = set(codes)
    found = [d for rule in RULES if rule.code in wanted for d in rule.check(context)]
    return sorted(found, key=lambda d: (d.span.start if d.span else -1, d.code))
