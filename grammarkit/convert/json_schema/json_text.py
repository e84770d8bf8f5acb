"""The JSON string layer: every spelling of a code point inside a JSON string literal.

A schema constrains *decoded* string values, but the grammar reads JSON *text*, where a code point
may be written raw or escaped: ``é`` is also ``\\u00e9`` and ``\\u00E9``, ``/`` is also ``\\/``,
``"`` is only ``\\"``, a control character only escaped, and a code point above U+FFFF also as a
surrogate pair ``\\uD83D\\uDE00``. :func:`spell_ranges` builds, for any set of code points, the
expression matching exactly the spellings of one member, so grammars accept a string exactly
when its decoded value is allowed, however it is written. Lone surrogate escapes decode to no
Unicode scalar value and are never accepted.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise

from grammarkit import codepoints
from grammarkit.convert.json_schema.automata import (
    SCALARS,
    Ranges,
    complement_ranges,
    subtract_ranges,
)
from grammarkit.convert.json_schema.digits import (
    Pattern,
    choice,
    is_nothing,
    range_patterns,
    sequence,
)
from grammarkit.ebnf import ast

RAW: Ranges = subtract_ranges(SCALARS, ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C)))
"""Code points a JSON string may contain unescaped."""

SHORT_ESCAPES = {
    0x22: '\\"',
    0x5C: "\\\\",
    0x2F: "\\/",
    0x08: "\\b",
    0x0C: "\\f",
    0x0A: "\\n",
    0x0D: "\\r",
    0x09: "\\t",
}
"""Two-character escapes, by the code point they stand for."""

_BMP: Ranges = ((0x0000, 0xD7FF), (0xE000, 0xFFFF))
_ASTRAL = (0x10000, 0x10FFFF)


def spell_ranges(ranges: Ranges) -> ast.Expr:
    """Every JSON-string spelling of one code point in ``ranges``."""
    ranges = codepoints.intersect(codepoints.merge(ranges), SCALARS)
    alternatives: list[ast.Expr] = []
    raw = codepoints.intersect(ranges, RAW)
    if len(raw) == 1 and raw[0][0] == raw[0][1]:
        alternatives.append(ast.Literal(chr(raw[0][0])))
    elif raw:
        alternatives.append(ast.CharClass(raw))
    short = sorted(char for point, char in SHORT_ESCAPES.items() if _contains(ranges, point))
    if len(short) == 1:
        alternatives.append(ast.Literal(short[0]))
    elif short:
        alternatives.append(
            ast.Sequence((ast.Literal("\\"), ast.CharClass(codepoints.merge((ord(c[1]),) * 2 for c in short))))
        )
    alternatives.extend(_unicode_escapes(ranges))
    return choice(alternatives)


@lru_cache(maxsize=4096)
def spell_char(char: str) -> ast.Expr:
    """Every JSON-string spelling of ``char``."""
    point = ord(char)
    return spell_ranges(((point, point),))


@lru_cache(maxsize=4096)
def spell_text(text: str) -> ast.Expr:
    """Every JSON-string spelling of ``text`` (without the quotes); memoized, as objects split
    by ``if`` or ``oneOf`` spell the same property names again."""
    return sequence([spell_char(char) for char in text])


def quoted(body: ast.Expr) -> ast.Expr:
    """``"`` body ``"``."""
    return sequence([ast.Literal('"'), body, ast.Literal('"')])


def _contains(ranges: Ranges, point: int) -> bool:
    return any(low <= point <= high for low, high in ranges)


def _unicode_escapes(ranges: Ranges) -> list[ast.Expr]:
    """``\\uXXXX`` spellings of the BMP members, surrogate pairs for the others."""
    alternatives: list[ast.Expr] = []
    bmp = codepoints.intersect(ranges, _BMP)
    patterns = [p for low, high in bmp for p in range_patterns(low, high, 4, 16)]
    if patterns:
        alternatives.append(sequence([ast.Literal("\\u"), _factored(patterns)]))
    astral = codepoints.intersect(ranges, (_ASTRAL,))
    for low, high in astral:
        alternatives.extend(_surrogate_pairs(low, high))
    return alternatives


def _factored(patterns: list[Pattern]) -> ast.Expr:
    """Disjoint hex-digit patterns as one expression, common prefixes factored out and
    branches with the same continuation merged into one digit class."""
    return _factored_patterns(tuple(patterns))


@lru_cache(maxsize=1 << 14)
def _factored_patterns(patterns: tuple[Pattern, ...]) -> ast.Expr:
    # Memoized: the escapes of every "any character but these few" class an automaton of
    # property names needs share most of their suffixes.
    if not patterns[0]:
        return ast.Literal("")
    cuts = sorted({p[0][0] for p in patterns} | {p[0][1] + 1 for p in patterns})
    continuations: dict[tuple[int, int], list[Pattern]] = {}
    for low, high in pairwise(cuts):
        for pattern in patterns:
            if pattern[0][0] <= low and high - 1 <= pattern[0][1]:
                continuations.setdefault((low, high - 1), []).append(pattern[1:])
    by_rest: dict[ast.Expr, list[tuple[int, int]]] = {}
    for digits, rests in continuations.items():
        by_rest.setdefault(_factored_patterns(tuple(rests)), []).append(digits)
    return choice([_runs(sequence([hex_digit_class(tuple(digits)), rest]))
                   for rest, digits in by_rest.items()])


def _runs(expr: ast.Expr) -> ast.Expr:
    """A sequence with runs of one repeated item written as a repetition."""
    if not isinstance(expr, ast.Sequence):
        return expr
    items: list[ast.Expr] = []
    counts: list[int] = []
    for part in expr.items:
        item, count = part, 1
        if isinstance(part, ast.Repeat) and part.min == part.max:
            item, count = part.item, part.min
        if items and item == items[-1] and not isinstance(item, ast.Literal):
            counts[-1] += count
        else:
            items.append(item)
            counts.append(count)
    return sequence([item if count == 1 else ast.Repeat(item, count, count)
                     for item, count in zip(items, counts, strict=True)])


def _surrogate_pairs(low: int, high: int) -> list[ast.Expr]:
    """The ``\\uD8xx\\uDCxx`` spellings of the code points in ``[low, high]`` (all astral)."""
    lead_first, trail_first = _split(low)
    lead_last, trail_last = _split(high)
    if lead_first == lead_last:
        pieces = [(lead_first, lead_first, trail_first, trail_last)]
    else:
        full_first = lead_first if trail_first == 0xDC00 else lead_first + 1
        full_last = lead_last if trail_last == 0xDFFF else lead_last - 1
        pieces = []
        if full_first > lead_first:
            pieces.append((lead_first, lead_first, trail_first, 0xDFFF))
        if full_first <= full_last:
            pieces.append((full_first, full_last, 0xDC00, 0xDFFF))
        if full_last < lead_last:
            pieces.append((lead_last, lead_last, 0xDC00, trail_last))
    alternatives = []
    for lead_low, lead_high, trail_low, trail_high in pieces:
        lead = _factored(range_patterns(lead_low, lead_high, 4, 16))
        trail = _factored(range_patterns(trail_low, trail_high, 4, 16))
        alternatives.append(sequence([ast.Literal("\\u"), lead, ast.Literal("\\u"), trail]))
    return alternatives


def _split(point: int) -> tuple[int, int]:
    offset = point - 0x10000
    return 0xD800 + (offset >> 10), 0xDC00 + (offset & 0x3FF)


def hex_digit_class(values: tuple[tuple[int, int], ...]) -> ast.Expr:
    """One hexadecimal digit (either letter case) with a value in ``values``."""
    spans: list[tuple[int, int]] = []
    for low, high in values:
        if low <= 9:
            spans.append((ord("0") + low, ord("0") + min(high, 9)))
        if high >= 10:
            start = max(low, 10) - 10
            spans.append((ord("a") + start, ord("a") + high - 10))
            spans.append((ord("A") + start, ord("A") + high - 10))
    merged = codepoints.merge(spans)
    if len(merged) == 1 and merged[0][0] == merged[0][1]:
        return ast.Literal(chr(merged[0][0]))
    return ast.CharClass(merged)


def spell_expr(expr: ast.Expr, char: Callable[[Ranges], ast.Expr]) -> ast.Expr:
    """A code-point expression translated to JSON string text: every literal character and
    every class spelled in all its forms (``char`` spells one class).

    Iterative, so deeply nested expressions are safe.
    """
    done: dict[int, ast.Expr] = {}
    stack: list[tuple[ast.Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if not expanded and isinstance(node, (ast.Sequence, ast.Choice, ast.Repeat)):
            stack.append((node, True))
            stack.extend((child, False) for child in ast.children(node))
            continue
        if isinstance(node, ast.Literal):
            done[id(node)] = spell_text(node.value)
        elif isinstance(node, ast.CharClass):
            ranges = codepoints.merge(node.ranges)
            done[id(node)] = char(complement_ranges(ranges) if node.negated else
                                  codepoints.intersect(ranges, SCALARS))
        elif isinstance(node, ast.Sequence):
            done[id(node)] = sequence([done[id(item)] for item in node.items])
        elif isinstance(node, ast.Choice):
            done[id(node)] = choice([done[id(item)] for item in node.alternatives])
        elif isinstance(node, ast.Repeat):
            item = done[id(node.item)]
            if is_nothing(item):
                done[id(node)] = ast.Literal("") if node.min == 0 else item
            else:
                done[id(node)] = ast.Repeat(item, node.min, node.max, node.op)
        else:
            raise TypeError(f"{type(node).__name__} can't appear in a string pattern")
    return done[id(expr)]
