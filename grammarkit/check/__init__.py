"""Grammar x tokenizer checks: what can go wrong with a grammar and a real model's vocabulary.

`check` runs, in order: producibility (GK300-GK302), termination (GK310-GK311), special-token
leaks (GK320-GK321), unbounded loops (GK330), tokenization boundaries (GK340-GK341) and mask
statistics (GK345), one module each, and gathers their findings in a `CheckReport`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence

from grammarkit.check import (
    boundaries,
    loops,
    mask_statistics,
    producibility,
    special_tokens,
    termination,
)
from grammarkit.check.context import CheckContext, Progress
from grammarkit.check.report import CheckReport
from grammarkit.check.tokenizers import Encoder, encoder_for
from grammarkit.diagnostics import Diagnostic, GrammarError
from grammarkit.grammar import Grammar
from grammarkit.source import SourceText
from grammarkit.vocab import Vocabulary

CHECKS = (producibility, termination, special_tokens, loops, boundaries, mask_statistics)
CODES: tuple[str, ...] = tuple(code for module in CHECKS for code in module.CODES)
"""Every code `check` can report."""

_NEEDS_COMPLETION = {boundaries.NAME, mask_statistics.NAME}
"""Checks that replay sentences or walk the grammar: pointless when it cannot complete."""
_NEEDS_MATCHER = {boundaries.NAME, mask_statistics.NAME}


def check(
    grammar: Grammar,
    vocab: Vocabulary,
    *,
    samples: int = 200,
    seed: int = 0,
    stop_token_ids: Iterable[int] | None = None,
    encoder: Encoder | None = None,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    path: str | None = None,
    progress: Progress | None = None,
) -> CheckReport:
    """Check ``grammar`` against a model's vocabulary before any request is sent.

    Parameters
    ----------
    grammar
        The grammar.
    vocab
        The model's vocabulary.
    samples
        Random sentences whose canonical tokenization is replayed; a tenth as many random
        walks give the mask statistics.
    seed
        Seed of the sentences and walks (the report is deterministic for a seed).
    stop_token_ids
        End-of-sequence ids, replacing ``vocab.stop_ids``.
    encoder
        The tokenizer's own ``text -> ids``; by default the package encoder of a vocabulary
        loaded from a known file (see `grammarkit.check.tokenizers`), else none and the
        tokenization-boundary check is skipped (with a note).
    select, ignore
        Code prefixes to report or skip, as for lint (``GK34``, ``GK330``, ``ALL``). A check
        none of whose codes is selected does not run.
    path
        The name findings show for grammars without source text (a JSON Schema's file).
    progress
        ``progress(check_name, done, total)``, called as the long checks advance.

    Returns
    -------
    CheckReport

    Raises
    ------
    ValueError
        For a malformed ``select`` / ``ignore`` entry or a stop id outside the vocabulary.

    A grammar the matcher refuses for this vocabulary (a token id outside it, GK170) gets
    that error in the report, and the checks that need the matcher are skipped.
    """
    from grammarkit.analysis.selection import enabled_codes

    enabled = set(enabled_codes(CODES, select, ignore))
    stops = frozenset(vocab.stop_ids if stop_token_ids is None else stop_token_ids)
    bad = sorted(i for i in stops if not 0 <= i < vocab.vocab_size)
    if bad:
        raise ValueError(f"stop token ids out of range({vocab.vocab_size}): {bad[:5]}")
    source = grammar.source or SourceText("", path or "<grammar>")
    ctx = CheckContext(grammar, vocab, stops, encoder if encoder is not None else
                       encoder_for(vocab), samples, seed, source, progress)
    found: list[Diagnostic] = []
    seconds: dict[str, float] = {}
    results: dict[str, object] = {}
    graph = ctx.properties.graph
    can_complete = grammar.root in graph.body and ctx.properties.productive[
        graph.body[grammar.root]]
    start = time.perf_counter()
    try:
        ctx.matcher  # noqa: B018 - built here, where a refusal becomes part of the report
    except GrammarError as exc:  # e.g. a token id outside the vocabulary (GK170)
        found.extend(d if d.source else d.with_source(source) for d in exc.diagnostics)
        ctx.matcher_usable = False
        ctx.notes.append("boundaries, mask-statistics: skipped, the matcher refuses the grammar "
                         "for this vocabulary")
    seconds["matcher"] = round(time.perf_counter() - start, 3)
    for module in CHECKS:
        if not enabled.intersection(module.CODES):
            continue
        if module.NAME in _NEEDS_COMPLETION and not can_complete:
            ctx.notes.append(f"{module.NAME}: skipped, the grammar cannot complete")
            continue
        if module.NAME in _NEEDS_MATCHER and not ctx.matcher_usable:
            continue
        start = time.perf_counter()
        try:
            outcome = module.run(ctx)
        except RecursionError:
            ctx.notes.append(f"{module.NAME}: skipped, the grammar is nested too deeply")
            continue

        seconds[module.NAME] = round(time.perf_counter() - start, 3)
        diagnostics, result = outcome if isinstance(outcome, tuple) else (outcome, None)
        found.extend(d for d in diagnostics if d.code in enabled)
        results[module.NAME] = result
    found.sort(key=lambda d: (not d.is_error, d.span.start if d.span else -1, d.code))
    worst = results.get(loops.NAME)
    return CheckReport(
        diagnostics=tuple(found),
        vocab_source=vocab.source,
        vocab_size=vocab.vocab_size,
        stop_ids=tuple(sorted(stops)),
        shortest_completion=results.get(termination.NAME),  # type: ignore[arg-type]
        max_tokens=float(worst) if isinstance(worst, (int, float)) else math.inf,
        boundaries=results.get(boundaries.NAME),  # type: ignore[arg-type]
        mask=results.get(mask_statistics.NAME),  # type: ignore[arg-type]
        notes=tuple(ctx.notes),
        seconds=seconds,
    )


__all__ = ["CODES", "CheckReport", "check"]
