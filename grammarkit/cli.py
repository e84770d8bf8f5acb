"""The ``grammarkit`` command line: thin click commands over the library.

Exit codes: 0 clean, 1 the input has errors, 2 usage error (bad option, unreadable file).
Library modules are imported inside the commands, so ``import grammarkit.cli`` stays fast.
"""

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
    from grammarkit.ebnf.ast import Rule
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText

EXIT_ERRORS = 1
"""The input has errors (or, for ``fmt --check``, would change)."""

GRAMMAR_SUFFIX = ".ebnf"
SCHEMA_SUFFIX = ".schema.json"

_SURROGATE = re.compile("[\ud800-\udfff]")

_format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
    show_default=True, help="Output as human-readable text or as JSON.",
)
_root_option = click.option(
    "--root", default="root", show_default=True, metavar="NAME",
    help="The rule derivations start from.",
)
_to_option = click.option(
    "--to", "target", type=click.Choice(["ebnf", "gbnf", "lark"]), default="ebnf",
    show_default=True, help="Grammar notation to write: XGrammar EBNF, llama.cpp GBNF or Lark.",
)
_output_option = click.option(
    "-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
    help="Write the grammar here instead of standard output.",
)


class InputError(click.ClickException):
    """An input that cannot be read at all; exits with the usage-error code 2."""

    exit_code = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="grammarkit", prog_name="grammarkit")
def main() -> None:
    """Author, check and run grammars for LLM constrained decoding (XGrammar/SGLang EBNF)."""


