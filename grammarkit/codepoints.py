"""Sets of code points as sorted, disjoint, non-adjacent inclusive ranges.

The one range algebra every stage shares: classes in the parser and converters, FIRST/FOLLOW
sets in the analyses, UTF-8 compilation in the automata.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_CODEPOINT = 0x10FFFF

Ranges = tuple[tuple[int, int], ...]
"""Sorted, disjoint, non-adjacent inclusive ``(low, high)`` ranges."""


def merge(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """The union of inclusive ``ranges`` (any order, overlapping or adjacent) as :data:`Ranges`."""
    merged: list[tuple[int, int]] = []
    for low, high in sorted(ranges):
        if merged and low <= merged[-1][1] + 1:
            if high > merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return tuple(merged)


def complement(ranges: Ranges, maximum: int = MAX_CODEPOINT) -> Ranges:
    """The points ``0..maximum`` outside ``ranges``."""
    result = []
    next_low = 0
    for low, high in ranges:
        if low > next_low:
            result.append((next_low, low - 1))
        next_low = high + 1
    if next_low <= maximum:
        result.append((next_low, maximum))
    return tuple(result)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The points in both ``a`` and ``b``."""
    result: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        low = max(a[i][0], b[j][0])
        high = min(a[i][1], b[j][1])
        if low <= high:
            result.append((low, high))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(result)
