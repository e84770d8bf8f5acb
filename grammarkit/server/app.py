"""The HTTP layer: an SGLang-compatible FastAPI app over a :class:`CompletionEngine`.

Routes: ``POST /v1/completions``, ``GET /v1/models``, ``GET /health``, and ``GET /metrics``
(Prometheus text: requests, seconds in grammar work and in generation). Errors use SGLang's body
``{"object": "error", "message": ..., "type": "BadRequestError", "param": null, "code": 400}``;
generation runs in worker threads, so the event loop keeps serving while requests compute.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from grammarkit.client.protocol import CompletionRequest, RequestError, describe, problem
from grammarkit.client.types import CompletionChunk, ModelCard
from grammarkit.server.engine import NO_EFFECT_FIELDS, CompletionEngine

logger = logging.getLogger("grammarkit.server")

IGNORED_FIELDS_HEADER = "X-Grammarkit-Ignored-Fields"
"""Names the request fields the server ignored: unknown to the protocol (SGLang ignores them too),
or accepted without effect here (``NO_EFFECT_FIELDS``)."""

_TYPES = {400: "BadRequestError", 401: "AuthenticationError", 404: "NotFoundError",
          405: "MethodNotAllowedError", 413: "RequestTooLargeError", 500: "InternalServerError"}


def error_body(code: int, message: str) -> dict[str, Any]:
    """SGLang's error body (``ErrorResponse`` in its OpenAI protocol)."""
    return {"object": "error", "message": message, "type": _TYPES.get(code, "BadRequestError"),
            "param": None, "code": code}


def error_response(code: int, message: str, headers: dict[str, str] | None = None
                   ) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=code, headers=headers)


def create_app(engine: CompletionEngine, *, api_key: str | None = None,
               workers: int = 8) -> FastAPI:
    """The FastAPI app serving ``engine``.

    Parameters
    ----------
    engine
        Generates the completions.
    api_key
        When set, every route but ``/health`` needs ``Authorization: Bearer <api_key>`` (401
        otherwise). Compared in constant time; never logged.
    workers
        Requests generating at once (worker threads); more wait their turn without blocking
        the event loop.
    """
    app = FastAPI(title="grammarkit", docs_url=None, redoc_url=None, openapi_url=None)
    limiter = anyio.CapacityLimiter(workers)
    expected = f"Bearer {api_key}".encode() if api_key else None

    @app.middleware("http")
    async def authenticate(request: Request,
                           call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if expected is not None and request.url.path != "/health":
            given = request.headers.get("authorization", "").encode("utf-8", "replace")
            if not hmac.compare_digest(given, expected):
                return error_response(401, "missing or wrong API key (send Authorization: "
                                      "Bearer <key>)")
        return await call_next(request)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = f"{request.method} {request.url.path}: {exc.detail}"
        if exc.status_code == 404:
            message = f"no route {request.url.path}; this server has POST /v1/completions, " \
                      "GET /v1/models, GET /health and GET /metrics"
        return error_response(exc.status_code, message)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> Response:
        logger.exception("internal error on %s", request.url.path)
        return error_response(500, f"internal error: {type(exc).__name__} (see the server log)")

    @app.get("/health")
    async def health() -> Response:
        return Response(status_code=200)

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        card = ModelCard(engine.model, "grammarkit", int(time.time()),
                         engine.limits.context_length)
        return {"object": "list", "data": [card.to_json()]}

    @app.get("/metrics")
    async def metrics() -> Response:
        lines = [f"grammarkit_{name} {value}" for name, value in engine.metrics().items()]
        return Response("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    @app.post("/v1/completions")
    async def completions(request: Request) -> Response:
        body = await _read_body(request, engine.limits.max_request_bytes)
        if isinstance(body, Response):
            return body
        try:
            parsed = engine.parse(body)
        except RequestError as exc:
            return error_response(400, describe(exc.diagnostics))
        headers = {}
        ignored = [*parsed.ignored, *(name for name in NO_EFFECT_FIELDS
                                      if _given(parsed, name))]
        if ignored:
            logger.info("ignored request fields: %s", ", ".join(ignored))
            headers[IGNORED_FIELDS_HEADER] = ",".join(ignored)[:1000]
        if parsed.stream:
            return await _stream(engine, parsed, limiter, headers)
        try:
            response = await anyio.to_thread.run_sync(engine.complete, parsed, limiter=limiter)
        except RequestError as exc:
            return error_response(400, describe(exc.diagnostics), headers)
        return JSONResponse(response.to_json(), headers=headers)

    return app


def _given(request: CompletionRequest, name: str) -> bool:
    """Whether the request set ``name`` to something other than its default."""
    if name == "skip_special_tokens":
        return not request.skip_special_tokens
    return name in request.extra or getattr(request, name, None) is not None


async def _read_body(request: Request, limit: int) -> bytes | Response:
    """The request body, or a 413 as soon as it grows past ``limit`` bytes (a declared
    ``Content-Length`` over the limit is refused before reading)."""
    declared = request.headers.get("content-length")
    too_large = error_response(413, describe([problem(
        "GK377", "", f"the request body is larger than this server's limit ({limit} bytes)",
        "send a smaller request, or start the server with a larger --max-request-bytes")]))
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return too_large
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return too_large
        chunks.append(chunk)
    return b"".join(chunks)


async def _stream(engine: CompletionEngine, request: CompletionRequest,
                  limiter: anyio.CapacityLimiter, headers: dict[str, str]) -> Response:
    """A server-sent-event response; errors before the first chunk are a 400, later ones an
    error event (SGLang's ``{"error": {...}}``), and the stream always ends with ``[DONE]``."""
    chunks = engine.stream(request)
    done = object()

    def pull() -> Any:
        return next(chunks, done)

    try:
        first = await anyio.to_thread.run_sync(pull, limiter=limiter)
    except RequestError as exc:
        return error_response(400, describe(exc.diagnostics), headers)

    async def events() -> AsyncGenerator[str, None]:
        chunk = first
        try:
            while chunk is not done:
                assert isinstance(chunk, CompletionChunk)
                yield f"data: {json.dumps(chunk.to_json())}\n\n"
                chunk = await anyio.to_thread.run_sync(pull, limiter=limiter)
        except RequestError as exc:
            yield f"data: {json.dumps({'error': error_body(400, describe(exc.diagnostics))})}\n\n"
        except Exception as exc:  # the stream has started: report, do not drop the connection
            logger.exception("internal error while streaming")
            body = error_body(500, f"internal error: {type(exc).__name__} (see the server log)")
            yield f"data: {json.dumps({'error': body})}\n\n"
        finally:
            chunks.close()
        yield "data: [DONE]\n\n"

    return EventStreamResponse(events(), headers={"Cache-Control": "no-cache", **headers})


class EventStreamResponse(StreamingResponse):
    """A server-sent-event response that closes its events however the response ends: when the
    client leaves mid-stream, Starlette stops iterating without closing the generator, which
    would keep its generation (and the grammar matcher) alive."""

    def __init__(self, events: AsyncGenerator[str, None], headers: dict[str, str]):
        super().__init__(events, media_type="text/event-stream", headers=headers)
        self._events = events

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self._events.aclose()
