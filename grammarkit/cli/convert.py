"""``grammarkit convert``: JSON Schema and regular expressions to grammars."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from grammarkit.cli.common import (
    InputError,
    checked,
    echo,
    fail,
    output_option,
    read_bytes,
    render,
    to_option,
)

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.grammar import Grammar


@click.group("convert")
def command() -> None:
    """Build a grammar from a regular expression or a JSON Schema."""


@command.command("regex")
@click.argument("pattern")
@click.option("--flavor", type=click.Choice(["ecma", "python"]), default="ecma",
              show_default=True, help="Regular-expression syntax: JavaScript or Python `re`.")
@to_option
@output_option
def convert_regex(pattern: str, flavor: str, target: str, output: str) -> None:
    """A grammar matching exactly the strings PATTERN matches in full.

    `-` reads the pattern from standard input (without its final line break); put `--` before
    a pattern that starts with `-`.
    """
    from grammarkit.grammar import Grammar

    if pattern == "-":
        pattern = read_bytes("-").decode("utf-8", "surrogateescape").removesuffix("\n")
        pattern = pattern.removesuffix("\r")
    grammar = checked(lambda: Grammar.from_regex(pattern, flavor=flavor))
    _write_grammar(grammar, target, output)


@command.command("json-schema")
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
              show_default=True, help="Properties in the schema's order (for generation: "
              "`required` enforced exactly, but a valid instance in another order is rejected), "
              "or in any order (for validating existing JSON).")
@to_option
@output_option
def convert_json_schema(schema_path: str, whitespace: str | None, indent: int | None,
                        strict: bool, lenient: bool, property_order: str, target: str,
                        output: str) -> None:
    """A grammar for the JSON documents valid under the schema in SCHEMA.json (`-`: stdin)."""
    from grammarkit.grammar import Grammar

    if whitespace is None:
        whitespace = "flexible" if indent is None else "indented"
    elif indent is not None and whitespace != "indented":
        raise click.UsageError("--indent needs --whitespace indented")
    from grammarkit.convert.json_schema import SchemaError, command_line_wording

    schema: bytes | Path = read_bytes("-") if schema_path == "-" else Path(schema_path)
    try:
        grammar = Grammar.from_json_schema(
            schema, whitespace=whitespace, indent=indent, strict=strict, lenient=lenient,
            property_order=property_order)
    except SchemaError as exc:
        fail(command_line_wording(exc.diagnostics))
    except ValueError as exc:  # options the converter rejects
        raise click.UsageError(str(exc)) from None
    _write_grammar(grammar, target, output, command_line_wording(list(grammar.warnings)))


def _write_grammar(grammar: Grammar, target: str, output: str,
                   warnings: list[Diagnostic] | None = None) -> None:
    warnings = list(grammar.warnings) if warnings is None else warnings
    if warnings:
        echo(render(warnings), err=True)
    exporters = {"ebnf": grammar.to_ebnf, "gbnf": grammar.to_gbnf, "lark": grammar.to_lark}
    text = checked(exporters[target])
    if not text.endswith("\n"):
        text += "\n"
    if output == "-":
        echo(text, nl=False)
        return
    try:
        Path(output).write_text(text, "utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror or exc}") from None
