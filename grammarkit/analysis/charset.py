"""Sets of code points as sorted, disjoint, non-adjacent inclusive intervals.

Analyses use them for FIRST and FOLLOW sets. :data:`END`, one past the last code point, stands for
the end of the input, so a FOLLOW set is a ``CharSet`` that may contain it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from grammarkit.codepoints import MAX_CODEPOINT, merge

END = MAX_CODEPOINT + 1
"""A pseudo code point: the end of the input."""


@dataclass(frozen=True, slots=True)
class CharSet:
    """An immutable set of code points (and possibly :data:`END`)."""

    intervals: tuple[tuple[int, int], ...] = ()

    @classmethod
    def of(cls, ranges: Iterable[tuple[int, int]]) -> CharSet:
        """The union of inclusive ``ranges``, in any order, overlapping or not."""
        return cls(merge(ranges))

    @classmethod
    def of_string(cls, text: str) -> CharSet:
        """The code points occurring in ``text``."""
        return cls.of((ord(c), ord(c)) for c in set(text))

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def __contains__(self, point: int) -> bool:
        return any(low <= point <= high for low, high in self.intervals)

    def union(self, other: CharSet) -> CharSet:
        """``self | other``; returns an operand unchanged when the other adds nothing."""
        if not other.intervals or self.intervals == other.intervals:
            return self
        if not self.intervals:
            return other
        return CharSet.of(self.intervals + other.intervals)

    def intersects(self, other: CharSet) -> bool:
        """Whether the two sets share a member."""
        i = j = 0
        a, b = self.intervals, other.intervals
        while i < len(a) and j < len(b):
            if a[i][1] < b[j][0]:
                i += 1
            elif b[j][1] < a[i][0]:
                j += 1
            else:
                return True
        return False

    def complement(self) -> CharSet:
        """The code points (not :data:`END`) outside this set."""
        result: list[tuple[int, int]] = []
        next_low = 0
        for low, high in self.intervals:
            if low > MAX_CODEPOINT:
                break
            if low > next_low:
                result.append((next_low, low - 1))
            next_low = high + 1
        if next_low <= MAX_CODEPOINT:
            result.append((next_low, MAX_CODEPOINT))
        return CharSet(tuple(result))

    def is_subset(self, other: CharSet) -> bool:
        """Whether every member of this set is in ``other``."""
        return other.union(self).intervals == other.intervals


EMPTY = CharSet()
ANY_CHAR = CharSet(((0, MAX_CODEPOINT),))
ANY_CHAR_OR_END = CharSet(((0, END),))
END_ONLY = CharSet(((END, END),))
