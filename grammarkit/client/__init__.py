"""Typed clients for SGLang/OpenAI-style ``/v1/completions`` servers (extra ``client``:
httpx and httpx-sse).

>>> from grammarkit.client import CompletionsClient
>>> with CompletionsClient("http://127.0.0.1:30000") as client:          # doctest: +SKIP
...     client.completions("default", [9703], max_tokens=2, temperature=0,
...                        ebnf='root ::= "A" | "B"').text
'A'

Names are loaded lazily, so :mod:`grammarkit.client.protocol` (used by the server too) does not
import httpx.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CompletionsClient": "grammarkit.client.sync",
    "CompletionStream": "grammarkit.client.sync",
    "AsyncCompletionsClient": "grammarkit.client.asynchronous",
    "AsyncCompletionStream": "grammarkit.client.asynchronous",
    "GrammarLintWarning": "grammarkit.client.core",
    "RequestError": "grammarkit.client.protocol",
    "CompletionResponse": "grammarkit.client.types",
    "CompletionChunk": "grammarkit.client.types",
    "CompletionChoice": "grammarkit.client.types",
    "ChatCompletionResponse": "grammarkit.client.types",
    "LogProbs": "grammarkit.client.types",
    "Usage": "grammarkit.client.types",
    "ModelCard": "grammarkit.client.types",
    **{name: "grammarkit.client.errors" for name in (
        "APIConnectionError", "APIStatusError", "APITimeoutError", "AuthenticationError",
        "BadRequestError", "ChatOnlyModelError", "ChatOnlyModelWarning", "CompletionsError",
        "InternalServerError", "NotFoundError", "PermissionDeniedError", "RateLimitError",
        "RequestTooLargeError", "ResponseFormatError",
    )},
}

__all__ = list(_EXPORTS)

_HTTP_MODULES = ("grammarkit.client.sync", "grammarkit.client.asynchronous",
                 "grammarkit.client.core")


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'grammarkit.client' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as exc:
        if module in _HTTP_MODULES and exc.name in ("httpx", "httpx_sse"):
            raise ImportError(f"grammarkit.client.{name} needs {exc.name}: "
                              "pip install 'grammarkit[client]'") from None
        raise
    globals()[name] = value
    return value
