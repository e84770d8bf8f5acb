"""``grammarkit lint``: errors and warnings in grammars and JSON Schemas."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from grammarkit.cli.check import (
    split_check_selectors,
    stop_token_option,
    tokenizer_findings,
    tokenizer_option,
)
from grammarkit.cli.common import (
    EXIT_ERRORS,
    GBNF_SUFFIX,
    JSON_SUFFIX,
    SCHEMA_SUFFIX,
    InputError,
    JsonCommand,
    PathArgument,
    dump_json,
    echo,
    files,
    format_option,
    gbnf_hint,
    outcome,
    plural,
    read,
    root_option,
    try_load,
)

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.source import SourceText


@click.command("lint", cls=JsonCommand)
@click.argument("paths", nargs=-1, required=True,
                type=PathArgument(exists=True, allow_dash=True))
@click.option("--strict", is_flag=True, help="Exit with 1 on warnings too.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the warnings to run (default ALL).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the warnings to skip.")
@root_option
@format_option
@tokenizer_option
@stop_token_option
def command(paths: tuple[str, ...], strict: bool, select: tuple[str, ...],
            ignore: tuple[str, ...], root: str, output_format: str, tokenizer: str | None,
            stop_tokens: tuple[int, ...]) -> None:
    """Report errors and warnings in grammars (*.ebnf, llama.cpp *.gbnf) and JSON Schemas
    (*.schema.json, and any *.json file named on the command line).

    Directories are searched recursively (regular files only; others are listed as skipped
    with a GK172 note); `-` reads a grammar from standard input. A *.gbnf file is converted to
    XGrammar EBNF, then linted. With --tokenizer, grammars without errors also get the findings
    of `grammarkit check`. Exit 1 on errors (with --strict, on warnings too), 2 if a file
    cannot be read (GK171); with --format json the report is always one JSON list on stdout.
    """
    from grammarkit.diagnostics import Severity

    selected, check_selected = split_check_selectors(_codes(select))
    ignored, check_ignored = split_check_selectors(_codes(ignore))
    skipped: list[Diagnostic] = []
    diagnostics: list[Diagnostic] = []
    checked = 0
    unreadable = False
    for path in files(paths, skipped=skipped):
        if path.endswith((SCHEMA_SUFFIX, JSON_SUFFIX)):  # SchemaStore names them `x.json`
            from grammarkit.convert.json_schema import lint_schema_file  # only for schemas

            diagnostics.extend(lint_schema_file(path))
        else:
            try:
                source = read(path)
            except InputError as exc:
                diagnostics.extend(exc.diagnostics)
                unreadable = True
                continue
            with outcome(output_format, as_list=True):  # a bad --select: GK174 in the list
                found = _lint_grammar(source, root, selected, ignored)
            diagnostics.extend(found)
            if tokenizer is not None and not any(d.is_error for d in found):
                with outcome(output_format, as_list=True):  # an unreadable --tokenizer
                    diagnostics.extend(tokenizer_findings(source, root, tokenizer, stop_tokens,
                                                          check_selected, check_ignored))
        checked += 1
    diagnostics.extend(skipped)
    errors = sum(d.is_error for d in diagnostics)
    warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
    if output_format == "json":
        echo(dump_json([d.to_json() for d in diagnostics]))
    else:
        echo("".join(diagnostic.render() + "\n\n" for diagnostic in diagnostics)
             + _lint_summary(errors, warnings, checked))
    if unreadable:
        sys.exit(2)
    if errors or (strict and warnings):
        sys.exit(EXIT_ERRORS)


def _lint_grammar(source: SourceText, root: str, selected: list[str] | None,
                  ignored: list[str] | None) -> list[Diagnostic]:
    """Lint one grammar text; a GBNF file is linted as the EBNF it converts to."""
    from grammarkit.analysis.lint import lint_source
    from grammarkit.diagnostics import GrammarError
    from grammarkit.source import SourceText

    linted = source
    if source.path.endswith(GBNF_SUFFIX):
        grammar = try_load(source, root)
        if isinstance(grammar, GrammarError):
            return grammar.diagnostics
        linted = SourceText(grammar.to_ebnf(), f"{source.path} (converted to EBNF)")
    try:
        found = lint_source(linted, root=root, select=selected, ignore=ignored)
    except ValueError as exc:  # a malformed --select / --ignore entry
        raise click.BadParameter(str(exc), param_hint="'--select' / '--ignore'") from None
    if any(d.is_error for d in found) and not source.path.endswith(GBNF_SUFFIX):
        note = gbnf_hint(source, root)
        if note is not None:
            found.append(note)
    return found


def _codes(values: tuple[str, ...]) -> list[str] | None:
    """``("GK201,GK202", "GK3")`` → ``["GK201", "GK202", "GK3"]``; ``None`` when empty."""
    codes = [code.strip() for value in values for code in value.split(",") if code.strip()]
    return codes or None


def _lint_summary(errors: int, warnings: int, files: int) -> str:
    if not errors and not warnings:
        return "All checks passed."
    return (f"Found {plural(errors, 'error')} and {plural(warnings, 'warning')} "
            f"in {plural(files, 'file')}.")
