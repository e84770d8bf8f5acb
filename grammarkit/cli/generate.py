"""``grammarkit generate``: complete a prompt under a grammar with a model or a server."""

from __future__ import annotations

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
    styled,
    token_spans,
)

if TYPE_CHECKING:
    from grammarkit.generate import Backend, Completion, SamplingParams
    from grammarkit.vocab import Vocabulary


EMPTY: dict[str, Any] = {"choices": None}
"""The JSON report's keys when nothing was generated."""


@click.command("generate", cls=JsonCommand, json_fields=EMPTY)
@click.argument("grammar_argument", metavar="GRAMMAR")
@click.option("--prompt", metavar="TEXT", help="The prompt as text (tokenized by the model).")
@click.option("--prompt-ids", metavar="1,2,3", help="The prompt as comma-separated token ids.")
@click.option("--backend", default="native", show_default=True,
              help="native, xgrammar, remote, or a backend registered by a package.")
@click.option("--model", metavar="NAME|PATH",
              help="Local backends: a Hugging Face causal LM (local cache or folder). "
                   "remote: the model name to request.")
@click.option("--tokenizer", metavar="PATH|MODEL",
              help="Local backends without --model: this vocabulary (a file, an installed name "
                   "such as qwen3.6, or a cached model) with a random model.")
@click.option("--url", help="remote: the server (default $GRAMMARKIT_URL or the local one).")
@click.option("--max-tokens", type=int, default=64, show_default=True)
@click.option("--min-tokens", type=int, default=0, show_default=True)
@click.option("--temperature", type=float, default=1.0, show_default=True,
              help="0 picks the most likely token.")
@click.option("--top-p", type=float, default=1.0, show_default=True)
@click.option("--top-k", type=int, default=-1, show_default=True)
@click.option("--min-p", type=float, default=0.0, show_default=True)
@click.option("--frequency-penalty", type=float, default=0.0, show_default=True)
@click.option("--presence-penalty", type=float, default=0.0, show_default=True)
@click.option("--repetition-penalty", type=float, default=1.0, show_default=True)
@click.option("--logit-bias", "logit_bias", multiple=True, metavar="ID=VALUE",
              help="Add VALUE to token ID's logit (repeatable).")
@click.option("--stop", multiple=True, metavar="TEXT", help="Stop at this text (repeatable).")
@click.option("--stop-token-id", "stop_token_ids", type=int, multiple=True, metavar="ID",
              help="Also stop at this token (repeatable).")
@click.option("--ignore-eos", is_flag=True, help="Never pick end-of-sequence tokens.")
@click.option("--seed", type=int, default=None, help="Makes sampling reproducible.")
@click.option("-n", "n", type=int, default=1, show_default=True, help="How many completions.")
@click.option("--logprobs", type=int, default=None, metavar="K",
              help="Also report the K most likely tokens at each step (JSON output).")
@click.option("--no-jump-forward", is_flag=True,
              help="Call the model for every token, even where the grammar forces the text.")
@click.option("--stream", "streaming", is_flag=True, help="Print text as it is generated.")
@click.option("--show-tokens", is_flag=True, help="Show each token (local backends).")
@regex_option
@flavor_option
@lenient_option
@root_option
@format_option
def command(grammar_argument: str, prompt: str | None, prompt_ids: str | None, backend: str,
            model: str | None, tokenizer: str | None, url: str | None, streaming: bool,
            show_tokens: bool, is_regex: bool, flavor: str | None, lenient: bool, root: str, output_format: str,
            logit_bias: tuple[str, ...], no_jump_forward: bool, **sampling: Any) -> None:
    """Complete a prompt under GRAMMAR (an EBNF file, a *.schema.json file, or with --regex a
    regular expression).

    \b
    Local backends (native: grammarkit's decoder; xgrammar: xgrammar 0.2.8's) run --model,
    or with --tokenizer only a random model (a preview). remote sends the request to an
    SGLang-compatible server (--url, --model): schemas and ECMAScript regexes travel as
    themselves, a --flavor python regex as its EBNF. The text goes to stdout; with --format
    json, the whole completion (choices, finish reasons, usage, timing with the model calls
    jump-forward saved).
    """
    with reported(output_format, **EMPTY):
        ids = _prompt(prompt, prompt_ids)
        if backend == "remote" and isinstance(ids, str):  # the client sends token ids only
            raise failure("GK359", "--backend remote sends the prompt as token ids: give it "
                          "with --prompt-ids 1,2,3", exit_code=2)
        constraint, grammar = load_constraint(grammar_argument, root, is_regex, flavor, lenient)
        warnings = conversion_warnings(grammar, grammar_argument, output_format)
        params = _params(sampling, logit_bias, no_jump_forward)
        engine, vocab = _backend(backend, model, tokenizer, url)
        if streaming and output_format == "text":
            for chunk in engine.stream(constraint, ids, params):
                echo(chunk.text, nl=False)
                if chunk.finish_reason is not None:
                    echo("")
                    if params.n > 1:
                        echo(styled(f"--- finish_reason={chunk.finish_reason}", dim=True))
            return
        completion = engine.generate(constraint, ids, params)
        _show(completion, vocab, show_tokens, output_format, warnings)


