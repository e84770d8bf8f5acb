"""What the synchronous and asynchronous clients share: building and checking request bodies,
the API key, the retry policy, and turning responses and stream events into typed values."""

from __future__ import annotations

import json
import os
import random
import warnings
from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from grammarkit.client.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    ChatOnlyModelError,
    ChatOnlyModelWarning,
    ResponseFormatError,
    status_error,
)
from grammarkit.client.models import chat_only_hint, supports_completions
from grammarkit.client.protocol import (
    CONSTRAINT_FIELDS,
    REQUEST_FIELDS,
    RequestError,
    check_request,
    compile_constraint,
    describe,
    problem,
)
from grammarkit.client.types import CompletionChunk

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic

API_KEY_ENV = "GRAMMARKIT_API_KEY"
COMPLETIONS_PATH = "/v1/completions"
CHAT_PATH = "/v1/chat/completions"
DEFAULT_TIMEOUT = 60.0
DEFAULT_RETRIES = 2
MAX_BACKOFF = 8.0
MAX_RETRY_AFTER = 30.0

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Statuses worth retrying; every other 4xx is the request's fault and is raised at once."""

RETRYABLE_ERRORS = (httpx.ConnectError, httpx.ConnectTimeout, httpx.ReadError, httpx.WriteError,
                    httpx.RemoteProtocolError)
"""Connection failures before a response arrived; a read timeout is not retried (the request
may be running on the server)."""


class GrammarLintWarning(UserWarning):
    """The request's grammar compiles, but grammarkit's linter warns about it."""


class BearerAuth(httpx.Auth):
    """``Authorization: Bearer <key>``; the key never appears in a repr."""

    def __init__(self, key: str):
        self._key = key

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._key}"
        yield request

    def __repr__(self) -> str:
        return "BearerAuth(<hidden>)"


