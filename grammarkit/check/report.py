"""`CheckReport`: the findings of `grammarkit.check` and the figures behind them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from grammarkit.check.boundaries import BoundaryStatistics
from grammarkit.check.mask_statistics import MaskStatistics
from grammarkit.check.termination import ShortestCompletion
from grammarkit.diagnostics import Diagnostic, Severity


@dataclass(frozen=True)
class CheckReport:
    """What `grammarkit.check` found about a grammar with a vocabulary.

    Attributes
    ----------
    diagnostics
        The findings (GK3xx), errors first, then by position in the grammar.
    vocab_source, vocab_size, stop_ids
        The vocabulary checked against.
    shortest_completion
        The shortest sentence in the fewest tokens, or None (cannot complete, or needs
        ``Token(...)``).
    max_tokens
        The ``max_tokens`` budget that always suffices (every byte its own token, plus the
        stop token); ``inf`` when the grammar has unbounded loops.
    boundaries
        Canonical tokenizations replayed, or None when no encoder was available.
    mask
        Mask statistics over random walks, or None when they were not run.
    notes
        Checks skipped or cut short, and why.
    seconds
        Time taken per check, and to build the matcher (``"matcher"``).
    """

    diagnostics: tuple[Diagnostic, ...]
    vocab_source: str
    vocab_size: int
    stop_ids: tuple[int, ...]
    shortest_completion: ShortestCompletion | None = None
    max_tokens: float = math.inf
    boundaries: BoundaryStatistics | None = None
    mask: MaskStatistics | None = None
    notes: tuple[str, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        """Whether no error-level finding was made."""
        return not self.errors

    def summary(self, token_text: Any = None) -> list[str]:
        """The figures as ``label: value`` lines.

        Parameters
        ----------
        token_text
            ``id -> bytes``, to show the shortest completion's tokens.
        """
        lines = []
        shortest = self.shortest_completion
        if shortest is not None:
            count = len(shortest.token_ids)
            tokens = ""
            if token_text is not None and count:
                pieces = [repr(token_text(i).decode("utf-8", "replace"))
                          for i in shortest.token_ids[:8]]
                tokens = " = " + " ".join(pieces) + (" ..." if count > 8 else "")
            lines.append(f"shortest completion: {count} token{'s' if count != 1 else ''} + stop "
                         f"({shortest.text!r}{tokens})")
        else:
            lines.append("shortest completion: none found")
        budget = ("unbounded" if math.isinf(self.max_tokens)
                  else f"{int(self.max_tokens)} (a byte per token, plus stop)")
        lines.append(f"max_tokens needed: {budget}")
        if self.boundaries is not None:
            b = self.boundaries
            lines.append(f"tokenization: {b.sentences} sampled sentences, {b.refused} refused")
        mask = self.mask
        if mask is not None:
            lines.append(
                f"masks: {mask.walks} walks, {mask.steps} steps; allowed tokens per step "
                f"min {mask.min_allowed} / median {mask.median_allowed:g} / max "
                f"{mask.max_allowed}; one allowed token in {mask.single_choice_share:.0%}")
            lines.append(f"slowest mask: {mask.slowest_mask_ms:.2f} ms after "
                         f"{_clip(mask.slowest_prefix)!r}")
        lines.extend(f"note: {note}" for note in self.notes)
        errors, warnings = len(self.errors), len(self.warnings)
        lines.append(f"findings: {errors} error{'s' if errors != 1 else ''}, "
                     f"{warnings} warning{'s' if warnings != 1 else ''}")
        return lines

    def render(self, token_text: Any = None) -> str:
        """Findings (compiler style) then the figures, as text."""
        parts = [d.render() for d in self.diagnostics]
        parts.append("\n".join(self.summary(token_text)))
        return "\n\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of everything in the report."""
        shortest = self.shortest_completion
        return {
            "ok": self.ok,
            "vocabulary": {"source": self.vocab_source, "size": self.vocab_size,
                           "stop_ids": list(self.stop_ids)},
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "shortest_completion": None if shortest is None else {
                "text": shortest.text, "token_ids": list(shortest.token_ids)},
            "max_tokens": None if math.isinf(self.max_tokens) else int(self.max_tokens),
            "boundaries": None if self.boundaries is None else vars(self.boundaries),
            "mask": None if self.mask is None else vars(self.mask),
            "notes": list(self.notes),
            "seconds": self.seconds,
        }


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else "..." + text[-limit:]