def _prompt(text: str | None, ids: str | None) -> str | list[int]:
    if (text is None) == (ids is None):
        raise failure("GK359", "give the prompt as exactly one of --prompt TEXT and "
                      "--prompt-ids 1,2,3", exit_code=2)
    if text is not None:
        return text
    assert ids is not None
    try:
        return [int(part) for part in ids.replace(" ", "").split(",") if part]
    except ValueError:
        raise failure("GK352", f"--prompt-ids must be comma-separated token ids, got {ids!r}",
                      exit_code=2) from None


def _params(sampling: dict[str, Any], logit_bias: tuple[str, ...],
            no_jump_forward: bool) -> SamplingParams:
    from grammarkit.generate import SamplingParams

    bias = {}
    for item in logit_bias:
        token, _, value = item.partition("=")
        try:
            bias[int(token)] = float(value)
        except ValueError:
            raise failure("GK359", f"--logit-bias takes ID=VALUE, got {item!r}",
                          exit_code=2) from None
    sampling["stop"] = tuple(sampling["stop"])
    sampling["stop_token_ids"] = tuple(sampling["stop_token_ids"])
    return SamplingParams(**sampling, logit_bias=bias or None, jump_forward=not no_jump_forward)


def _backend(name: str, model: str | None, tokenizer: str | None,
             url: str | None) -> tuple[Backend, Vocabulary | None]:
    from grammarkit.generate import RandomLM, get_backend

    if name == "remote":
        if tokenizer is not None:
            raise failure("GK359", "--tokenizer is for local backends; the remote server "
                          "tokenizes itself", exit_code=2)
        return get_backend("remote", url=url, model=model), None
    if url is not None:
        raise failure("GK359", f"--url is for --backend remote, not {name}", exit_code=2)
    if model is not None:
        lm = _load_model(model)
        vocab = load_vocabulary(tokenizer) if tokenizer else lm.vocabulary()
        return get_backend(name, lm=lm, vocab=vocab), vocab
    if tokenizer is None:
        raise failure("GK354", f"the {name} backend needs --model (a Hugging Face causal LM) "
                      "or --tokenizer (a random model, for previews)", exit_code=2)
    vocab = load_vocabulary(tokenizer)
    return get_backend(name, lm=RandomLM(vocab), vocab=vocab), vocab


def _load_model(name: str) -> Any:
    from grammarkit.generate import TransformersLM

    try:
        return TransformersLM.from_pretrained(name)
    except (OSError, ValueError) as exc:
        raise failure("GK353", f"cannot load the model {name}: {exc}".splitlines()[0],
                      "give a folder with config.json and weights, or a model in the local "
                      "Hugging Face cache", exit_code=2) from None


def _show(completion: Completion, vocab: Vocabulary | None, show_tokens: bool,
          output_format: str, warnings: list[dict[str, Any]]) -> None:
    if output_format == "json":
        echo(dump_json({**completion.to_json(), "diagnostics": warnings}))
        return
    if show_tokens and vocab is not None:
        for choice in completion.choices:
            echo(token_spans(vocab, choice.token_ids))
    elif len(completion.choices) == 1:
        echo(completion.text)
    else:
        print_texts([c.text for c in completion.choices])
    for choice in completion.choices:
        if choice.finish_reason == "length":
            echo(f"note: completion {choice.index + 1} reached --max-tokens before the grammar "
                 "completed", err=True)
