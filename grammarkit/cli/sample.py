"""``grammarkit sample``: random sentences of a grammar."""

from __future__ import annotations

import sys

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    checked,
    dump_json,
    echo,
    format_option,
    load_grammar,
    root_option,
)


@click.command("sample")
@click.argument("grammar_path", metavar="GRAMMAR",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("-n", "count", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many sentences.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@root_option
@format_option
def command(grammar_path: str, count: int, seed: int, root: str, output_format: str) -> None:
    """Print random sentences of the grammar in GRAMMAR, one per line."""
    from grammarkit.sample import sample as sample_grammar

    grammar = load_grammar(grammar_path, root)
    sentences = checked(lambda: sample_grammar(grammar, n=count, seed=seed), grammar.source)
    if output_format == "json":
        echo(dump_json(sentences))
    else:
        for sentence in sentences:
            echo(sentence)
    if count and not sentences:
        echo("error: the grammar has no sentence short enough to sample", err=True)
        sys.exit(EXIT_ERRORS)
