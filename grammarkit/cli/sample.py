"""``grammarkit sample``: previews of a grammar, as text or as tokens of a vocabulary."""

from __future__ import annotations

import itertools
import sys
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import JsonCommand, dump_json, echo, format_option, root_option
from grammarkit.cli.generation import (
    conversion_warnings,
    failure,
    flavor_option,
    lenient_option,
    load_constraint,
    load_vocabulary,
    print_texts,
    regex_option,
    reported,
    token_spans,
)

if TYPE_CHECKING:
    from grammarkit.generate.constraint import Constraint
    from grammarkit.grammar import Grammar

PREVIEW_ENDING_BIAS = 0.25
"""Token previews: stop tokens and closing characters gain this much per token, so they end."""

PROGRESS_FROM = 20
"""A progress bar (on a terminal's stderr) from this many samples on."""


EMPTY: dict[str, Any] = {"samples": None}
"""The JSON report's keys when nothing was sampled."""


@click.command("sample", cls=JsonCommand, json_fields=EMPTY)
@click.argument("grammar_argument", metavar="GRAMMAR")
@click.option("-n", "count", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many samples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option("--max-length", type=click.IntRange(min=0), default=64, show_default=True,
              help="Characters a text sample should have at most.")
@click.option("--coverage", "show_coverage", is_flag=True,
              help="Also print which rules and alternatives the samples used.")
@click.option("--tokenizer", metavar="PATH|MODEL",
              help="Sample tokens of this vocabulary (tokenizer.json, *.tiktoken, an installed "
                   "name such as qwen3.6 or llama3, or a cached model) with a random model, "
                   "through the decoder.")
@click.option("--backend", type=click.Choice(["native", "xgrammar"]), default="native",
              show_default=True, help="Decoder for --tokenizer samples.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=64, show_default=True,
              help="Tokens a --tokenizer sample may have at most.")
@click.option("--show-tokens", is_flag=True,
              help="With --tokenizer: show each token (coloured spans on a terminal).")
@regex_option
@flavor_option
@lenient_option
@root_option
@format_option
def command(grammar_argument: str, count: int, seed: int, max_length: int, show_coverage: bool,
            tokenizer: str | None, backend: str, max_tokens: int, show_tokens: bool,
            is_regex: bool, flavor: str | None, lenient: bool, root: str, output_format: str) -> None:
    """Print random samples of GRAMMAR (an EBNF file, a *.schema.json file, or with --regex a
    regular expression).

    \b
    Text samples read like real output: whitespace loops give one space or none, strings are
    short and readable, and each sample prefers alternatives the earlier ones did not use.
    Samples that span lines are printed as numbered blocks (`↵` is a final line break, `◂`
    the end of a sample ending in spaces, `\r` and other control characters are escaped).
    With --tokenizer, a random model picks tokens under the grammar (grammars with
    Token(...) need this).
    """
    with reported(output_format, **EMPTY):
        if show_tokens and tokenizer is None:
            raise failure("GK359", "--show-tokens needs --tokenizer", exit_code=2)
        if show_coverage and tokenizer is not None:
            raise failure("GK359", "--coverage describes text samples: drop --tokenizer",
                          exit_code=2)
        constraint, grammar = load_constraint(grammar_argument, root, is_regex, flavor, lenient)
        warnings = conversion_warnings(grammar, grammar_argument, output_format)
        if tokenizer is not None:
            _token_samples(constraint, tokenizer, backend, count, seed, max_tokens, show_tokens,
                           output_format, warnings)
        else:
            _text_samples(grammar, count, seed, max_length, show_coverage, output_format,
                          warnings)


def _text_samples(grammar: Grammar, count: int, seed: int, max_length: int,
                  show_coverage: bool, output_format: str,
                  warnings: list[dict[str, Any]]) -> None:
    from grammarkit.sample import Coverage, samples, why_no_samples

    coverage = Coverage(grammar)
    found: list[str] = []
    stream = samples(grammar, seed=seed, max_length=max_length, coverage=coverage)
    with _progress(count) as bar:
        for text in itertools.islice(stream, count):
            found.append(text)
            bar.update(1)
    if count and not found:
        raise _no_samples(why_no_samples(grammar))
    if output_format == "json":
        data: dict[str, Any] = {"samples": found, "diagnostics": warnings}
        if show_coverage:
            data["coverage"] = coverage.to_json()
        echo(dump_json(data))
        return
    print_texts(found)
    if show_coverage:
        echo(coverage.report())


def _no_samples(diagnostic: Any) -> Exception:
    from grammarkit.cli.generation import Failed

    return Failed([diagnostic])


def _token_samples(constraint: Constraint, tokenizer: str, backend: str, count: int,
                   seed: int, max_tokens: int, show_tokens: bool, output_format: str,
                   warnings: list[dict[str, Any]]) -> None:
    from grammarkit.generate import RandomLM, SamplingParams, get_backend

    vocab = load_vocabulary(tokenizer)
    engine = get_backend(backend, lm=RandomLM(vocab, seed, ending_bias=PREVIEW_ENDING_BIAS),
                         vocab=vocab)
    choices = []
    with _progress(count) as bar:
        for k in range(count):
            params = SamplingParams(max_tokens=max_tokens, seed=seed + k)
            choices.append(engine.generate(constraint, [], params).choices[0])
            bar.update(1)
    if output_format == "json":
        echo(dump_json({"samples": [{
            "text": c.text, "token_ids": c.token_ids,
            "tokens": [vocab.tokens[t].decode("utf-8", "replace") for t in c.token_ids],
            "finish_reason": c.finish_reason} for c in choices], "diagnostics": warnings}))
    elif show_tokens:
        for choice in choices:
            echo(token_spans(vocab, choice.token_ids))
    else:
        print_texts([c.text for c in choices])
    unfinished = sum(c.finish_reason == "length" for c in choices)
    if unfinished and output_format != "json":
        echo(f"note: {unfinished} of {count} samples reached --max-tokens {max_tokens} before "
             "the grammar completed", err=True)


def _progress(count: int) -> Any:
    """A progress bar on stderr for many samples on a terminal; otherwise a silent one."""
    shown = count >= PROGRESS_FROM and sys.stderr.isatty()
    file: Any = sys.stderr if shown else _Null()
    return click.progressbar(length=count, file=file, label="sampling")


class _Null:
    """A file that swallows what the progress bar would draw."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False
