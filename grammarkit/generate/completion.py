"""What generation returns: `Completion` (whole) and `Chunk` (streamed), with timing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class TokenLogprob:
    """One generated token's log probability and the most likely alternatives at that step.

    Forced (jump-forward) tokens have ``logprob == 0.0``: the grammar left no other choice.
    """

    token_id: int
    text: str
    logprob: float
    top_logprobs: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Timing:
    """Where the time went.

    Parameters
    ----------
    mask_seconds
        Computing token masks and accepting tokens (the grammar's overhead).
    model_seconds
        Calling the language model for logits.
    total_seconds
        Wall time of the whole request.
    model_calls
        How many times the model was called.
    jump_forward_tokens
        Tokens appended without a model call because the grammar forced their text (each one a
        model call saved).
    """

    mask_seconds: float = 0.0
    model_seconds: float = 0.0
    total_seconds: float = 0.0
    model_calls: int = 0
    jump_forward_tokens: int = 0

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.mask_seconds + other.mask_seconds,
                      self.model_seconds + other.model_seconds,
                      self.total_seconds + other.total_seconds,
                      self.model_calls + other.model_calls,
                      self.jump_forward_tokens + other.jump_forward_tokens)


@dataclass(frozen=True)
class Choice:
    """One completion of a request.

    ``token_ids`` holds the generated tokens without the stop token that ended them; ``text`` is
    their text, cut before a matched stop string. ``finish_reason`` is ``"stop"`` when the grammar
    completed (a stop token, or nothing may follow) or a stop string matched, ``"length"`` when
    ``max_tokens`` ran out first. ``matched_stop`` is the stop token id or stop string, if any.
    """

    index: int
    text: str
    token_ids: list[int]
    finish_reason: FinishReason
    matched_stop: int | str | None = None
    logprobs: list[TokenLogprob] | None = None


@dataclass(frozen=True)
class Completion:
    """The result of one request: ``n`` choices, token counts and timing."""

    choices: list[Choice]
    prompt_tokens: int
    completion_tokens: int
    timing: Timing = field(default_factory=Timing)

    @property
    def text(self) -> str:
        """The first choice's text."""
        return self.choices[0].text

    @property
    def token_ids(self) -> list[int]:
        """The first choice's token ids."""
        return self.choices[0].token_ids

    @property
    def finish_reason(self) -> FinishReason:
        """The first choice's finish reason."""
        return self.choices[0].finish_reason

    @property
    def matched_stop(self) -> int | str | None:
        """The first choice's matched stop token id or string."""
        return self.choices[0].matched_stop

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict in the shape of an OpenAI/SGLang ``/v1/completions`` response body
        (without ``id``/``created``/``model``), plus ``timing``."""
        return {
            "object": "text_completion",
            "choices": [{
                "index": c.index,
                "text": c.text,
                "token_ids": c.token_ids,
                "finish_reason": c.finish_reason,
                "matched_stop": c.matched_stop,
                "logprobs": None if c.logprobs is None else [
                    {"token_id": p.token_id, "text": p.text, "logprob": p.logprob,
                     "top_logprobs": {str(k): v for k, v in p.top_logprobs.items()}}
                    for p in c.logprobs],
            } for c in self.choices],
            "usage": {"prompt_tokens": self.prompt_tokens,
                      "completion_tokens": self.completion_tokens,
                      "total_tokens": self.prompt_tokens + self.completion_tokens},
            "timing": {"mask_seconds": self.timing.mask_seconds,
                       "model_seconds": self.timing.model_seconds,
                       "total_seconds": self.timing.total_seconds,
                       "model_calls": self.timing.model_calls,
                       "jump_forward_tokens": self.timing.jump_forward_tokens},
        }


@dataclass(frozen=True)
class Chunk:
    """A piece of a streamed choice: new text and tokens; the last piece has ``finish_reason``."""

    index: int
    text: str
    token_ids: list[int]
    finish_reason: FinishReason | None = None
    matched_stop: int | str | None = None
    logprobs: list[TokenLogprob] | None = None
