"""Running an examples file against its grammar: verdicts, failures, ``--update``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grammarkit.authoring.examples import EXAMPLES_SUFFIX, Example, format_verdict
from grammarkit.grammar import Grammar
from grammarkit.source import SourceText

GRAMMAR_SUFFIXES = (".ebnf", ".gbnf", ".schema.json")


@dataclass(frozen=True)
class Outcome:
    """What the grammar said about one example.

    Attributes
    ----------
    example
        The example.
    accepted
        Whether the grammar accepts its text.
    position
        Where matching failed ``(line, column)``, for a rejected text.
    reason
        :meth:`Grammar.explain`'s message, for a rejected text.
    """

    example: Example
    accepted: bool
    position: tuple[int, int] | None
    reason: str | None

    @property
    def passed(self) -> bool:
        """Whether the verdict (and the failure position, when the example names one) holds."""
        if self.accepted != self.example.accept:
            return False
        return self.example.position is None or self.example.position == self.position

    def failure(self) -> str | None:
        """Why the example failed, readably; ``None`` if it passed."""
        if self.passed:
            return None
        if self.example.accept:
            return f"expected accept, but the grammar rejects it: {self.reason}"
        if self.accepted:
            return "expected reject, but the grammar accepts it"
        want = self.example.position
        assert want is not None and self.position is not None
        return (f"expected the failure at {want[0]}:{want[1]}, but it is at "
                f"{self.position[0]}:{self.position[1]}: {self.reason}")


def run_examples(grammar: Grammar, examples: list[Example]) -> list[Outcome]:
    """The grammar's verdict on every example."""
    outcomes = []
    for example in examples:
        explanation = grammar.explain(example.text)
        if explanation is None:
            outcomes.append(Outcome(example, True, None, None))
        else:
            outcomes.append(Outcome(example, False, (explanation.line, explanation.column),
                                    str(explanation)))
    return outcomes


def updated_text(source: SourceText, outcomes: list[Outcome]) -> str:
    """``source`` with every verdict line rewritten to what the grammar observed.

    A rejection keeps its position only if the example named one.
    """
    text = source.text
    for outcome in sorted(outcomes, key=lambda o: o.example.verdict_span.start, reverse=True):
        example = outcome.example
        position = outcome.position if example.position is not None else None
        verdict = format_verdict(outcome.accepted, position)
        span = example.verdict_span
        text = text[:span.start] + verdict + text[span.end:]
    return text


def grammar_for(examples_path: Path) -> Path | None:
    """The grammar beside an examples file: ``NAME.ebnf``, ``NAME.gbnf`` or ``NAME.schema.json``."""
    stem = examples_path.name[: -len(EXAMPLES_SUFFIX)]
    for suffix in GRAMMAR_SUFFIXES:
        candidate = examples_path.with_name(stem + suffix)
        if candidate.is_file():
            return candidate
    return None


def examples_for(grammar_path: Path) -> Path:
    """The examples file that belongs to a grammar file (it may not exist)."""
    name = grammar_path.name
    for suffix in GRAMMAR_SUFFIXES:
        if name.endswith(suffix):
            return grammar_path.with_name(name[: -len(suffix)] + EXAMPLES_SUFFIX)
    return grammar_path.with_name(name + EXAMPLES_SUFFIX)
