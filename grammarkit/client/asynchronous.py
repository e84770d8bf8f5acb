"""`AsyncCompletionsClient`: the asyncio twin of :class:`~grammarkit.client.CompletionsClient`."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
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


class AsyncCompletionStream:
    """The chunks of a streamed completion (``async for``); ends at ``data: [DONE]``.

    ``usage`` holds the final usage chunk's counts. Raises as
    :class:`~grammarkit.client.sync.CompletionStream` does.
    """

    def __init__(self, core: ClientCore, url: str, response: httpx.Response,
                 stack: contextlib.AsyncExitStack):
        self._core = core
        self._url = url
        self._response = response
        self._stack = stack
        self.usage: Usage | None = None

    async def __aiter__(self) -> AsyncIterator[CompletionChunk]:
        from httpx_sse import EventSource

        count = 0
        try:
            async for sse in EventSource(self._response).aiter_sse():
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
            await self.aclose()

    async def text(self) -> str:
        """Read the whole stream; the first choice's text."""
        parts = [c.choices[0].text async for c in self if c.choices and c.choices[0].index == 0]
        return "".join(parts)

    async def aclose(self) -> None:
        await self._stack.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncCompletionsClient:
    """The asyncio client for ``/v1/completions``; parameters and errors as
    :class:`~grammarkit.client.CompletionsClient`."""

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, backoff: float = 0.5,
                 text_prompts: bool = False, check_grammar: bool = True,
                 transport: httpx.AsyncBaseTransport | None = None,
                 max_connections: int = 100):
        self._core = ClientCore(base_url, api_key, retries, backoff, text_prompts, check_grammar)
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        self._http = httpx.AsyncClient(base_url=self._core.base_url, auth=self._core.auth,
                                       timeout=timeout, transport=transport, limits=limits)

    def __repr__(self) -> str:
        return self._core.describe(type(self).__name__)

    @overload
    async def completions(self, model: str, prompt: Sequence[Any] | str, *,
                          stream: Literal[False] = ..., constraint: Any = ...,
                          extra_body: Mapping[str, Any] | None = ..., **fields: Any
                          ) -> CompletionResponse: ...

    @overload
    async def completions(self, model: str, prompt: Sequence[Any] | str, *,
                          stream: Literal[True], constraint: Any = ...,
                          extra_body: Mapping[str, Any] | None = ..., **fields: Any
                          ) -> AsyncCompletionStream: ...

    async def completions(self, model: str, prompt: Sequence[Any] | str, *, stream: bool = False,
                          constraint: Any = None, extra_body: Mapping[str, Any] | None = None,
                          **fields: Any) -> CompletionResponse | AsyncCompletionStream:
        """``POST /v1/completions``; see :meth:`CompletionsClient.completions`."""
        body = self._core.completion_body(model, prompt, constraint=constraint, stream=stream,
                                          fields=fields, extra_body=extra_body)
        if stream:
            return await self._open_stream(COMPLETIONS_PATH, body, model)
        return CompletionResponse.from_json(await self._post(COMPLETIONS_PATH, body, model))

    async def chat_completions(self, model: str, messages: list[dict[str, Any]], *,
                               response_format: Mapping[str, Any] | None = None,
                               extra_body: Mapping[str, Any] | None = None,
                               **fields: Any) -> ChatCompletionResponse:
        """``POST /v1/chat/completions``; see :meth:`CompletionsClient.chat_completions`."""
        body = self._core.chat_body(model, messages, response_format, fields, extra_body)
        return ChatCompletionResponse.from_json(await self._post(CHAT_PATH, body, None))

    async def models(self) -> list[ModelCard]:
        """``GET /v1/models``."""
        data = (await self._request("GET", "/v1/models", None, None)).json()
        return [ModelCard.from_json(card) for card in data.get("data", [])]

    async def health(self) -> bool:
        """Whether ``GET /health`` answers 200."""
        try:
            return (await self._http.get("/health")).status_code == 200
        except httpx.TransportError:
            return False

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    # -- transport -------------------------------------------------------------------------

    async def _post(self, path: str, body: dict[str, Any], model: str | None) -> Any:
        response = await self._request("POST", path, body, model)
        try:
            return response.json()
        except ValueError:
            raise ResponseFormatError(f"the response from {path} is not JSON") from None

    async def _request(self, method: str, path: str, body: dict[str, Any] | None,
                       model: str | None) -> httpx.Response:
        url = self._core.base_url + path
        for attempt in range(self._core.retries + 1):
            response = None
            try:
                response = await self._http.request(method, path, json=body)
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
            await asyncio.sleep(self._core.retry_delay(attempt, response))
        raise AssertionError("unreachable")

    async def _open_stream(self, path: str, body: dict[str, Any], model: str
                           ) -> AsyncCompletionStream:
        url = self._core.base_url + path
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-store"}
        for attempt in range(self._core.retries + 1):
            stack = contextlib.AsyncExitStack()
            response = None
            try:
                response = await stack.enter_async_context(
                    self._http.stream("POST", path, json=body, headers=headers))
                if response.status_code < 400:
                    return AsyncCompletionStream(self._core, url, response, stack)
                await response.aread()
                error: CompletionsError = self._core.error(response, path, model)
                await stack.aclose()
                if response.status_code not in RETRYABLE_STATUS:
                    raise error
            except RETRYABLE_ERRORS as exc:
                await stack.aclose()
                error = self._core.connection_error(exc, url)
            except httpx.TransportError as exc:
                await stack.aclose()
                raise self._core.connection_error(exc, url) from None
            if attempt == self._core.retries:
                raise error
            await asyncio.sleep(self._core.retry_delay(attempt, response))
        raise AssertionError("unreachable")
