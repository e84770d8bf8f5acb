"""``grammarkit match``: whether a grammar accepts a text, and where it fails."""

from __future__ import annotations

import sys
from typing import Any

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    checked,
    dump_json,
    echo,
    format_option,
    load_grammar,
    read_bytes,
    root_option,
)


@click.command("match")
@click.argument("grammar_path", metavar="GRAMMAR",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("text", required=False)
@click.option("--file", "text_file", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Match the contents of this file (`-`: standard input) instead of TEXT.")
@root_option
@format_option
def command(grammar_path: str, text: str | None, text_file: str | None, root: str,
          output_format: str) -> None:
    """Tell whether the grammar in GRAMMAR accepts TEXT exactly, and if not, why."""
    if text is not None and text_file is None:
        data = text.encode("utf-8", "surrogateescape")
    elif text_file is not None and text is None:
        data = read_bytes(text_file)
    else:
        raise click.UsageError("give either TEXT or --file, not both or neither")
    grammar = load_grammar(grammar_path, root)
    explanation = checked(lambda: grammar.explain(data), grammar.source)
    if output_format == "json":
        from dataclasses import asdict

        report: dict[str, Any] = {"accepted": explanation is None}
        if explanation is not None:
            report.update(asdict(explanation), message=str(explanation))
        echo(dump_json(report))
    else:
        echo("accepted" if explanation is None else f"rejected: {explanation}")
    if explanation is not None:
        sys.exit(EXIT_ERRORS)
