"""``grammarkit convert``: JSON Schema, regular expressions and llama.cpp GBNF to grammars."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import (
    CommandFailed,
    JsonCommand,
    PathArgument,
    checked,
    dump_json,
    echo,
    format_option,
    load_gbnf,
    outcome,
    output_option,
    read,
    read_bytes,
    render,
    to_option,
    write_file,
)

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.grammar import Grammar

EMPTY: dict[str, Any] = {"grammar": None}
"""The JSON report's keys when no grammar was written."""


@click.group("convert")
def command() -> None:
    """Build a grammar from a regular expression, a JSON Schema or a llama.cpp GBNF grammar.

    With --format json, stdout is one JSON object whatever the outcome: `grammar` (the text,
    or null on errors) and `diagnostics` (warnings and errors).
    """


@command.command("regex", cls=JsonCommand, json_fields=EMPTY)
@click.argument("pattern")
@click.option("--flavor", type=click.Choice(["ecma", "python"]), default="ecma",
              show_default=True, help="Regular-expression syntax and meaning (see below).")
@to_option
@output_option
@format_option
def convert_regex(pattern: str, flavor: str, target: str, output: str,
                  output_format: str) -> None:
    """A grammar matching exactly the strings PATTERN matches in full.

    `-` reads the pattern from standard input (without its final line break); put `--` before
    a pattern that starts with `-`.

    \b
    --flavor ecma (default): JavaScript syntax, read as xgrammar's Grammar.from_regex does:
      `.` matches any character, newline included; \\d and \\w are ASCII;
      \\s is [\\t\\n\\v\\f\\r space U+00A0]; an escaped letter with no meaning is itself
      (\\q is q).
    --flavor python: Python `re` syntax, read as re.fullmatch(PATTERN, text, re.ASCII):
      `.` matches anything but a newline (\\n); \\d, \\w and \\s are ASCII classes
      (\\s is [\\t\\n\\v\\f\\r space]); (?P<name>...), (?#...), \\A, \\Z, \\N{...},
      octal escapes and {,n} are understood.
    Both: lookaround, backreferences, word boundaries and inline flags are refused (GK130);
    lazy quantifiers match what greedy ones do; ^ and $ only at the ends.
    """
    from grammarkit.grammar import Grammar

    with outcome(output_format, **EMPTY):
        if pattern == "-":
            pattern = read_bytes("-").decode("utf-8", "surrogateescape").removesuffix("\n")
            pattern = pattern.removesuffix("\r")
        grammar = checked(lambda: Grammar.from_regex(pattern, flavor=flavor))
        _write_grammar(grammar, target, output, output_format)


@command.command("json-schema", cls=JsonCommand, json_fields=EMPTY)
@click.argument("schema_path", metavar="SCHEMA.json",
                type=PathArgument(exists=True, dir_okay=False, allow_dash=True))
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
@format_option
def convert_json_schema(schema_path: str, whitespace: str | None, indent: int | None,
                        strict: bool, lenient: bool, property_order: str, target: str,
                        output: str, output_format: str) -> None:
    """A grammar for the JSON documents valid under the schema in SCHEMA.json (`-`: stdin)."""
    from grammarkit.grammar import Grammar

    with outcome(output_format, **EMPTY):
        if whitespace is None:
            whitespace = "flexible" if indent is None else "indented"
        elif indent is not None and whitespace != "indented":
            raise click.UsageError("--indent needs --whitespace indented")
        from grammarkit.convert.json_schema import SchemaError, command_line_wording

        schema: bytes | Path = read_bytes(schema_path) if schema_path == "-" else Path(schema_path)
        try:
            grammar = Grammar.from_json_schema(
                schema, whitespace=whitespace, indent=indent, strict=strict, lenient=lenient,
                property_order=property_order)
        except SchemaError as exc:
            raise CommandFailed(command_line_wording(exc.diagnostics)) from None
        except ValueError as exc:  # options the converter rejects
            raise click.UsageError(str(exc)) from None
        _write_grammar(grammar, target, output, output_format,
                       command_line_wording(list(grammar.warnings)))


@command.command("gbnf", cls=JsonCommand, json_fields=EMPTY)
@click.argument("gbnf_path", metavar="GRAMMAR.gbnf",
                type=PathArgument(exists=True, dir_okay=False, allow_dash=True))
@click.option("--root", default="root", show_default=True, metavar="NAME",
              help="The GBNF rule derivations start from.")
@to_option
@output_option
@format_option
def convert_gbnf(gbnf_path: str, root: str, target: str, output: str,
                 output_format: str) -> None:
    """The XGrammar EBNF form of the llama.cpp GBNF grammar in GRAMMAR.gbnf (`-`: stdin).

    GBNF is read as llama.cpp's parser reads it (empty alternatives, `-` in rule names,
    repetition counts up to 2000); errors are located in the GBNF text (GK141, GK142).
    """
    from grammarkit.diagnostics import GrammarError

    with outcome(output_format, **EMPTY):
        grammar = load_gbnf(read(gbnf_path), root)
        if isinstance(grammar, GrammarError):
            raise CommandFailed(grammar.diagnostics)
        _write_grammar(grammar, target, output, output_format)


def _write_grammar(grammar: Grammar, target: str, output: str, output_format: str,
                   warnings: list[Diagnostic] | None = None) -> None:
    warnings = list(grammar.warnings) if warnings is None else warnings
    exporters = {"ebnf": grammar.to_ebnf, "gbnf": grammar.to_gbnf, "lark": grammar.to_lark}
    text = checked(exporters[target])
    if not text.endswith("\n"):
        text += "\n"
    if output_format == "json":
        if output != "-":
            write_file(output, text.encode("utf-8"))
        echo(dump_json({"grammar": text, "diagnostics": [d.to_json() for d in warnings]}))
        return
    if warnings:
        echo(render(warnings), err=True)
    if output == "-":
        echo(text, nl=False)
        return
    write_file(output, text.encode("utf-8"))
