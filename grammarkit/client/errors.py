"""Exceptions of the completions client. None of them ever holds the API key."""

from __future__ import annotations

from typing import Any

from grammarkit.client.protocol import RequestError

__all__ = [
    "APIConnectionError",
    "APIStatusError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ChatOnlyModelError",
    "ChatOnlyModelWarning",
    "CompletionsError",
    "InternalServerError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestError",
    "RequestTooLargeError",
    "ResponseFormatError",
]


class CompletionsError(Exception):
    """Base class of the errors the client raises after sending (or trying to send)."""


class ResponseFormatError(CompletionsError):
    """The server answered with a body that is not the protocol's shape."""


class APIConnectionError(CompletionsError):
    """The server could not be reached, or the connection broke (also mid-stream)."""


class APITimeoutError(APIConnectionError):
    """The server did not answer within the client's timeout."""


class APIStatusError(CompletionsError):
    """The server answered with an error status.

    Attributes
    ----------
    status_code
        The HTTP status.
    message
        The server's message (SGLang's error body ``message``), or the response text.
    type
        The error body's ``type`` (``BadRequestError``, ...), if any.
    body
        The decoded error body, if it was JSON.
    """

    def __init__(self, status_code: int, message: str, *, type: str | None = None,
                 body: Any = None):
        self.status_code = status_code
        self.message = message
        self.type = type
        self.body = body
        super().__init__(f"{status_code} {type or 'error'}: {message}")


class BadRequestError(APIStatusError):
    """400: the server refused the request (bad field, grammar that does not compile, ...)."""


class AuthenticationError(APIStatusError):
    """401: missing or wrong API key."""


class PermissionDeniedError(APIStatusError):
    """403."""


class NotFoundError(APIStatusError):
    """404: unknown route or model."""


class ChatOnlyModelError(NotFoundError):
    """404 on ``/v1/completions``: the provider serves this model through chat completions only."""


class RequestTooLargeError(APIStatusError):
    """413: the request body is larger than the server accepts."""


class RateLimitError(APIStatusError):
    """429: too many requests (retried with backoff before this is raised)."""


class InternalServerError(APIStatusError):
    """5xx (retried with backoff before this is raised)."""


class ChatOnlyModelWarning(UserWarning):
    """The provider lists the model as served through chat completions only."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    413: RequestTooLargeError,
    429: RateLimitError,
}


def status_error(status_code: int, body: Any, text: str) -> APIStatusError:
    """The exception for an error response: SGLang's body ``{"object": "error", "message": ...}``
    (or OpenAI's ``{"error": {...}}``) gives the message and type."""
    message, kind = text.strip() or f"HTTP {status_code}", None
    if isinstance(body, dict):
        error = body.get("error")
        inner: dict[str, Any] = error if isinstance(error, dict) else body
        if isinstance(inner.get("message"), str):
            message = inner["message"]
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
        if isinstance(inner.get("type"), str):
            kind = inner["type"]
    cls = _BY_STATUS.get(status_code, InternalServerError if status_code >= 500 else APIStatusError)
    return cls(status_code, message, type=kind, body=body)
