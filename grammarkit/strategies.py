"""Hypothesis strategies for grammars: property-test anything that consumes grammar output.

>>> from hypothesis import given
>>> @given(from_grammar(grammar))
... def test_parser_accepts(text): ...

Hypothesis is imported here only, so the rest of grammarkit never needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from grammarkit.automata import utf8
from grammarkit.sample import Deriver

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

    from grammarkit.grammar import Grammar


def from_grammar(grammar: Grammar, *, max_length: int = 64) -> SearchStrategy[str]:
    """Strings of ``grammar``'s language, of about ``max_length`` characters at most.

    Derivations are driven by hypothesis' choices, so failing examples shrink towards the
    simplest sentence. An empty language gives ``nothing()``.
    """
    from hypothesis import assume
    from hypothesis import strategies as st

    deriver = Deriver(grammar, max_length)
    if not deriver.possible:
        return st.nothing()

    @st.composite
    def sentences(draw: DrawFn) -> str:
        text = deriver.derive(_DrawChooser(draw))
        assume(text is not None)
        assert text is not None
        return text

    return sentences()


class _DrawChooser:
    """Chooser decisions drawn from hypothesis (integers shrink towards the simplest)."""

    def __init__(self, draw: DrawFn):
        from hypothesis import strategies as st

        self.draw = draw
        self.st = st

    def index(self, n: int) -> int:
        return self.draw(self.st.integers(0, n - 1))

    def count(self, low: int, high: int) -> int:
        return self.draw(self.st.integers(low, high))

    def codepoint(self, ranges: utf8.CodepointRanges) -> int:
        lo, hi = ranges[self.index(len(ranges))]
        return self.draw(self.st.integers(lo, hi))
