"""``grammarkit serve``: a local SGLang-compatible ``/v1/completions`` server."""

from __future__ import annotations

import sys

import click

from grammarkit.cli.common import InputError, echo


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=30000, show_default=True,
              help="Port to listen on (SGLang's default).")
@click.option("--model", default="default", show_default=True,
              help="The model name /v1/models lists (requests may name any model, as in SGLang).")
@click.option("--tokenizer", default=None, metavar="T",
              help="Vocabulary: an installed tokenizer's name (qwen3.6, qwen2.5, deepseek-v4, "
                   "llama3, cl100k, o200k, qwen3: grammarkit check --list-tokenizers) or a "
                   "tokenizer file. Default: qwen3.6 with --lm random, the model's own with "
                   "--lm hf:...")
@click.option("--lm", "lm_spec", default="random", show_default=True,
              metavar="random|hf:NAME_OR_PATH",
              help="The language model: random logits (nothing to download) or a transformers "
                   "model from the local cache or a directory.")
@click.option("--backend", type=click.Choice(["native", "xgrammar"]), default="native",
              show_default=True, help="Grammar engine masking the model (xgrammar: to compare).")
@click.option("--api-key", envvar="GRAMMARKIT_API_KEY", default=None, show_envvar=True,
              help="Require `Authorization: Bearer KEY` on every route but /health.")
@click.option("--max-request-bytes", type=click.IntRange(min=1024), default=1 << 20,
              show_default=True, help="Largest request body accepted (413 beyond).")
@click.option("--workers", type=click.IntRange(min=1), default=8, show_default=True,
              help="Requests generating at once (one with an hf model).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random LM.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True)
def command(host: str, port: int, model: str, tokenizer: str | None, lm_spec: str,
            backend: str, api_key: str | None, max_request_bytes: int, workers: int, seed: int,
            log_level: str) -> None:
    """Serve POST /v1/completions (SGLang's fields: token-id prompts with an ebnf, regex or
    json_schema constraint), GET /v1/models, GET /health and GET /metrics, generating with
    grammarkit's native decoder. Stops cleanly on SIGINT or SIGTERM."""
    from grammarkit.server.engine import Limits
    from grammarkit.server.run import ServerSetupError, build_engine, require_server_extra, serve

    if tokenizer is None and lm_spec == "random":
        tokenizer = "qwen3.6"
    try:
        require_server_extra()
        engine = build_engine(model=model, tokenizer=tokenizer, lm=lm_spec, seed=seed,
                              backend=backend, limits=Limits(max_request_bytes=max_request_bytes))
    except ServerSetupError as exc:
        raise InputError(str(exc)) from None
    if lm_spec != "random":
        workers = 1  # a transformers model keeps one decoding cache
    auth = "API key required" if api_key else "no API key"
    echo(f"grammarkit serve: model {model!r}, {engine.vocab.vocab_size} token ids "
         f"({engine.vocab.source}), lm {lm_spec}, {backend} backend, {auth}, on http://{host}:{port}", err=True)
    serve(engine, host=host, port=port, api_key=api_key, log_level=log_level, workers=workers)
    sys.exit(0)
