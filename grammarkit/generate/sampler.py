"""Picking the next token from logits and the grammar's allowed set, by `SamplingParams`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from grammarkit.generate.params import SamplingParams

IntArray = npt.NDArray[np.int64]


class Sampler:
    """Applies penalties, bias, temperature, top-k, top-p and min-p to the allowed tokens.

    One sampler follows one sequence: it counts the tokens generated so far (for the penalties).

    Parameters
    ----------
    params
        The sampling parameters.
    vocab_size
        Ids scored by the model.
    prompt
        The prompt's ids (the repetition penalty covers them too).
    rng
        The random generator (shared by the choices of one request, for reproducibility).
    """

    def __init__(self, params: SamplingParams, vocab_size: int, prompt: Sequence[int],
                 rng: np.random.Generator):
        self.params = params
        self.rng = rng
        self.counts = np.zeros(vocab_size, dtype=np.float32)
        self.seen = np.zeros(vocab_size, dtype=np.bool_)
        if len(prompt):
            self.seen[np.asarray(prompt, dtype=np.int64)] = True
        bias = params.logit_bias or {}
        self.bias_ids = np.array(sorted(bias), dtype=np.int64)
        self.bias_values = np.array([bias[i] for i in sorted(bias)], dtype=np.float32)

    def record(self, token_id: int) -> None:
        """Count a generated token."""
        if 0 <= token_id < len(self.counts):
            self.counts[token_id] += 1
            self.seen[token_id] = True

    def scores(self, logits: npt.NDArray[np.float32], ids: IntArray) -> npt.NDArray[np.float64]:
        """The logits of the candidate ``ids`` after bias and penalties."""
        p = self.params
        scores = logits[ids].astype(np.float64)
        if len(self.bias_ids):
            full = np.zeros(len(self.counts), dtype=np.float64)
            full[self.bias_ids] = self.bias_values
            scores += full[ids]
        if p.repetition_penalty != 1.0:
            seen = self.seen[ids]
            penalised = scores[seen]
            scores[seen] = np.where(penalised > 0, penalised / p.repetition_penalty,
                                    penalised * p.repetition_penalty)
        if p.frequency_penalty or p.presence_penalty:
            counts = self.counts[ids]
            scores -= p.frequency_penalty * counts + p.presence_penalty * (counts > 0)
        return scores

    def pick(self, scores: npt.NDArray[np.float64], ids: IntArray) -> int:
        """One of ``ids`` (``scores`` are their processed logits)."""
        p = self.params
        if p.temperature == 0.0 or len(ids) == 1:
            return int(ids[int(np.argmax(scores))])  # first maximum: the lowest id on ties
        logits = scores / p.temperature
        order = None
        if p.top_k > 0 and p.top_k < len(logits):
            order = np.argpartition(-logits, p.top_k - 1)[: p.top_k]
            logits = logits[order]
        if p.top_p < 1.0 or p.min_p > 0.0:
            ranked = np.argsort(-logits, kind="stable")
            order = ranked if order is None else order[ranked]
            logits = logits[ranked]
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        keep = len(probs)
        if p.top_p < 1.0:
            keep = min(keep, int(np.searchsorted(np.cumsum(probs), p.top_p)) + 1)
        if p.min_p > 0.0:
            keep = min(keep, max(1, int(np.count_nonzero(probs >= p.min_p * probs[0]))))
        cumulative = np.cumsum(probs[:keep])
        chosen = min(int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1],
                                         side="right")), keep - 1)
        return int(ids[chosen if order is None else order[chosen]])


def log_softmax(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Log probabilities of ``scores`` (over the candidates only)."""
    shifted = scores - scores.max()
    return shifted - np.log(np.exp(shifted).sum())