# -- lint ----------------------------------------------------------------------------------------
@main.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, allow_dash=True))
@click.option("--strict", is_flag=True, help="Exit with 1 on warnings too.")
@click.option("--select", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the warnings to run (default ALL).")
@click.option("--ignore", multiple=True, metavar="CODES",
              help="Comma-separated codes or prefixes of the warnings to skip.")
@_root_option
@_format_option
def lint(paths: tuple[str, ...], strict: bool, select: tuple[str, ...],
         ignore: tuple[str, ...], root: str, output_format: str) -> None:
    """Report errors and warnings in grammars (*.ebnf) and JSON Schemas (*.schema.json).

    Directories are searched recursively; `-` reads a grammar from standard input.
    """
    from grammarkit.analysis.lint import lint as lint_text
    from grammarkit.diagnostics import Severity

    selected = _codes(select)
    ignored = _codes(ignore)
    schema_linter = _schema_linter()
    diagnostics: list[Diagnostic] = []
    checked = 0
    for path in _files(paths):
        if path.endswith(SCHEMA_SUFFIX):
            if schema_linter is None:
                _echo(f"note: skipping {path}: JSON Schema linting is not available", err=True)
                continue
            diagnostics.extend(schema_linter(path))
        else:
            source = _read(path)
            try:
                diagnostics.extend(lint_text(source.text, source.path, root=root,
                                             select=selected, ignore=ignored))
            except ValueError as exc:  # a malformed --select / --ignore entry
                raise click.BadParameter(str(exc), param_hint="'--select' / '--ignore'") from None
        checked += 1
    errors = sum(d.is_error for d in diagnostics)
    warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
    if output_format == "json":
        _echo(_json([d.to_json() for d in diagnostics]))
    else:
        for diagnostic in diagnostics:
            _echo(diagnostic.render() + "\n")
        _echo(_lint_summary(errors, warnings, checked))
    if errors or (strict and warnings):
        sys.exit(EXIT_ERRORS)


def _codes(values: tuple[str, ...]) -> list[str] | None:
    """``("GK201,GK202", "GK3")`` → ``["GK201", "GK202", "GK3"]``; ``None`` when empty."""
    codes = [code.strip() for value in values for code in value.split(",") if code.strip()]
    return codes or None


def _schema_linter() -> Any:
    """The JSON Schema converter's ``lint_schema_file(path)``, if it provides one."""
    from grammarkit.convert import json_schema

    return getattr(json_schema, "lint_schema_file", None)


def _lint_summary(errors: int, warnings: int, files: int) -> str:
    if not errors and not warnings:
        return "All checks passed."
    return (f"Found {_plural(errors, 'error')} and {_plural(warnings, 'warning')} "
            f"in {_plural(files, 'file')}.")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# -- fmt -----------------------------------------------------------------------------------------
@main.command()
@click.argument("paths", nargs=-1, required=True,
                type=click.Path(exists=True, allow_dash=True))
@click.option("--check", is_flag=True,
              help="Write nothing; exit with 1 if any file would be reformatted.")
@click.option("--diff", is_flag=True,
              help="Write nothing; print a unified diff of the changes instead.")
@_root_option
def fmt(paths: tuple[str, ...], check: bool, diff: bool, root: str) -> None:
    """Rewrite grammars (*.ebnf) in canonical layout, keeping their comments.

    Directories are searched recursively; `-` formats standard input to standard output.
    Files with errors are reported and left untouched.
    """
    import difflib

    changed = unchanged = failed = 0
    for path in _files(paths, (GRAMMAR_SUFFIX,)):
        source = _read(path)
        formatted, problem = _format(source, root)
        if formatted is None:
            failed += 1
            _echo(problem, err=True)
            continue
        if path == "-" and not (check or diff):
            _echo(formatted, nl=False)
        if formatted == source.text:
            unchanged += 1
            continue
        changed += 1
        if path == "-" and not (check or diff):
            continue
        if diff:
            _echo("".join(difflib.unified_diff(
                source.text.splitlines(keepends=True), formatted.splitlines(keepends=True),
                f"{source.path}\t(original)", f"{source.path}\t(formatted)")), nl=False)
        elif check:
            _echo(f"would reformat {source.path}", err=True)
        else:
            Path(path).write_bytes(formatted.encode("utf-8", "surrogateescape"))
            _echo(f"reformatted {source.path}", err=True)
    _echo(_fmt_summary(changed, unchanged, failed, written=not (check or diff)), err=True)
    if failed or (changed and (check or diff)):
        sys.exit(EXIT_ERRORS)


def _format(source: SourceText, root: str) -> tuple[str | None, str]:
    """The canonical text of ``source``, or ``None`` and why it can't be formatted."""
    from grammarkit.diagnostics import GrammarError, error
    from grammarkit.ebnf.ast import Span
    from grammarkit.ebnf.printer import print_grammar

    nul = source.text.find("\0")
    if nul >= 0:
        return None, error(
            "GK102", "unexpected NUL character: xgrammar ignores the rest of the grammar",
            Span(nul, nul + 1), "remove it; fmt leaves the file as it is",
        ).with_source(source).render()
    grammar = _load(source, root)
    if isinstance(grammar, GrammarError):
        return None, _render(grammar.diagnostics)
    formatted = print_grammar(grammar.ast, source.text)
    if not _same_rules(grammar, formatted, root):
        return None, (f"error: formatting {source.path} would change its rules, so it is left "
                      "as it is; this is a bug in grammarkit fmt, please report it")
    return formatted, ""


def _same_rules(grammar: Grammar, formatted: str, root: str) -> bool:
    """Whether ``formatted`` parses to ``grammar``'s rules (up to canonical grouping)."""
    from grammarkit.ebnf.parser import parse
    from grammarkit.ebnf.printer import canonical_expr

    def canonical(rules: Iterable[Rule]) -> list[tuple[Any, ...]]:
        return [(rule.name, rule.attributes, canonical_expr(rule.body),
                 None if rule.lookahead is None else canonical_expr(rule.lookahead))
                for rule in rules]

    result = parse(formatted, root)
    return result.ok and canonical(result.ast.rules) == canonical(grammar.ast.rules)


def _fmt_summary(changed: int, unchanged: int, failed: int, written: bool) -> str:
    verb = "reformatted" if written else "would be reformatted"
    parts = [f"{_plural(changed, 'file')} {verb}"]
    if unchanged:
        parts.append(f"{_plural(unchanged, 'file')} already formatted")
    if failed:
        parts.append(f"{_plural(failed, 'file')} with errors left unchanged")
    return ", ".join(parts) + "."


# -- match ---------------------------------------------------------------------------------------
@main.command()
@click.argument("grammar_path", metavar="GRAMMAR",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("text", required=False)
@click.option("--file", "text_file", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Match the contents of this file (`-`: standard input) instead of TEXT.")
@_root_option
@_format_option
def match(grammar_path: str, text: str | None, text_file: str | None, root: str,
          output_format: str) -> None:
    """Tell whether the grammar in GRAMMAR accepts TEXT exactly, and if not, why."""
    if text is not None and text_file is None:
        data = text.encode("utf-8", "surrogateescape")
    elif text_file is not None and text is None:
        data = _read_bytes(text_file)
    else:
        raise click.UsageError("give either TEXT or --file, not both or neither")
    grammar = _grammar(grammar_path, root)
    explanation = _checked(lambda: grammar.explain(data), grammar.source)
    if output_format == "json":
        from dataclasses import asdict

        report: dict[str, Any] = {"accepted": explanation is None}
        if explanation is not None:
            report.update(asdict(explanation), message=str(explanation))
        _echo(_json(report))
    else:
        _echo("accepted" if explanation is None else f"rejected: {explanation}")
    if explanation is not None:
        sys.exit(EXIT_ERRORS)


# -- convert -------------------------------------------------------------------------------------
@main.group()
def convert() -> None:
    """Build a grammar from a regular expression or a JSON Schema."""


@convert.command("regex")
@click.argument("pattern")
@click.option("--flavor", type=click.Choice(["ecma", "python"]), default="ecma",
              show_default=True, help="Regular-expression syntax: JavaScript or Python `re`.")
@_to_option
@_output_option
def convert_regex(pattern: str, flavor: str, target: str, output: str) -> None:
    """A grammar matching exactly the strings PATTERN matches in full.

    `-` reads the pattern from standard input (without its final line break); put `--` before
    a pattern that starts with `-`.
    """
    from grammarkit.grammar import Grammar

    if pattern == "-":
        pattern = _read_bytes("-").decode("utf-8", "surrogateescape").removesuffix("\n")
        pattern = pattern.removesuffix("\r")
    grammar = _checked(lambda: Grammar.from_regex(pattern, flavor=flavor))
    _write_grammar(grammar, target, output)


@convert.command("json-schema")
@click.argument("schema_path", metavar="SCHEMA.json",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--whitespace", type=click.Choice(["flexible", "compact", "indented"]),
              default=None, help="Whitespace between JSON tokens: any (the default), none, or "
              "pretty-printed (the default with --indent).")
@click.option("--indent", type=click.IntRange(min=0), default=None,
              help="Spaces per level of pretty-printed JSON (default 2).")
@click.option("--strict", is_flag=True,
              help="No properties or items beyond those the schema lists.")
@click.option("--lenient", is_flag=True,
              help="Drop keywords no grammar can enforce (with a warning) instead of failing.")
@click.option("--property-order", type=click.Choice(["schema", "any"]), default="schema",
              show_default=True, help="Properties in the schema's order, or in any order.")
@_to_option
@_output_option
def convert_json_schema(schema_path: str, whitespace: str | None, indent: int | None,
                        strict: bool, lenient: bool, property_order: str, target: str,
                        output: str) -> None:
    """A grammar for the JSON documents valid under the schema in SCHEMA.json (`-`: stdin)."""
    from grammarkit.grammar import Grammar

    if whitespace is None:
        whitespace = "flexible" if indent is None else "indented"
    elif indent is not None and whitespace != "indented":
        raise click.UsageError("--indent needs --whitespace indented")
    schema: bytes | Path = _read_bytes("-") if schema_path == "-" else Path(schema_path)
    try:
        grammar = _checked(lambda: Grammar.from_json_schema(
            schema, whitespace=whitespace, indent=indent, strict=strict, lenient=lenient,
            property_order=property_order))
    except ValueError as exc:  # options the converter rejects; _checked handles SchemaError
        raise click.UsageError(str(exc)) from None
    _write_grammar(grammar, target, output)


def _write_grammar(grammar: Grammar, target: str, output: str) -> None:
    if grammar.warnings:
        _echo(_render(grammar.warnings), err=True)
    exporters = {"ebnf": grammar.to_ebnf, "gbnf": grammar.to_gbnf, "lark": grammar.to_lark}
    text = _checked(exporters[target])
    if not text.endswith("\n"):
        text += "\n"
    if output == "-":
        _echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from None


# -- sample --------------------------------------------------------------------------------------
@main.command()
@click.argument("grammar_path", metavar="GRAMMAR",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("-n", "count", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many sentences.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@_root_option
@_format_option
def sample(grammar_path: str, count: int, seed: int, root: str, output_format: str) -> None:
    """Print random sentences of the grammar in GRAMMAR, one per line."""
    from grammarkit.sample import sample as sample_grammar

    grammar = _grammar(grammar_path, root)
    sentences = _checked(lambda: sample_grammar(grammar, n=count, seed=seed), grammar.source)
    if output_format == "json":
        _echo(_json(sentences))
    else:
        for sentence in sentences:
            _echo(sentence)
    if count and not sentences:
        _echo("error: the grammar has no sentence short enough to sample", err=True)
        sys.exit(EXIT_ERRORS)


# -- shared helpers ------------------------------------------------------------------------------
def _files(paths: Iterable[str], suffixes: tuple[str, ...] = (GRAMMAR_SUFFIX, SCHEMA_SUFFIX)
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


def _read(path: str) -> SourceText:
    from grammarkit.source import read_source

    try:
        return read_source(path)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


def _load(source: SourceText, root: str) -> Grammar | GrammarError:
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    try:
        return Grammar.from_ebnf(source.text, root, path=source.path)
    except GrammarError as exc:
        return exc


def _grammar(path: str, root: str) -> Grammar:
    """The grammar in ``path``; on errors, print them and exit with 1."""
    from grammarkit.diagnostics import GrammarError

    grammar = _load(_read(path), root)
    if isinstance(grammar, GrammarError):
        _fail(grammar.diagnostics)
    return grammar


def _checked(call: Any, source: SourceText | None = None) -> Any:
    """``call()``; a :class:`GrammarError` (or ``SchemaError``) is printed and exits with 1."""
    from grammarkit.diagnostics import GrammarError

    try:
        return call()
    except GrammarError as exc:
        if source is None:
            _fail(exc.diagnostics)
        _fail([d if d.source else d.with_source(source) for d in exc.diagnostics])


def _fail(diagnostics: Iterable[Diagnostic]) -> NoReturn:
    _echo(_render(diagnostics), err=True)
    sys.exit(EXIT_ERRORS)


def _render(diagnostics: Iterable[Diagnostic]) -> str:
    from grammarkit.diagnostics import render_all

    return render_all(diagnostics)


def _json(data: Any) -> str:
    """``data`` as indented JSON; lone surrogates (undecodable input bytes) become escapes."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print ``text``; undecodable input bytes (kept as surrogates) are written back as is."""
    click.echo(text.encode("utf-8", "surrogateescape" if _encodable(text) else "backslashreplace"),
               err=err, nl=nl)


def _encodable(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in _SURROGATE.findall(text))
