"""The decoding loop shared by the local backends: mask, score, pick, accept, jump forward.

A backend supplies a `GrammarSession` (its matcher for one sequence); the loop does the rest
and yields one `Step` per generated token, then a final `Step` with the finish reason.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import bitmask_width
from grammarkit.generate.completion import FinishReason, TokenLogprob
from grammarkit.generate.lm import LanguageModel
from grammarkit.generate.params import SamplingParams
from grammarkit.generate.sampler import Sampler, log_softmax
from grammarkit.generate.tokenize import greedy_tokenizer
from grammarkit.vocab import Vocabulary


class GrammarSession(Protocol):
    """One sequence under a grammar, as a backend's matcher sees it."""

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        """Write the allowed next tokens into row 0 of ``bitmask``."""

    def accept_token(self, token_id: int) -> bool:
        """Advance by one token; ``False`` (and no change) if the grammar does not allow it."""

    def forced_bytes(self) -> bytes:
        """Bytes every continuation must start with (empty at a choice or the end)."""


@dataclass
class Counters:
    """Time and calls spent by one choice."""

    mask_seconds: float = 0.0
    model_seconds: float = 0.0
    model_calls: int = 0
    jump_forward_tokens: int = 0


@dataclass
class Step:
    """A generated token (``token_id``), the end (``finish_reason``), or both: a token that
    completed a stop string."""

    token_id: int | None = None
    forced: bool = False
    logprob: TokenLogprob | None = None
    finish_reason: FinishReason | None = None
    matched_stop: int | str | None = None
    stop_at: int | None = None
    """For a matched stop string: the byte offset in the completion where the text ends."""


