"""Typed responses of ``/v1/completions``, ``/v1/chat/completions`` and ``/v1/models``, in
SGLang's shapes (``sglang/srt/entrypoints/openai/protocol.py``).

``from_json`` reads a decoded response (unknown fields are ignored, missing optional ones are
``None``) and raises :class:`ResponseFormatError` on a body of the wrong shape; ``to_json`` writes
the same shape back (the local server uses it, so both ends agree).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grammarkit.client.errors import ResponseFormatError


def _field(data: Mapping[str, Any], name: str, kind: type | tuple[type, ...],
           required: bool = True) -> Any:
    value = data.get(name)
    if value is None:
        if required:
            raise ResponseFormatError(f"the response has no {name!r} field")
        return None
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _kinds(kind):
        raise ResponseFormatError(f"the response's {name!r} is {type(value).__name__}, not "
                                  f"{'/'.join(k.__name__ for k in _kinds(kind))}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _object(data: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise ResponseFormatError(f"{what} is not a JSON object")
    return data


@dataclass(frozen=True)
class LogProbs:
    """OpenAI-legacy log probabilities of a choice, one entry per token."""

    tokens: list[str]
    token_logprobs: list[float | None]
    top_logprobs: list[dict[str, float] | None]
    text_offset: list[int]

    @classmethod
    def from_json(cls, data: Any) -> LogProbs:
        data = _object(data, "logprobs")
        return cls(
            tokens=list(_field(data, "tokens", list, False) or []),
            token_logprobs=list(_field(data, "token_logprobs", list, False) or []),
            top_logprobs=list(_field(data, "top_logprobs", list, False) or []),
            text_offset=list(_field(data, "text_offset", list, False) or []),
        )

    def to_json(self) -> dict[str, Any]:
        return {"text_offset": self.text_offset, "token_logprobs": self.token_logprobs,
                "tokens": self.tokens, "top_logprobs": self.top_logprobs}


@dataclass(frozen=True)
class CompletionChoice:
    """One generated text; in a stream, the text added since the previous chunk."""

    index: int
    text: str
    finish_reason: str | None = None
    matched_stop: int | str | None = None
    logprobs: LogProbs | None = None

    @classmethod
    def from_json(cls, data: Any) -> CompletionChoice:
        data = _object(data, "a choice")
        logprobs = data.get("logprobs")
        return cls(
            index=_field(data, "index", int),
            text=_field(data, "text", str, False) or "",
            finish_reason=_field(data, "finish_reason", str, False),
            matched_stop=_field(data, "matched_stop", (int, str), False),
            logprobs=LogProbs.from_json(logprobs) if logprobs is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "text": self.text,
                "logprobs": self.logprobs.to_json() if self.logprobs else None,
                "finish_reason": self.finish_reason, "matched_stop": self.matched_stop}


@dataclass(frozen=True)
class Usage:
    """Token counts of a request; ``cached_tokens`` is reported by servers with a prefix cache."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> Usage:
        data = _object(data, "usage")
        details = data.get("prompt_tokens_details")
        cached = _field(details, "cached_tokens", int, False) if isinstance(details, Mapping) \
            else None
        prompt = _field(data, "prompt_tokens", int, False) or 0
        completion = _field(data, "completion_tokens", int, False) or 0
        total = _field(data, "total_tokens", int, False)
        return cls(prompt, completion, prompt + completion if total is None else total, cached,
                   _field(data, "reasoning_tokens", int, False))

    def to_json(self) -> dict[str, Any]:
        details = None if self.cached_tokens is None else {"cached_tokens": self.cached_tokens}
        return {"prompt_tokens": self.prompt_tokens, "total_tokens": self.total_tokens,
                "completion_tokens": self.completion_tokens,
                "prompt_tokens_details": details, "reasoning_tokens": self.reasoning_tokens}


@dataclass(frozen=True)
class CompletionResponse:
    """A ``/v1/completions`` response (``object == "text_completion"``)."""

    id: str
    object: str
    created: int
    model: str
    choices: list[CompletionChoice]
    usage: Usage | None

    @property
    def text(self) -> str:
        """The first choice's text."""
        return self.choices[0].text

    @classmethod
    def from_json(cls, data: Any) -> CompletionResponse:
        data = _object(data, "the response")
        usage = data.get("usage")
        return cls(
            id=_field(data, "id", str, False) or "",
            object=_field(data, "object", str, False) or "text_completion",
            created=_field(data, "created", int, False) or 0,
            model=_field(data, "model", str, False) or "",
            choices=[CompletionChoice.from_json(c) for c in _field(data, "choices", list)],
            usage=Usage.from_json(usage) if usage is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": self.object, "created": self.created,
                "model": self.model, "choices": [c.to_json() for c in self.choices],
                "usage": self.usage.to_json() if self.usage else None}


@dataclass(frozen=True)
class CompletionChunk(CompletionResponse):
    """One server-sent event of a streamed completion. The last one before ``[DONE]`` carries
    only ``usage`` (no choices) when the request asked for ``stream_options.include_usage``."""

    @classmethod
    def from_json(cls, data: Any) -> CompletionChunk:
        response = CompletionResponse.from_json(data)
        return cls(**{name: getattr(response, name) for name in cls.__dataclass_fields__})


@dataclass(frozen=True)
class ChatMessage:
    """An assistant message of a chat completion."""

    role: str
    content: str | None
    reasoning_content: str | None = None


@dataclass(frozen=True)
class ChatChoice:
    index: int
    message: ChatMessage
    finish_reason: str | None = None
    matched_stop: int | str | None = None


@dataclass(frozen=True)
class ChatCompletionResponse:
    """A ``/v1/chat/completions`` response (``object == "chat.completion"``)."""

    id: str
    object: str
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage | None

    @property
    def text(self) -> str:
        """The first choice's message content."""
        return self.choices[0].message.content or ""

    @classmethod
    def from_json(cls, data: Any) -> ChatCompletionResponse:
        data = _object(data, "the response")
        choices = []
        for raw in _field(data, "choices", list):
            raw = _object(raw, "a choice")
            message = _object(raw.get("message"), "a choice's message")
            choices.append(ChatChoice(
                index=_field(raw, "index", int),
                message=ChatMessage(_field(message, "role", str, False) or "assistant",
                                    _field(message, "content", str, False),
                                    _field(message, "reasoning_content", str, False)),
                finish_reason=_field(raw, "finish_reason", str, False),
                matched_stop=_field(raw, "matched_stop", (int, str), False),
            ))
        usage = data.get("usage")
        return cls(
            id=_field(data, "id", str, False) or "",
            object=_field(data, "object", str, False) or "chat.completion",
            created=_field(data, "created", int, False) or 0,
            model=_field(data, "model", str, False) or "",
            choices=choices,
            usage=Usage.from_json(usage) if usage is not None else None,
        )


@dataclass(frozen=True)
class ModelCard:
    """One entry of ``GET /v1/models``."""

    id: str
    owned_by: str | None = None
    created: int | None = None
    max_model_len: int | None = None

    @classmethod
    def from_json(cls, data: Any) -> ModelCard:
        data = _object(data, "a model card")
        return cls(_field(data, "id", str), _field(data, "owned_by", str, False),
                   _field(data, "created", int, False), _field(data, "max_model_len", int, False))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "object": "model", "created": self.created,
                "owned_by": self.owned_by, "root": self.id, "max_model_len": self.max_model_len}
