"""`CompletionsClient`: a blocking client for SGLang/OpenAI-style completions servers."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, overload

import httpx

from grammarkit.client.core import (
    CHAT_PATH,
    COMPLETIONS_PATH,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    RETRYABLE_ERRORS,
    RETRYABLE_STATUS,
    ClientCore,
)
from grammarkit.client.errors import APIConnectionError, CompletionsError, ResponseFormatError
from grammarkit.client.types import (
    ChatCompletionResponse,
    CompletionChunk,
    CompletionResponse,
    ModelCard,
    Usage,
)

if TYPE_CHECKING:
    from typing import Self


class CompletionStream:
    """The chunks of a streamed completion, as they arrive; ends at ``data: [DONE]``.

    Iterate it (once), or use it as a context manager to close the connection early.
    ``usage`` holds the final usage chunk's counts (``stream_options={"include_usage": True}``).

    Raises
    ------
    APIConnectionError
        When the connection breaks or the stream ends before ``[DONE]``.
    APIStatusError
        When the server sends an error event.
    """

    def __init__(self, core: ClientCore, url: str, response: httpx.Response,
                 stack: contextlib.ExitStack):
        self._core = core
        self._url = url
        self._response = response
        self._stack = stack
        self.usage: Usage | None = None

    def __iter__(self) -> Iterator[CompletionChunk]:
        from httpx_sse import EventSource

        count = 0
        try:
            for sse in EventSource(self._response).iter_sse():
                chunk = self._core.event(sse.data)
                if chunk is None:
                    return
                count += 1
                if chunk.usage is not None:
                    self.usage = chunk.usage
                yield chunk
            raise APIConnectionError(f"the stream from {self._url} ended after {count} chunks "
                                     "without data: [DONE] (the server closed the connection)")
        except httpx.TransportError as exc:
            raise self._core.connection_error(exc, self._url, f" after {count} chunks") from None
        finally:
            self.close()

    def text(self) -> str:
        """Read the whole stream; the first choice's text."""
        return "".join(c.choices[0].text for c in self if c.choices and c.choices[0].index == 0)

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CompletionsClient:
    """A client for ``/v1/completions`` (SGLang routes and OpenAI-legacy servers) on httpx.

    Parameters
    ----------
    base_url
        The server, e.g. ``http://127.0.0.1:30000`` (a trailing ``/v1`` is accepted).
    api_key
        Sent as ``Authorization: Bearer``; defaults to ``$GRAMMARKIT_API_KEY``. Never printed,
        logged, or put in an exception or repr.
    timeout
        Seconds (or an ``httpx.Timeout``) for connecting and between bytes received.
    retries
        Retries, with exponential backoff, on 429, 5xx and connection errors; never on other 4xx.
    backoff
        Seconds before the first retry (doubling, with jitter, up to 8 s; ``Retry-After`` wins).
    text_prompts
        Whether the server takes text prompts (OpenAI-legacy); SGLang token-ID endpoints do not.
    check_grammar
        Compile and lint the request's grammar before sending; errors raise
        :class:`~grammarkit.client.protocol.RequestError` with located diagnostics.
    transport
        An httpx transport (tests, proxies).
    """

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, backoff: float = 0.5,
                 text_prompts: bool = False, check_grammar: bool = True,
                 transport: httpx.BaseTransport | None = None):
        self._core = ClientCore(base_url, api_key, retries, backoff, text_prompts, check_grammar)
        self._http = httpx.Client(base_url=self._core.base_url, auth=self._core.auth,
                                  timeout=timeout, transport=transport)

    def __repr__(self) -> str:
        return self._core.describe(type(self).__name__)

    @overload
    def completions(self, model: str, prompt: Sequence[Any] | str, *,
                    stream: Literal[False] = ..., constraint: Any = ...,
                    extra_body: Mapping[str, Any] | None = ..., **fields: Any
                    ) -> CompletionResponse: ...

    @overload
    def completions(self, model: str, prompt: Sequence[Any] | str, *, stream: Literal[True],
                    constraint: Any = ..., extra_body: Mapping[str, Any] | None = ...,
                    **fields: Any) -> CompletionStream: ...

    def completions(self, model: str, prompt: Sequence[Any] | str, *, stream: bool = False,
                    constraint: Any = None, extra_body: Mapping[str, Any] | None = None,
                    **fields: Any) -> CompletionResponse | CompletionStream:
        """``POST /v1/completions``.

        Parameters
        ----------
        model
            The model name; a model the provider serves chat-only warns before sending.
        prompt
            Token ids, or a list of token-id lists for a batch (strings with ``text_prompts``).
        stream
            Return a :class:`CompletionStream` of chunks instead of the whole response.
        constraint
            A ``Grammar`` or EBNF text (sent as ``ebnf``), or the generation package's
            ``JsonSchema``/``Regex`` (sent as ``json_schema``/``regex``).
        extra_body
            Fields the protocol does not list, sent as given.
        **fields
            Request fields by their wire names: ``max_tokens``, ``temperature``, ``ebnf``,
            ``regex``, ``json_schema`` (text or a dict), ``stop``, ``n``, ``logprobs``, ...

        Raises
        ------
        RequestError
            Before sending, when the request breaks the server's rules.
        APIStatusError
            Its subclasses by status: ``BadRequestError`` (400), ``AuthenticationError`` (401),
            ``ChatOnlyModelError`` (404), ``RateLimitError`` (429), ``InternalServerError``.
        APIConnectionError, APITimeoutError
            When the server cannot be reached or does not answer in time.
        """
        body = self._core.completion_body(model, prompt, constraint=constraint, stream=stream,
                                          fields=fields, extra_body=extra_body)
        if stream:
            return self._open_stream(COMPLETIONS_PATH, body, model)
        return CompletionResponse.from_json(self._post(COMPLETIONS_PATH, body, model))

    def chat_completions(self, model: str, messages: list[dict[str, Any]], *,
                         response_format: Mapping[str, Any] | None = None,
                         extra_body: Mapping[str, Any] | None = None,
                         **fields: Any) -> ChatCompletionResponse:
        """``POST /v1/chat/completions``, for models served chat-only; ``response_format=
        {"type": "json_object"}`` (or ``json_schema``) constrains the answer to JSON."""
        body = self._core.chat_body(model, messages, response_format, fields, extra_body)
        return ChatCompletionResponse.from_json(self._post(CHAT_PATH, body, None))

    def models(self) -> list[ModelCard]:
        """``GET /v1/models``."""
        data = self._request("GET", "/v1/models", None, None).json()
        return [ModelCard.from_json(card) for card in data.get("data", [])]

    def health(self) -> bool:
        """Whether ``GET /health`` answers 200."""
        try:
            return self._http.get("/health").status_code == 200
        except httpx.TransportError:
            return False

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- transport -------------------------------------------------------------------------

    def _post(self, path: str, body: dict[str, Any], model: str | None) -> Any:
        response = self._request("POST", path, body, model)
        try:
            return response.json()
        except ValueError:
            raise ResponseFormatError(f"the response from {path} is not JSON") from None

    def _request(self, method: str, path: str, body: dict[str, Any] | None,
                 model: str | None) -> httpx.Response:
        url = self._core.base_url + path
        for attempt in range(self._core.retries + 1):
            response = None
            try:
                response = self._http.request(method, path, json=body)
            except RETRYABLE_ERRORS as exc:
                error: CompletionsError = self._core.connection_error(exc, url)
            except httpx.TransportError as exc:
                raise self._core.connection_error(exc, url) from None
            else:
                if response.status_code < 400:
                    return response
                error = self._core.error(response, path, model)
                if response.status_code not in RETRYABLE_STATUS:
                    raise error
            if attempt == self._core.retries:
                raise error
            time.sleep(self._core.retry_delay(attempt, response))
        raise AssertionError("unreachable")

    def _open_stream(self, path: str, body: dict[str, Any], model: str) -> CompletionStream:
        url = self._core.base_url + path
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        for attempt in range(self._core.retries + 1):
            stack = contextlib.ExitStack()
            response = None
            try:
                response = stack.enter_context(
                    self._http.stream("POST", path, json=body, headers=headers))
                if response.status_code < 400:
                    return CompletionStream(self._core, url, response, stack)
                response.read()
                error: CompletionsError = self._core.error(response, path, model)
                stack.close()
                if response.status_code not in RETRYABLE_STATUS:
                    raise error
            except RETRYABLE_ERRORS as exc:
                stack.close()
                error = self._core.connection_error(exc, url)
            except httpx.TransportError as exc:
                stack.close()
                raise self._core.connection_error(exc, url) from None
            if attempt == self._core.retries:
                raise error
            time.sleep(self._core.retry_delay(attempt, response))
        raise AssertionError("unreachable")

