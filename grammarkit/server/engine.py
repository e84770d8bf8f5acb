"""`CompletionEngine`: checked ``/v1/completions`` requests in, SGLang-shaped responses and stream
chunks out, generating through a grammarkit backend. No HTTP here (see :mod:`.app`)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from grammarkit.client.protocol import (
    CompletionRequest,
    RequestError,
    check_request,
    compile_constraint,
    problem,
)
from grammarkit.client.types import (
    CompletionChoice,
    CompletionChunk,
    CompletionResponse,
    LogProbs,
    Usage,
)

if TYPE_CHECKING:
    from grammarkit.generate.backend import Backend
    from grammarkit.generate.completion import Chunk, TokenLogprob
    from grammarkit.generate.params import SamplingParams
    from grammarkit.grammar import Grammar
    from grammarkit.vocab import Vocabulary

ANY_TEXT = "root ::= [^]*"
"""The grammar of requests without a constraint: any text."""

NO_EFFECT_FIELDS = (
    "best_of", "suffix", "user", "skip_special_tokens", "spaces_between_special_tokens",
    "custom_params", "logprob_start_len", "lora_path", "priority", "return_hidden_states",
    "return_logprob", "return_routed_experts", "return_text_in_logprobs", "rid",
    "token_ids_logprob", "top_logprobs_num",
)
"""Fields accepted, as SGLang accepts them, that change nothing here (``best_of`` and
``suffix`` are ignored by SGLang's completions too); responses name them with unknown fields."""

UNSUPPORTED_FIELDS = {
    "stop_regex": "stop strings (`stop`) are supported, stop regexes are not",
    "structural_tag": "use `ebnf`, `regex` or `json_schema`",
    "custom_logit_processor": "custom logit processors run inside SGLang only",
}
"""SGLang fields that change the output and that this server cannot honour: refused, not
silently ignored."""


@dataclass(frozen=True)
class Limits:
    """What one request may ask of the server.

    Parameters
    ----------
    context_length
        Prompt tokens plus ``max_tokens`` of each prompt.
    max_choices
        Prompts times ``n``.
    max_logprobs
        The largest ``logprobs`` (top alternatives per token).
    max_request_bytes
        The largest request body.
    """

    context_length: int = 32768
    max_choices: int = 64
    max_logprobs: int = 20
    max_request_bytes: int = 1 << 20


class CompletionEngine:
    """Serves completion requests with a backend over one vocabulary.

    Parameters
    ----------
    backend
        A grammarkit backend (``native`` with a ``RandomLM`` by default in ``grammarkit serve``).
    vocab
        Its vocabulary: prompt ids are checked against it and echoed through it.
    model
        The model name ``/v1/models`` lists (requests may name any model, as with SGLang).
    limits
        Per-request limits.
    """

    def __init__(self, backend: Backend, vocab: Vocabulary, model: str,
                 limits: Limits | None = None, grammar_cache_size: int = 64):
        self.backend = backend
        self.vocab = vocab
        self.model = model
        self.limits = limits or Limits()
        self._grammars: OrderedDict[tuple[str, str], Grammar] = OrderedDict()
        self._grammar_cache_size = grammar_cache_size
        self._lock = threading.Lock()
        self._compiling: dict[tuple[str, str], threading.Lock] = {}
        self.grammar_seconds = 0.0
        """Seconds spent compiling grammars and computing token masks (non-streamed requests)."""
        self.total_seconds = 0.0
        """Seconds spent compiling grammars and generating (non-streamed requests)."""
        self.requests = 0
        """Requests answered with completions."""
        self.active = 0
        """Requests generating now (a stream stops when its client leaves)."""

    # -- requests --------------------------------------------------------------------------

    def parse(self, body: bytes) -> CompletionRequest:
        """The checked request in ``body`` (JSON bytes).

        Raises
        ------
        RequestError
            GK376 for a body that is not JSON; the protocol's rules (GK370-GK374); and this
            server's: GK375 token ids beyond the vocabulary, GK378 unsupported fields, GK379
            limits.
        """
        try:
            decoded = json.loads(body)
        except (ValueError, RecursionError) as exc:
            where = f" at line {exc.lineno}, column {exc.colno}" \
                if isinstance(exc, json.JSONDecodeError) else ""
            reason = getattr(exc, "msg", "nested too deeply" if isinstance(exc, RecursionError)
                             else "not UTF-8")
            raise RequestError([problem("GK376", "", f"the request body is not valid JSON{where}"
                                        f": {reason}", "send a JSON object")]) from None
        request = check_request(decoded, text_prompts=False)
        problems = [*self._unsupported(decoded), *self._vocabulary_problems(request),
                    *self._limit_problems(request)]
        if problems:
            raise RequestError(problems)
        return request

    def grammar(self, request: CompletionRequest) -> Grammar:
        """The request's grammar, compiled once per distinct text (an LRU cache), so that the
        decoder's per-grammar caches are shared by requests with the same grammar."""
        key = request.constraint or ("ebnf", ANY_TEXT)
        with self._lock:
            cached = self._grammars.get(key)
            if cached is not None:
                self._grammars.move_to_end(key)
                return cached
            gate = self._compiling.setdefault(key, threading.Lock())
        with gate:  # one compile per text, even when many requests bring it at once
            try:
                with self._lock:
                    cached = self._grammars.get(key)
                if cached is None:
                    started = time.perf_counter()
                    cached = compile_constraint(*key)
                    elapsed = time.perf_counter() - started
                    with self._lock:
                        self.grammar_seconds += elapsed
                        self.total_seconds += elapsed
                        self._grammars[key] = cached
                        while len(self._grammars) > self._grammar_cache_size:
                            self._grammars.popitem(last=False)
            finally:
                with self._lock:
                    self._compiling.pop(key, None)
        return cached

    def complete(self, request: CompletionRequest) -> CompletionResponse:
        """Generate the whole response (blocking: call it from a worker thread).

        Raises
        ------
        RequestError
            When the grammar does not compile (with its located diagnostics).
        """
        with self._activity():
            return self._complete(request)

    def _complete(self, request: CompletionRequest) -> CompletionResponse:
        grammar = self.grammar(request)
        params = self.sampling_params(request)
        choices: list[CompletionChoice] = []
        prompt_tokens = completion_tokens = 0
        for p, prompt in enumerate(request.prompts):
            completion = _checked(self.backend.generate, grammar, prompt, params)
            self._count(completion.timing.mask_seconds, completion.timing.total_seconds)
            prompt_tokens += completion.prompt_tokens
            completion_tokens += completion.completion_tokens
            echo = self.prompt_text(prompt) if request.echo else ""
            for choice in completion.choices:
                text = echo + choice.text + _kept_stop(request, choice.matched_stop)
                logprobs = self._logprobs(choice.logprobs, len(echo)) \
                    if request.logprobs is not None else None
                choices.append(CompletionChoice(p * request.n + choice.index, text,
                                                choice.finish_reason, choice.matched_stop,
                                                logprobs))
        with self._lock:
            self.requests += 1
        return CompletionResponse(_request_id(), "text_completion", int(time.time()),
                                  request.model, choices,
                                  Usage(prompt_tokens, completion_tokens,
                                        prompt_tokens + completion_tokens, 0, 0))

    def stream(self, request: CompletionRequest) -> Generator[CompletionChunk, None, None]:
        """The response as stream chunks, SGLang's shapes: one chunk per piece of text with
        the choice's ``index``; the last of each choice carries ``finish_reason``; then, with
        ``stream_options.include_usage``, a chunk with ``usage`` and no choices. Blocking."""
        with self._activity():
            yield from self._stream(request)

    def _stream(self, request: CompletionRequest) -> Generator[CompletionChunk, None, None]:
        grammar = self.grammar(request)
        params = self.sampling_params(request)
        ident, created = _request_id(), int(time.time())
        prompt_tokens = completion_tokens = 0
        for p, prompt in enumerate(request.prompts):
            prompt_tokens += len(prompt)
            echo = self.prompt_text(prompt) if request.echo else ""
            first: set[int] = set()
            offsets: dict[int, int] = {}
            for chunk in _checked(_eager_first, self.backend.stream(grammar, prompt, params)):
                completion_tokens += len(chunk.token_ids)
                text = chunk.text
                if chunk.index not in first:
                    first.add(chunk.index)
                    text = echo + text
                if chunk.finish_reason is not None:
                    text += _kept_stop(request, chunk.matched_stop)
                    completion_tokens += isinstance(chunk.matched_stop, int)
                logprobs = None
                if request.logprobs is not None:
                    offset = offsets.get(chunk.index, len(echo))
                    logprobs = self._logprobs(chunk.logprobs, offset)
                    offsets[chunk.index] = offset + len(chunk.text)
                usage = Usage(prompt_tokens, completion_tokens, prompt_tokens + completion_tokens,
                              0, 0) if request.continuous_usage_stats else None
                yield CompletionChunk(ident, "text_completion", created, request.model,
                                      [CompletionChoice(p * request.n + chunk.index, text,
                                                        chunk.finish_reason, chunk.matched_stop,
                                                        logprobs)], usage)
        with self._lock:
            self.requests += 1
        if request.include_usage:
            yield CompletionChunk(ident, "text_completion", created, request.model, [],
                                  Usage(prompt_tokens, completion_tokens,
                                        prompt_tokens + completion_tokens, 0, 0))

    def metrics(self) -> dict[str, float]:
        """Counters since start: requests, grammar seconds (compiling grammars, token masks),
        total seconds (compiling and generating); the last two cover non-streamed requests."""
        with self._lock:
            return {"requests_total": self.requests, "requests_active": self.active,
                    "grammar_seconds_total": self.grammar_seconds,
                    "generation_seconds_total": self.total_seconds}

    def sampling_params(self, request: CompletionRequest) -> SamplingParams:
        from grammarkit.generate.params import SamplingParams

        try:
            return SamplingParams(
                max_tokens=request.max_tokens, min_tokens=request.min_tokens,
                temperature=request.temperature, top_p=request.top_p, top_k=request.top_k,
                min_p=request.min_p, frequency_penalty=request.frequency_penalty,
                presence_penalty=request.presence_penalty,
                repetition_penalty=request.repetition_penalty,
                logit_bias=dict(request.logit_bias) if request.logit_bias else None,
                stop=request.stop, stop_token_ids=request.stop_token_ids,
                ignore_eos=request.ignore_eos, seed=request.seed, n=request.n,
                logprobs=request.logprobs)
        except ValueError as exc:
            raise RequestError([problem("GK371", "", str(exc))]) from None

    def prompt_text(self, prompt: Sequence[int] | str) -> str:
        """A prompt as text (for ``echo``)."""
        if isinstance(prompt, str):
            return prompt
        return b"".join(self.vocab.token_bytes(t) for t in prompt).decode("utf-8", "replace")

    # -- helpers ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _activity(self) -> Iterator[None]:
        with self._lock:
            self.active += 1
        try:
            yield
        finally:
            with self._lock:
                self.active -= 1

    def _count(self, grammar_seconds: float, total_seconds: float) -> None:
        with self._lock:
            self.grammar_seconds += grammar_seconds
            self.total_seconds += total_seconds

    def _logprobs(self, steps: list[TokenLogprob] | None, offset: int) -> LogProbs:
        tokens: list[str] = []
        values: list[float | None] = []
        tops: list[dict[str, float] | None] = []
        offsets: list[int] = []
        for step in steps or []:
            offsets.append(offset)
            tokens.append(step.text)
            offset += len(step.text)
            values.append(step.logprob)
            tops.append({self._token_text(t): lp for t, lp in step.top_logprobs.items()})
        return LogProbs(tokens, values, tops, offsets)

    def _token_text(self, token_id: int) -> str:
        return self.vocab.token_bytes(token_id).decode("utf-8", "replace")

    def _unsupported(self, body: Any) -> list[Any]:
        return [problem("GK378", f"/{name}", f"{name} is not supported by grammarkit's server",
                        hint) for name, hint in UNSUPPORTED_FIELDS.items()
                if body.get(name) is not None]

    def _vocabulary_problems(self, request: CompletionRequest) -> list[Any]:
        size = getattr(getattr(self.backend, "lm", None), "vocab_size", None) \
            or self.vocab.vocab_size
        found = []
        for p, prompt in enumerate(request.prompts):
            bad = next((i for i, t in enumerate(prompt) if isinstance(t, int) and t >= size), None)
            if bad is not None:
                pointer = f"/prompt/{p}/{bad}" if request.batched else f"/prompt/{bad}"
                found.append(problem("GK375", pointer, f"token id {prompt[bad]} is beyond the "
                                     f"vocabulary ({size} ids)", f"token ids go from 0 to "
                                     f"{size - 1}; was the prompt tokenized for another model?"))
        for name, ids in (("stop_token_ids", request.stop_token_ids),
                          ("logit_bias", tuple(request.logit_bias or ()))):
            bad_ids = [t for t in ids if t >= size]
            if bad_ids:
                found.append(problem("GK375", f"/{name}", f"{name} has token id {bad_ids[0]}, "
                                     f"beyond the vocabulary ({size} ids)"))
        return found

    def _limit_problems(self, request: CompletionRequest) -> list[Any]:
        limits = self.limits
        found = []
        choices = len(request.prompts) * request.n
        if choices > limits.max_choices:
            found.append(problem("GK379", "/n", f"the request asks for {choices} completions "
                                 f"(prompts x n); this server allows {limits.max_choices}",
                                 "split the batch"))
        if request.logprobs is not None and request.logprobs > limits.max_logprobs:
            found.append(problem("GK379", "/logprobs", f"logprobs is {request.logprobs}; this "
                                 f"server returns at most {limits.max_logprobs}"))
        longest = max((len(p) for p in request.prompts), default=0)
        if longest + request.max_tokens > limits.context_length:
            found.append(problem("GK379", "/max_tokens", f"the prompt ({longest} tokens) plus "
                                 f"max_tokens ({request.max_tokens}) exceeds the context length "
                                 f"({limits.context_length})", "lower max_tokens"))
        return found


def _eager_first(chunks: Iterator[Chunk]) -> Iterator[Chunk]:
    """``chunks``, with the first one computed eagerly, so that errors raised before any text
    (a grammar that does not compile) surface before the stream starts."""
    try:
        first = next(chunks)
    except StopIteration:
        return iter(())

    def rest() -> Iterator[Chunk]:
        yield first
        yield from chunks

    return rest()


def _checked(call: Any, *args: Any) -> Any:
    """``call(*args)``, with grammar and generation errors turned into :class:`RequestError`."""
    from grammarkit.diagnostics import GrammarError
    from grammarkit.generate.errors import GenerationError

    try:
        return call(*args)
    except GrammarError as exc:
        raise RequestError([d for d in exc.diagnostics if d.is_error]) from None
    except GenerationError as exc:
        raise RequestError([exc.diagnostic]) from None


def _kept_stop(request: CompletionRequest, matched: int | str | None) -> str:
    """With ``no_stop_trim``, the matched stop string stays in the text (SGLang's behaviour)."""
    return matched if request.no_stop_trim and isinstance(matched, str) else ""


def _request_id() -> str:
    return f"cmpl-{uuid.uuid4().hex}"