class ClientCore:
    """Settings and request logic of one client; no I/O."""

    def __init__(self, base_url: str, api_key: str | None, retries: int, backoff: float,
                 text_prompts: bool, check_grammar: bool):
        if retries < 0:
            raise ValueError(f"retries must be at least 0, got {retries}")
        self.base_url = base_url.rstrip("/").removesuffix("/v1")
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV)
        self.auth = BearerAuth(key) if key else None
        self.retries = retries
        self.backoff = backoff
        self.text_prompts = text_prompts
        self.check_grammar = check_grammar

    def describe(self, cls: str) -> str:
        key = "<hidden>" if self.auth is not None else "None"
        return f"{cls}(base_url={self.base_url!r}, api_key={key}, retries={self.retries})"

    # -- requests --------------------------------------------------------------------------

    def completion_body(self, model: str, prompt: Any, *, constraint: Any, stream: bool,
                        fields: Mapping[str, Any], extra_body: Mapping[str, Any] | None
                        ) -> dict[str, Any]:
        """The JSON body of a completion request, checked by the server's rules.

        Raises
        ------
        TypeError
            On a keyword that is not a request field (server-specific ones go in ``extra_body``).
        RequestError
            When the request breaks the protocol's rules, or its grammar does not compile.
        """
        unknown = sorted(set(fields) - REQUEST_FIELDS)
        if unknown:
            raise TypeError(f"unknown request field {unknown[0]!r}; pass fields the protocol "
                            "does not list in extra_body={...}")
        body: dict[str, Any] = {"model": model, "prompt": _plain(prompt)}
        body.update({k: _plain(v) for k, v in fields.items() if v is not None})
        for name in CONSTRAINT_FIELDS:
            if name in body:
                body[name] = _constraint_text(name, body[name])
        if constraint is not None:
            name, text = request_field(constraint)
            if any(n in body for n in CONSTRAINT_FIELDS):
                raise RequestError(_two_constraints(name))
            body[name] = text
        if stream:
            body["stream"] = True
        request = check_request(body, text_prompts=self.text_prompts)
        if self.check_grammar and request.constraint is not None:
            _check_constraint(*request.constraint)
        if supports_completions(model) is False:
            warnings.warn(chat_only_hint(model), ChatOnlyModelWarning, stacklevel=3)
        body.update(extra_body or {})
        return body

    def chat_body(self, model: str, messages: Any, response_format: Any,
                  fields: Mapping[str, Any], extra_body: Mapping[str, Any] | None
                  ) -> dict[str, Any]:
        if not isinstance(messages, list) or not messages:
            raise RequestError([problem("GK371", "/messages", "messages must be a non-empty "
                                         "list of {role, content} objects")])
        body: dict[str, Any] = {"model": model, "messages": _plain(messages)}
        if response_format is not None:
            body["response_format"] = _plain(response_format)
        body.update({k: _plain(v) for k, v in fields.items() if v is not None})
        body.update(extra_body or {})
        return body

    # -- responses -------------------------------------------------------------------------

    def error(self, response: httpx.Response, path: str, model: str | None) -> APIStatusError:
        """The exception for an error response (its body already read)."""
        try:
            body = response.json()
        except ValueError:
            body = None
        error = status_error(response.status_code, body, _short(response.text))
        if response.status_code == 404 and path == COMPLETIONS_PATH and model is not None:
            return ChatOnlyModelError(404, f"{error.message} ({chat_only_hint(model)})",
                                      type=error.type, body=body)
        return error

    def retry_delay(self, attempt: int, response: httpx.Response | None) -> float:
        """Seconds to wait before retry ``attempt`` (0-based): ``Retry-After`` if the server
        sent one, else exponential backoff with jitter."""
        if response is not None:
            after = response.headers.get("retry-after")
            if after is not None:
                try:
                    return min(max(float(after), 0.0), MAX_RETRY_AFTER)
                except ValueError:
                    pass
        delay: float = min(self.backoff * 2 ** attempt, MAX_BACKOFF)
        return delay * (0.5 + random.random() / 2)  # jitter, not security

    @staticmethod
    def connection_error(exc: httpx.TransportError, url: str, what: str = "") -> APIConnectionError:
        """Our exception for an httpx transport error; the request (and its headers) is dropped."""
        detail = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.TimeoutException):
            return APITimeoutError(f"no answer from {url} within the timeout{what}: {detail}")
        return APIConnectionError(f"connection to {url} failed{what}: {detail}")

    @staticmethod
    def event(data: str) -> CompletionChunk | None:
        """A stream event's chunk; ``None`` for ``[DONE]``. An error event raises."""
        if data.strip() == "[DONE]":
            return None
        try:
            decoded = json.loads(data)
        except ValueError:
            raise ResponseFormatError(f"a stream event is not JSON: {_short(data)}") from None
        if isinstance(decoded, dict) and isinstance(decoded.get("error"), dict):
            inner = decoded["error"]
            code = inner.get("code")
            raise status_error(code if isinstance(code, int) else 500, decoded, _short(data))
        return CompletionChunk.from_json(decoded)


def request_field(constraint: Any) -> tuple[str, str]:
    """``(field, text)`` for a constraint object: a ``Grammar`` becomes ``ebnf``; the generation
    package's ``JsonSchema`` and ``Regex`` become ``json_schema`` and ``regex``."""
    from grammarkit.grammar import Grammar

    if isinstance(constraint, Grammar):
        return "ebnf", constraint.to_ebnf()
    if isinstance(constraint, str):
        return "ebnf", constraint
    from grammarkit.generate.constraint import request_field as field_of

    name, text = field_of(constraint)
    return str(name), text


def _constraint_text(name: str, value: Any) -> Any:
    from grammarkit.grammar import Grammar

    if name == "ebnf" and isinstance(value, Grammar):
        return value.to_ebnf()
    if name == "json_schema" and isinstance(value, (dict, bool)):
        return json.dumps(value)
    return value


def _check_constraint(name: str, text: str) -> None:
    """Compile the grammar locally: errors raise :class:`RequestError`, lint warnings warn."""
    compile_constraint(name, text)
    if name == "ebnf":
        from grammarkit.analysis.lint import lint

        found = [d for d in lint(text, path="ebnf") if not d.is_error]
        if found:
            warnings.warn(describe(found), GrammarLintWarning, stacklevel=4)


def _two_constraints(name: str) -> list[Diagnostic]:
    return [problem("GK372", f"/{name}", "a request takes one constraint: `constraint` and "
                     "an ebnf/regex/json_schema field were both given")]


def _plain(value: Any) -> Any:
    """``value`` with tuples and numpy arrays/scalars turned into JSON-ready lists and numbers."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    return value


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