@dataclass
class Decoder:
    """Runs one choice: the loop over tokens for a session, a model and parameters."""

    session: GrammarSession
    lm: LanguageModel
    vocab: Vocabulary
    prompt: Sequence[int]
    params: SamplingParams
    rng: np.random.Generator
    extra_blocked: npt.NDArray[np.int64] | None = None
    """Ids to forbid besides the grammar's mask (a backend's correction)."""
    counters: Counters = field(default_factory=Counters)

    def steps(self) -> Iterator[Step]:
        """Generate; the last step has a ``finish_reason``."""
        p = self.params
        vocab_size = self.lm.vocab_size
        bitmask = np.zeros((1, bitmask_width(vocab_size)), dtype=np.int32)
        sampler = Sampler(p, vocab_size, self.prompt, self.rng)
        eos = np.array(sorted(self.vocab.stop_ids), dtype=np.int64)
        stop_ids = frozenset(self.vocab.stop_ids) | frozenset(p.stop_token_ids)
        stop_array = np.array(sorted(stop_ids), dtype=np.int64)
        stop_strings = [s.encode("utf-8") for s in p.stop]
        context = list(self.prompt)
        text = bytearray()
        generated = 0
        while generated < p.max_tokens:
            if p.jump_forward:
                for token in self._jump_forward(p.max_tokens - generated):
                    generated += 1
                    context.append(token)
                    sampler.record(token)
                    start = len(text)
                    text += self.vocab.tokens[token]
                    hit = self._stop_string(text, start, stop_strings, generated)
                    yield Step(token, True, self._forced_logprob(token), *hit)
                    if hit[0] is not None:
                        return
                if generated >= p.max_tokens:
                    break
            started = time.perf_counter()
            self.session.fill_next_token_bitmask(bitmask)
            ids = allowed_ids(bitmask[0], vocab_size)
            if self.extra_blocked is not None and len(self.extra_blocked):
                ids = ids[~np.isin(ids, self.extra_blocked)]
            if p.ignore_eos:
                ids = _drop_unless_alone(ids, eos)
            if generated < p.min_tokens:
                ids = _drop_unless_alone(ids, stop_array)
            self.counters.mask_seconds += time.perf_counter() - started
            if not len(ids):  # the grammar is complete and no stop token is allowed
                yield Step(finish_reason="stop")
                return
            forced = p.jump_forward and len(ids) == 1 and p.logprobs is None
            if forced:
                token = int(ids[0])
                self.counters.jump_forward_tokens += 1
                logprob = None
            else:
                started = time.perf_counter()
                logits = self.lm.logits(context)
                self.counters.model_seconds += time.perf_counter() - started
                self.counters.model_calls += 1
                scores = sampler.scores(logits, ids)
                token = sampler.pick(scores, ids)
                logprob = self._logprob(token, scores, ids) if p.logprobs is not None else None
            if token in stop_ids:
                self._accept(token)
                yield Step(finish_reason="stop", matched_stop=token)
                return
            if not self._accept(token):
                raise RuntimeError(f"the grammar matcher refused token {token} it had allowed")
            generated += 1
            context.append(token)
            sampler.record(token)
            start = len(text)
            text += self.vocab.tokens[token]
            hit = self._stop_string(text, start, stop_strings, generated)
            yield Step(token, forced, logprob, *hit)
            if hit[0] is not None:
                return
        yield Step(finish_reason="length")

    # -- helpers -------------------------------------------------------------------------------
    def _accept(self, token: int) -> bool:
        started = time.perf_counter()
        ok = self.session.accept_token(token)
        self.counters.mask_seconds += time.perf_counter() - started
        return ok

    def _jump_forward(self, limit: int) -> Iterator[int]:
        """Accept and yield the tokens spelling the text the grammar forces here."""
        started = time.perf_counter()
        forced = self.session.forced_bytes()
        tokens = greedy_tokenizer(self.vocab).prefix_tokens(forced, limit) if forced else []
        self.counters.mask_seconds += time.perf_counter() - started
        for token in tokens:
            if not self._accept(token):
                return
            self.counters.jump_forward_tokens += 1
            yield token

    def _stop_string(self, text: bytearray, start: int, stops: list[bytes], generated: int
                     ) -> tuple[FinishReason | None, str | None, int | None]:
        """``("stop", the stop string, where the text ends)`` if a stop string ends in the
        text after ``start``, else ``(None, None, None)``."""
        best: tuple[int, bytes] | None = None
        if stops and generated >= self.params.min_tokens:
            for stop in stops:
                at = text.find(stop, max(0, start - len(stop) + 1))
                if at >= 0 and (best is None or at < best[0]):
                    best = (at, stop)
        if best is None:
            return None, None, None
        return "stop", best[1].decode("utf-8"), best[0]

    def _logprob(self, token: int, scores: npt.NDArray[np.float64],
                 ids: npt.NDArray[np.int64]) -> TokenLogprob:
        logps = log_softmax(scores)
        top = np.argsort(-logps, kind="stable")[: self.params.logprobs]
        where = int(np.flatnonzero(ids == token)[0])
        return TokenLogprob(token, self._text(token), float(logps[where]),
                            {int(ids[k]): float(logps[k]) for k in top})

    def _forced_logprob(self, token: int) -> TokenLogprob | None:
        if self.params.logprobs is None:
            return None
        return TokenLogprob(token, self._text(token), 0.0, {token: 0.0})

    def _text(self, token: int) -> str:
        return self.vocab.tokens[token].decode("utf-8", "replace")


def allowed_ids(words: npt.NDArray[np.int32], vocab_size: int) -> npt.NDArray[np.int64]:
    """The token ids whose bits are set in a bitmask row, ascending (only non-zero words are
    unpacked: structural positions allow few tokens)."""
    nonzero = np.flatnonzero(words)
    bits = np.unpackbits(words[nonzero].view(np.uint8), bitorder="little").reshape(-1, 32)
    ids = (nonzero[:, None] * 32 + np.arange(32))[bits.astype(np.bool_)]
    return ids[ids < vocab_size]


def _drop_unless_alone(ids: npt.NDArray[np.int64],
                       dropped: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``ids`` without ``dropped``, unless nothing else would remain."""
    if not len(dropped):
        return ids
    kept = ids[~np.isin(ids, dropped)]
    return kept if len(kept) else ids
