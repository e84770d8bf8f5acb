"""`SamplingParams`: the sampling parameters, named as the ``/v1/completions`` API names them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class SamplingParams:
    """How to pick tokens and when to stop.

    Parameters
    ----------
    max_tokens
        Most tokens generated (jump-forward tokens included); reaching it ends with
        ``finish_reason="length"``.
    min_tokens
        Stop tokens and stop strings are ignored until this many tokens are generated (unless the
        grammar allows nothing else).
    temperature
        ``0`` picks the most likely allowed token (greedy, ties to the lowest id).
    top_p, top_k, min_p
        Nucleus mass, how many most likely tokens (``-1``: all), and the smallest probability
        relative to the most likely token, as in vLLM and SGLang.
    frequency_penalty, presence_penalty
        Subtracted from a token's logit once per earlier occurrence in the completion, and once
        if it occurred at all (OpenAI's definition).
    repetition_penalty
        Divides positive (multiplies negative) logits of tokens seen in prompt or completion.
    logit_bias
        Token id -> value added to its logit (``-100`` bans, ``100`` forces, if allowed).
    stop
        Strings that end the completion; the text is cut before the first one found.
    stop_token_ids
        Extra end-of-sequence ids (allowed where the grammar can end, like the vocabulary's).
    ignore_eos
        Never pick the vocabulary's end-of-sequence tokens: go on while the grammar allows more.
    seed
        Makes sampling reproducible; ``None`` draws fresh randomness.
    n
        How many completions (choices) to generate.
    logprobs
        Also return the log probabilities of this many most likely tokens at each step.
    jump_forward
        Append text the grammar forces without calling the model.

    Raises
    ------
    ValueError
        Naming the field, when a value is out of its range or of the wrong type (one exception
        type for every bad field, as request validation wants).
    """

    max_tokens: int = 16
    min_tokens: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repetition_penalty: float = 1.0
    logit_bias: Mapping[int, float] | None = None
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    ignore_eos: bool = False
    seed: int | None = None
    n: int = 1
    logprobs: int | None = None
    jump_forward: bool = True

    def __post_init__(self) -> None:
        _check_int("max_tokens", self.max_tokens, 1)
        _check_int("min_tokens", self.min_tokens, 0)
        if self.min_tokens > self.max_tokens:
            raise ValueError(f"min_tokens ({self.min_tokens}) must be at most max_tokens "
                             f"({self.max_tokens})")
        _check_float("temperature", self.temperature, 0.0, math.inf)
        _check_float("top_p", self.top_p, 0.0, 1.0, low_open=True)
        _check_int("top_k", self.top_k, -1)
        if self.top_k == 0:
            raise ValueError("top_k must be -1 (all tokens) or at least 1, got 0")
        _check_float("min_p", self.min_p, 0.0, 1.0)
        _check_float("frequency_penalty", self.frequency_penalty, -2.0, 2.0)
        _check_float("presence_penalty", self.presence_penalty, -2.0, 2.0)
        _check_float("repetition_penalty", self.repetition_penalty, 0.0, math.inf, low_open=True)
        if self.logit_bias is not None:
            bias = {}
            for key, value in self.logit_bias.items():
                token = _as_int(key)
                if token is None or token < 0:
                    raise ValueError(f"logit_bias keys must be token ids (>= 0), got {key!r}")
                _check_float(f"logit_bias[{token}]", value, -100.0, 100.0)
                bias[token] = float(value)
            object.__setattr__(self, "logit_bias", MappingProxyType(bias))
        stop = (self.stop,) if isinstance(self.stop, str) else tuple(self.stop)
        if not all(isinstance(s, str) and s for s in stop):
            raise ValueError(f"stop must hold non-empty strings, got {self.stop!r}")
        object.__setattr__(self, "stop", stop)
        ids = tuple(self.stop_token_ids)
        if not all(_as_int(i) is not None and int(i) >= 0 for i in ids):
            raise ValueError(f"stop_token_ids must be token ids (>= 0), got {self.stop_token_ids!r}")
        object.__setattr__(self, "stop_token_ids", tuple(int(i) for i in ids))
        if not isinstance(self.ignore_eos, bool):
            raise ValueError(f"ignore_eos must be a bool, got {self.ignore_eos!r}")  # noqa: TRY004
        if self.seed is not None and _as_int(self.seed) is None:
            raise ValueError(f"seed must be an integer or None, got {self.seed!r}")
        _check_int("n", self.n, 1)
        if self.logprobs is not None:
            _check_int("logprobs", self.logprobs, 0)
        if not isinstance(self.jump_forward, bool):
            raise ValueError(f"jump_forward must be a bool, got {self.jump_forward!r}")  # noqa: TRY004

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> SamplingParams:
        """Parameters from keyword values; unknown names raise ``ValueError`` listing the known.

        ``None`` values mean "the default".
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown sampling parameter(s) {', '.join(unknown)}; known: "
                             f"{', '.join(sorted(known))}")
        given = {k: v for k, v in values.items() if v is not None or k in ("seed", "logprobs")}
        return cls(**given)


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, got {value!r}")  # noqa: TRY004
    if value < low:
        raise ValueError(f"{name} must be at least {low}, got {value}")


def _check_float(name: str, value: object, low: float, high: float,
                 low_open: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number, got {value!r}")  # noqa: TRY004
    if math.isnan(value) or value < low or value > high or (low_open and value == low):
        bound = f"({low}, {high}]" if low_open else f"[{low}, {high}]"
        raise ValueError(f"{name} must be in {bound}, got {value}")
