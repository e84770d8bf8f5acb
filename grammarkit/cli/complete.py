"""``grammarkit complete``: one constrained completion from a ``/v1/completions`` server."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from grammarkit.cli.common import (
    CommandFailed,
    InputError,
    JsonCommand,
    PathArgument,
    dump_json,
    echo,
    format_option,
    outcome,
)

EMPTY: dict[str, Any] = {"choices": None}
"""``--format json``: the keys of a completion that failed before the server answered one."""


@click.command("complete", cls=JsonCommand, json_fields=EMPTY)
@click.argument("grammar_path", metavar="GRAMMAR", required=False,
                type=PathArgument(exists=True, dir_okay=False, allow_dash=True))
@click.option("--url", required=True, help="The server, e.g. http://127.0.0.1:30000.")
@click.option("--model", required=True, help="The model name.")
@click.option("--kind", type=click.Choice(["ebnf", "regex", "json_schema"]), default=None,
              help="What GRAMMAR holds (default: json_schema for *.json, else ebnf).")
@click.option("--prompt-ids", metavar="IDS", help="The prompt as token ids: '9703,25' or "
              "'9703 25'.")
@click.option("--prompt", "prompt_text", metavar="TEXT",
              help="The prompt as text, tokenized with --tokenizer.")
@click.option("--tokenizer", metavar="T", help="Tokenizer for --prompt: qwen3.6, "
              "qwen3.6-35b-a3b, deepseek-v4, a tokenizer.json file, or hf:NAME.")
@click.option("--max-tokens", type=int, default=None, help="Most tokens to generate.")
@click.option("--temperature", type=float, default=None)
@click.option("--top-p", type=float, default=None)
@click.option("--top-k", type=int, default=None)
@click.option("--min-p", type=float, default=None)
@click.option("--seed", type=int, default=None)
@click.option("--stop", multiple=True, help="A stop string (repeatable, up to 4).")
@click.option("-n", "n", type=int, default=None, help="How many completions.")
@click.option("--stream", is_flag=True, help="Print the text as it arrives.")
@click.option("--api-key", envvar="GRAMMARKIT_API_KEY", default=None, show_envvar=True,
              help="Sent as a bearer token.")
@click.option("--timeout", type=float, default=60.0, show_default=True, help="Seconds.")
@format_option
def command(grammar_path: str | None, url: str, model: str, kind: str | None,
            prompt_ids: str | None, prompt_text: str | None, tokenizer: str | None,
            max_tokens: int | None, temperature: float | None, top_p: float | None,
            top_k: int | None, min_p: float | None, seed: int | None, stop: tuple[str, ...],
            n: int | None, stream: bool, api_key: str | None, timeout: float,
            output_format: str) -> None:
    """Complete a prompt on a server under the grammar (EBNF), regex or JSON Schema in GRAMMAR
    (`-` reads standard input; none: unconstrained) and print the text."""
    with outcome(output_format, **EMPTY):
        ids = _prompt(prompt_ids, prompt_text, tokenizer)
        fields: dict[str, Any] = {"max_tokens": max_tokens, "temperature": temperature,
                                  "top_p": top_p, "top_k": top_k, "min_p": min_p,
                                  "seed": seed, "stop": list(stop) or None, "n": n}
        if grammar_path is not None:
            fields[kind or _kind(grammar_path)] = _read_text(grammar_path)
        with _server_failures():
            from grammarkit.client import CompletionsClient

            with CompletionsClient(url, api_key, timeout=timeout) as client:
                if stream:
                    _print_stream(client.completions(model, ids, stream=True, **fields),
                                  output_format)
                    return
                response = client.completions(model, ids, **fields)
    if output_format == "json":
        echo(dump_json(response.to_json()))
    else:
        for choice in response.choices:
            echo(choice.text)


@contextmanager
def _server_failures() -> Iterator[None]:
    """A refused request or a server's failure becomes the command's diagnostics."""
    from grammarkit.cli.generation import server_failure
    from grammarkit.client import CompletionsError
    from grammarkit.client.protocol import RequestError

    try:
        yield
    except RequestError as exc:
        raise CommandFailed(exc.diagnostics) from None
    except CompletionsError as exc:
        raise CommandFailed(server_failure(exc).diagnostics) from None


def _print_stream(chunks: Any, output_format: str) -> None:
    for chunk in chunks:
        if output_format == "json":
            echo(json.dumps(chunk.to_json(), ensure_ascii=False))
        else:
            for choice in chunk.choices:
                echo(choice.text, nl=False)
                sys.stdout.flush()
    if output_format != "json":
        echo("")


def _prompt(prompt_ids: str | None, prompt_text: str | None, tokenizer: str | None) -> list[int]:
    if (prompt_ids is None) == (prompt_text is None):
        raise click.UsageError("give the prompt as --prompt-ids or as --prompt with --tokenizer")
    if prompt_ids is not None:
        try:
            return [int(part) for part in prompt_ids.replace(",", " ").split()]
        except ValueError:
            raise click.BadParameter("token ids are integers separated by commas or spaces",
                                     param_hint="--prompt-ids") from None
    if tokenizer is None:
        raise click.UsageError("--prompt needs --tokenizer (the endpoint takes token ids)")
    from grammarkit.client.tokenize import text_encoder

    try:
        encode = text_encoder(tokenizer)
    except (ValueError, ImportError, OSError) as exc:
        raise InputError(f"cannot load tokenizer {tokenizer!r}: {exc}") from None
    return encode(prompt_text or "")


def _kind(path: str) -> str:
    return "json_schema" if path.endswith(".json") else "ebnf"


def _read_text(path: str) -> str:
    from grammarkit.cli.common import read_bytes

    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None
