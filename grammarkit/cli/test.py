"""``grammarkit test``: example files beside grammars, and grammar coverage."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    CommandFailed,
    InputError,
    JsonCommand,
    PathArgument,
    dump_json,
    echo,
    format_option,
    outcome,
    plural,
    read,
    root_option,
    try_load,
    write_file,
)

if TYPE_CHECKING:
    from grammarkit.authoring.coverage import Coverage
    from grammarkit.authoring.example_tests import Outcome
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText


EMPTY: dict[str, Any] = {"path": None, "grammar": None, "passed": 0, "failed": []}
"""``--format json``: the keys of an examples file's report, for a failure that stops the run."""


@click.command("test", cls=JsonCommand, json_fields=EMPTY, json_in_list=True)
@click.argument("paths", nargs=-1, required=True, type=PathArgument(exists=True))
@click.option("--update", is_flag=True,
              help="Rewrite each example's verdict line to what the grammar says (review the diff).")
@click.option("--coverage", "show_coverage", is_flag=True,
              help="Report which alternatives, repetition branches and class ranges the accepted "
                   "examples exercise.")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="PERCENT",
              help="Exit with 1 when a grammar's coverage is below PERCENT (implies --coverage).")
@root_option
@format_option
def command(paths: tuple[str, ...], update: bool, show_coverage: bool, fail_under: float | None,
            root: str, output_format: str) -> None:
    """Run the examples in NAME.examples files against NAME.ebnf, NAME.gbnf or NAME.schema.json.

    PATHS are examples files, grammar files (their examples file is used; a grammar without
    one is skipped with a note) or directories (searched for *.examples). An examples file holds examples like

    \b
        === an empty object ===
        {}
        --- accept
    \b
        === a missing colon ===
        {"a" 1}
        --- reject 1:6

    `--- reject LINE:COLUMN` also checks where matching fails. Exit 1 when an example fails
    (or coverage is below --fail-under).
    """
    from grammarkit.authoring.coverage import Coverage
    from grammarkit.authoring.derivation import DerivationTooLarge
    from grammarkit.authoring.example_tests import run_examples, updated_text
    from grammarkit.automata.earley import MatchTimeout

    show_coverage = show_coverage or fail_under is not None
    with outcome(output_format, in_list=True, **EMPTY):
        reports: list[dict[str, Any]] = []
        failed = under = 0
        files = _example_files(paths)
        for examples_path in files:
            source = read(str(examples_path))
            grammar_path, grammar, examples = _load(examples_path, source, root)
            try:
                outcomes = run_examples(grammar, examples)
            except MatchTimeout as exc:
                raise InputError(f"{examples_path}: an example is too long or the grammar too "
                                 f"ambiguous to match: {exc.diagnostic.message}") from None
            report: dict[str, Any] = {
                "path": str(examples_path), "grammar": str(grammar_path),
                "passed": sum(o.passed for o in outcomes),
                "failed": [_failure_json(source, o) for o in outcomes if not o.passed],
            }
            if update:
                new_text = updated_text(source, outcomes)
                if new_text != source.text:
                    write_file(str(examples_path), new_text.encode("utf-8"))
                    report["updated"] = True
            else:
                failed += len(report["failed"])
            if show_coverage:
                coverage = Coverage.of(grammar.ast, grammar.root)
                accepted = [o.example.text for o in outcomes if o.accepted]
                try:
                    coverage.record(grammar.ast, grammar.root, accepted)
                except DerivationTooLarge:
                    raise InputError(f"{examples_path}: an example is too long or the grammar too "
                                     "ambiguous to measure coverage") from None
                report["coverage"] = coverage.to_json(grammar.source)
                report["_coverage"] = (coverage, grammar.source)
                if fail_under is not None and coverage.percent < fail_under:
                    under += 1
                    report["below"] = fail_under
            reports.append(report)
    if output_format == "json":
        echo(dump_json([{k: v for k, v in r.items() if not k.startswith("_") and k != "below"}
                        for r in reports]))
    else:
        for report in reports:
            _print_text(report, update)
    if failed or under:
        sys.exit(EXIT_ERRORS)


def _example_files(paths: tuple[str, ...]) -> list[Path]:
    from grammarkit.authoring.example_tests import examples_for
    from grammarkit.authoring.examples import EXAMPLES_SUFFIX

    found: list[Path] = []
    searched = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            searched.append(name)
            found.extend(sorted(p for p in path.rglob("*" + EXAMPLES_SUFFIX) if p.is_file()))
        elif path.name.endswith(EXAMPLES_SUFFIX):
            found.append(path)
        elif examples_for(path).is_file():
            found.append(examples_for(path))
        else:  # pre-commit passes every changed grammar, with or without examples
            echo(f"note: skipping {path}: no examples file {examples_for(path)}", err=True)
    if not found and searched:
        raise InputError("no *.examples files found in " + ", ".join(searched))
    return list(dict.fromkeys(found))


def _load(examples_path: Path, source: SourceText,
          root: str) -> tuple[Path, Grammar, list[Any]]:
    """The grammar beside ``examples_path`` and its parsed examples; errors exit."""
    from grammarkit.authoring.example_tests import grammar_for
    from grammarkit.authoring.examples import parse_examples
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    grammar_path = grammar_for(examples_path)
    if grammar_path is None:
        stem = examples_path.stem
        raise InputError(f"no grammar beside {examples_path} (expected {stem}.ebnf, "
                         f"{stem}.gbnf or {stem}.schema.json)")
    try:
        examples = parse_examples(source)
        if grammar_path.name.endswith(".schema.json"):
            grammar = Grammar.from_json_schema(grammar_path, lenient=True)
        else:
            loaded = try_load(read(str(grammar_path)), root)
            if isinstance(loaded, GrammarError):
                raise loaded
            grammar = loaded
    except GrammarError as exc:  # SchemaError is one too
        raise CommandFailed(exc.diagnostics) from None
    return grammar_path, grammar, examples


def _failure_json(source: SourceText, outcome: Outcome) -> dict[str, Any]:
    position = source.position(outcome.example.span.start)
    return {"title": outcome.example.title, "line": position.line,
            "message": outcome.failure(), "text": outcome.example.text}


def _print_text(report: dict[str, Any], update: bool) -> None:
    path = report["path"]
    for failure in report["failed"]:
        verb = "would change" if update else "FAIL"
        echo(f"{path}:{failure['line']}: {verb} `{failure['title']}`: {failure['message']}")
    summary = f"{path}: {plural(report['passed'], 'example')} passed"
    if report["failed"]:
        summary += f", {len(report['failed'])} failed"
    if report.get("updated"):
        summary += " (verdicts updated)"
    echo(summary)
    measured: tuple[Coverage, SourceText | None] | None = report.get("_coverage")
    if measured is not None:
        coverage, grammar_source = measured
        echo("")
        echo(coverage.render(grammar_source))
        echo("")
    if "below" in report:
        echo(f"{path}: coverage {coverage.percent:.1f}% is below --fail-under "
             f"{report['below']:g}", err=True)
