"""The ``remote`` backend: generation on an SGLang-compatible server through
:class:`grammarkit.client.CompletionsClient` (extra ``client``)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from grammarkit.generate.completion import Choice, Chunk, Completion, Timing, TokenLogprob
from grammarkit.generate.constraint import Constraint, request_field
from grammarkit.generate.errors import require
from grammarkit.generate.params import SamplingParams

if TYPE_CHECKING:
    from grammarkit.client.sync import CompletionsClient
    from grammarkit.client.types import CompletionChoice, LogProbs


URL_ENV = "GRAMMARKIT_URL"
MODEL_ENV = "GRAMMARKIT_MODEL"
DEFAULT_URL = "http://127.0.0.1:30000"


class RemoteBackend:
    """Sends each request to ``POST /v1/completions``: the constraint travels as the server's
    ``ebnf`` field, or as ``regex``/``json_schema`` when it came from one, so the server
    converts it itself.

    Parameters
    ----------
    url
        The server; default ``$GRAMMARKIT_URL``, else ``http://127.0.0.1:30000`` (where
        ``grammarkit serve`` listens by default).
    model
        The model name to request; default ``$GRAMMARKIT_MODEL``, else ``default``.
    api_key, timeout, retries, text_prompts
        As for :class:`~grammarkit.client.CompletionsClient` (the key defaults to
        ``$GRAMMARKIT_API_KEY``).
    client
        A ready client instead (its settings win).

    Notes
    -----
    Servers do not return token ids on ``/v1/completions``: the choices' ``token_ids`` are empty
    and ``TokenLogprob.token_id`` is ``-1``. ``Timing`` has the wall time only.
    """

    name = "remote"

    def __init__(self, url: str | None = None, model: str | None = None, *,
                 api_key: str | None = None, timeout: float = 60.0, retries: int = 2,
                 text_prompts: bool = False, client: CompletionsClient | None = None):
        if client is None:
            url = url or os.environ.get(URL_ENV, DEFAULT_URL)
            require("httpx", "client", "the remote backend")
            from grammarkit.client.sync import CompletionsClient

            client = CompletionsClient(url, api_key, timeout=timeout, retries=retries,
                                       text_prompts=text_prompts)
        self.client = client
        self.model = model or os.environ.get(MODEL_ENV, "default")

    def generate(self, constraint: Constraint, prompt: Sequence[int] | str,
                 params: SamplingParams | None = None) -> Completion:
        """The whole completion, from one request."""
        params = params or SamplingParams()
        started = time.perf_counter()
        response = self.client.completions(self.model, _prompt(prompt),
                                           **self._fields(constraint, params))
        choices = [Choice(c.index, c.text, [], _finish(c.finish_reason), c.matched_stop,
                          _logprobs(c.logprobs) if params.logprobs is not None else None)
                   for c in response.choices]
        usage = response.usage
        return Completion(choices, usage.prompt_tokens if usage else 0,
                          usage.completion_tokens if usage else 0,
                          Timing(total_seconds=time.perf_counter() - started))

    def stream(self, constraint: Constraint, prompt: Sequence[int] | str,
               params: SamplingParams | None = None) -> Iterator[Chunk]:
        """The completion as the server streams it (the usage chunk is dropped)."""
        params = params or SamplingParams()
        stream = self.client.completions(self.model, _prompt(prompt), stream=True,
                                         **self._fields(constraint, params))
        for chunk in stream:
            for c in chunk.choices:
                yield _chunk(c, params)

    def _fields(self, constraint: Constraint, params: SamplingParams) -> dict[str, Any]:
        name, text = request_field(constraint)
        fields: dict[str, Any] = {
            name: text, "max_tokens": params.max_tokens, "min_tokens": params.min_tokens,
            "temperature": params.temperature, "top_p": params.top_p, "top_k": params.top_k,
            "min_p": params.min_p, "frequency_penalty": params.frequency_penalty,
            "presence_penalty": params.presence_penalty,
            "repetition_penalty": params.repetition_penalty, "n": params.n,
            "seed": params.seed, "logprobs": params.logprobs,
            "stop": list(params.stop) or None,
            "stop_token_ids": list(params.stop_token_ids) or None,
            "ignore_eos": params.ignore_eos or None,
        }
        if params.logit_bias:
            fields["logit_bias"] = {str(k): v for k, v in params.logit_bias.items()}
        return fields

    def __repr__(self) -> str:
        return f"RemoteBackend({self.client!r}, model={self.model!r})"


def _prompt(prompt: Sequence[int] | str) -> list[int] | str:
    return prompt if isinstance(prompt, str) else [int(t) for t in prompt]


def _finish(reason: str | None) -> Any:
    return "length" if reason == "length" else "stop"


def _chunk(choice: CompletionChoice, params: SamplingParams) -> Chunk:
    return Chunk(choice.index, choice.text, [],
                 None if choice.finish_reason is None else _finish(choice.finish_reason),
                 choice.matched_stop,
                 _logprobs(choice.logprobs) if params.logprobs is not None else None)


def _logprobs(logprobs: LogProbs | None) -> list[TokenLogprob] | None:
    if logprobs is None:
        return None
    return [TokenLogprob(-1, text, value if value is not None else 0.0, {})
            for text, value in zip(logprobs.tokens, logprobs.token_logprobs)]
