"""What the ``grammarkit`` commands share: options, reading inputs, printing diagnostics and JSON."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic, GrammarError
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText

EXIT_ERRORS = 1
"""The input has errors (or, for ``fmt --check``, would change)."""

GRAMMAR_SUFFIX = ".ebnf"
SCHEMA_SUFFIX = ".schema.json"

_SURROGATE = re.compile("[\ud800-\udfff]")

format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
    show_default=True, help="Output as human-readable text or as JSON.",
)
root_option = click.option(
    "--root", default="root", show_default=True, metavar="NAME",
    help="The rule derivations start from.",
)
to_option = click.option(
    "--to", "target", type=click.Choice(["ebnf", "gbnf", "lark"]), default="ebnf",
    show_default=True, help="Grammar notation to write: XGrammar EBNF, llama.cpp GBNF or Lark.",
)
output_option = click.option(
    "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
    help="Write the grammar here instead of standard output.",
)


class InputError(click.ClickException):
    """An input that cannot be read at all; exits with the usage-error code 2."""

    exit_code = 2


def files(paths: Iterable[str], suffixes: tuple[str, ...] = (GRAMMAR_SUFFIX, SCHEMA_SUFFIX)
           ) -> Iterator[str]:
    """The files named in ``paths``, each directory replaced by its matching files (sorted)."""
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
            for name in sorted(names):
                if name.endswith(suffixes):
                    yield os.path.join(folder, name)


def read(path: str) -> SourceText:
    from grammarkit.source import read_source

    try:
        return read_source(path)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def try_load(source: SourceText, root: str) -> Grammar | GrammarError:
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    try:
        return Grammar.from_ebnf(source.text, root, path=source.path)
    except GrammarError as exc:
        return exc


def load_grammar(path: str, root: str) -> Grammar:
    """The grammar in ``path``; on errors, print them and exit with 1."""
    from grammarkit.diagnostics import GrammarError

    grammar = try_load(read(path), root)
    if isinstance(grammar, GrammarError):
        fail(grammar.diagnostics)
    return grammar


def checked(call: Any, source: SourceText | None = None) -> Any:
    """``call()``; a :class:`GrammarError` (or ``SchemaError``) is printed and exits with 1."""
    from grammarkit.diagnostics import GrammarError

    try:
        return call()
    except GrammarError as exc:
        if source is None:
            fail(exc.diagnostics)
        fail([d if d.source else d.with_source(source) for d in exc.diagnostics])


def fail(diagnostics: Iterable[Diagnostic]) -> NoReturn:
    echo(render(diagnostics), err=True)
    sys.exit(EXIT_ERRORS)


def render(diagnostics: Iterable[Diagnostic]) -> str:
    from grammarkit.diagnostics import render_all

    return render_all(diagnostics)


def dump_json(data: Any) -> str:
    """``data`` as indented JSON; lone surrogates (undecodable input bytes) become escapes."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print ``text``; undecodable input bytes (kept as surrogates) are written back as is."""
    click.echo(text.encode("utf-8", "surrogateescape" if _encodable(text) else "backslashreplace"),
               err=err, nl=nl)


def _encodable(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in _SURROGATE.findall(text))

def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
