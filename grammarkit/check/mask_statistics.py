"""Mask statistics over seeded random walks, and dead ends where no token is allowed.

Each walk starts at the grammar's start, fills the mask, picks an allowed token at random
(seeded; the stop token, where allowed, with probability 1/4) and goes on until it stops or
reaches `MAX_STEPS`. Per step: how many tokens are allowed and how long the mask took. A step
with one allowed token is where jump-forward decoding pays off. A step where no token but a stop
token is allowed and the grammar is not complete is a dead end (GK345): the model is stuck there
(a stop token there ends the text unfinished, or is refused).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from grammarkit.check.context import CheckContext
from grammarkit.diagnostics import Diagnostic, Severity

NAME = "mask-statistics"
CODES = ("GK345",)

MAX_STEPS = 48
"""Tokens per walk at most."""
WALK_SECONDS = 4.0
"""All walks together stop after this long (a slow grammar still gets a report)."""
STOP_PROBABILITY = 0.25


@dataclass(frozen=True)
class MaskStatistics:
    """Allowed tokens per step over the random walks.

    Attributes
    ----------
    walks, steps
        Walks made and masks computed.
    min_allowed, median_allowed, max_allowed
        Allowed tokens per step (stop tokens included).
    single_choice_share
        Share of steps with exactly one allowed token (where jump-forward would pay off).
    slowest_mask_ms
        The slowest mask computation, in milliseconds.
    slowest_prefix
        The text generated before that step.
    """

    walks: int
    steps: int
    min_allowed: int
    median_allowed: float
    max_allowed: int
    single_choice_share: float
    slowest_mask_ms: float
    slowest_prefix: str


def run(ctx: CheckContext) -> tuple[list[Diagnostic], MaskStatistics | None]:
    """Walk the grammar ``max(1, samples // 10)`` times."""
    from grammarkit.decode import allocate_token_bitmask

    matcher = ctx.matcher
    vocab = ctx.vocab
    rng = np.random.default_rng(ctx.seed)
    bitmask = allocate_token_bitmask(1, vocab.vocab_size)
    stops = np.array(sorted(ctx.stop_ids), dtype=np.int64)
    walks = max(1, ctx.samples // 10)
    allowed_counts: list[int] = []
    slowest = (0.0, "")
    dead_ends: dict[bytes, bytes] = {}
    deadline = time.perf_counter() + WALK_SECONDS
    made = 0
    for walk in range(walks):
        if time.perf_counter() > deadline:
            ctx.notes.append(f"{NAME}: stopped after {walk} of {walks} walks ({WALK_SECONDS:.0f} s)")
            break
        ctx.tick(NAME, walk, walks)
        made += 1
        matcher.reset()
        prefix = bytearray()
        for _ in range(MAX_STEPS):
            start = time.perf_counter()
            matcher.fill_next_token_bitmask(bitmask)
            elapsed = time.perf_counter() - start
            bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")
            allowed = np.flatnonzero(bits[: vocab.vocab_size])
            allowed_counts.append(len(allowed))
            if elapsed > slowest[0]:
                slowest = (elapsed, bytes(prefix).decode("utf-8", "replace"))
            stop_allowed = np.isin(allowed, stops)
            ordinary = allowed[~stop_allowed]
            if len(ordinary) == 0 and not matcher.is_completed():
                dead_ends.setdefault(bytes(prefix[-40:]), bytes(prefix))
                break
            if len(ordinary) == 0 or (stop_allowed.any() and rng.random() < STOP_PROBABILITY):
                break
            token = int(ordinary[rng.integers(len(ordinary))])
            matcher.accept_token(token)
            prefix += vocab.tokens[token]
    matcher.reset()
    found = [_dead_end(ctx, prefix) for prefix in list(dead_ends.values())[:3]]
    if not allowed_counts:
        return found, None
    counts = np.array(allowed_counts)
    return found, MaskStatistics(
        walks=made, steps=len(counts), min_allowed=int(counts.min()),
        median_allowed=float(np.median(counts)), max_allowed=int(counts.max()),
        single_choice_share=float(np.mean(counts == 1)),
        slowest_mask_ms=slowest[0] * 1000, slowest_prefix=slowest[1])


def _dead_end(ctx: CheckContext, prefix: bytes) -> Diagnostic:
    text = prefix.decode("utf-8", "replace")
    return ctx.report(
        "GK345", Severity.ERROR,
        f"dead end: after {text!r} no token of this vocabulary can continue (at most a stop "
        "token is allowed) and the grammar is not complete, so a model is stuck there",
        None, "make sure what the grammar requires next can be spelled by this vocabulary")
