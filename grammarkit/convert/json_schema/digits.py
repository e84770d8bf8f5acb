"""Fixed-width digit strings whose value lies in a range, as compact grammar expressions.

The classic range decomposition: the ``width``-digit strings with value in ``[low, high]`` are
covered by at most ``2 * width`` patterns, each a run of exact digits, one digit range, and a
run of free digits. Decimal integers, ``\\uXXXX`` escapes (hexadecimal, either letter case) and
surrogate pairs are all built from it.
"""

from __future__ import annotations

from collections.abc import Callable

from grammarkit.ebnf import ast

Pattern = tuple[tuple[int, int], ...]
"""Per position, the inclusive range of digit values allowed."""


def range_patterns(low: int, high: int, width: int, base: int) -> list[Pattern]:
    """Patterns covering exactly the ``width``-digit base-``base`` strings (leading zeros
    included) whose value is in ``[low, high]``."""
    if low > high:
        return []
    low_digits = _digits(low, width, base)
    high_digits = _digits(high, width, base)
    common = 0
    while common < width and low_digits[common] == high_digits[common]:
        common += 1
    head = tuple((digit, digit) for digit in low_digits[:common])
    if common == width:
        return [head]
    top = base - 1
    free = ((0, top),) * (width - common - 1)
    low_digit, high_digit = low_digits[common], high_digits[common]
    low_rest, high_rest = low_digits[common + 1 :], high_digits[common + 1 :]
    patterns: list[Pattern] = []
    first_full = low_digit if all(d == 0 for d in low_rest) else low_digit + 1
    last_full = high_digit if all(d == top for d in high_rest) else high_digit - 1
    if first_full > low_digit:
        patterns.extend(_at_least(head + ((low_digit, low_digit),), low_rest, top))
    if first_full <= last_full:
        patterns.append(head + ((first_full, last_full),) + free)
    if last_full < high_digit:
        patterns.extend(_at_most(head + ((high_digit, high_digit),), high_rest, top))
    return patterns


def _digits(value: int, width: int, base: int) -> list[int]:
    digits = []
    for _ in range(width):
        value, digit = divmod(value, base)
        digits.append(digit)
    return digits[::-1]


def _at_least(head: Pattern, rest: list[int], top: int) -> list[Pattern]:
    """Strings ``head`` + X, with X (as long as ``rest``) at least ``rest``."""
    patterns = []
    for index, digit in enumerate(rest):
        exact = head + tuple((d, d) for d in rest[:index])
        free = ((0, top),) * (len(rest) - index - 1)
        if all(d == 0 for d in rest[index + 1 :]):
            patterns.append(exact + ((digit, top),) + free)
            break
        if digit < top:
            patterns.append(exact + ((digit + 1, top),) + free)
    return patterns


def _at_most(head: Pattern, rest: list[int], top: int) -> list[Pattern]:
    """Strings ``head`` + X, with X (as long as ``rest``) at most ``rest``."""
    patterns = []
    for index, digit in enumerate(rest):
        exact = head + tuple((d, d) for d in rest[:index])
        free = ((0, top),) * (len(rest) - index - 1)
        if all(d == top for d in rest[index + 1 :]):
            patterns.append(exact + ((0, digit),) + free)
            break
        if digit > 0:
            patterns.append(exact + ((0, digit - 1),) + free)
    return patterns


def render(pattern: Pattern, digit: Callable[[int, int], ast.Expr], top: int) -> ast.Expr:
    """One pattern as an expression: exact digits (``0``-``9``) merge into one literal, runs of
    free positions into a repetition; ``digit(low, high)`` spells any other position."""
    items: list[ast.Expr] = []
    text = ""
    free_run = 0
    for low, high in pattern:
        if (low, high) == (0, top):
            free_run += 1
            continue
        if free_run:
            items.extend([ast.Literal(text)] if text else [])
            items.append(_repeat(digit(0, top), free_run))
            text, free_run = "", 0
        if low == high <= 9:
            text += str(low)
        else:
            items.extend([ast.Literal(text)] if text else [])
            items.append(digit(low, high))
            text = ""
    items.extend([ast.Literal(text)] if text else [])
    if free_run:
        items.append(_repeat(digit(0, top), free_run))
    return sequence(items)


def _repeat(item: ast.Expr, count: int) -> ast.Expr:
    return item if count == 1 else ast.Repeat(item, count, count)


def repeat(item: ast.Expr, low: int, high: int | None) -> ast.Expr:
    """``item`` between ``low`` and ``high`` times (``None``: unbounded), in its simplest form."""
    if high == 0:
        return ast.Literal("")
    if (low, high) == (0, None):
        return ast.Repeat(item, 0, None, "*")
    if (low, high) == (0, 1):
        return ast.Repeat(item, 0, 1, "?")
    return item if low == high == 1 else ast.Repeat(item, low, high)


def choice(alternatives: list[ast.Expr]) -> ast.Expr:
    """``a | b | ...``, or the single alternative, or nothing (an empty class) for none."""
    alternatives = [a for a in alternatives if not is_nothing(a)]
    if not alternatives:
        return ast.CharClass(())
    return alternatives[0] if len(alternatives) == 1 else ast.Choice(tuple(alternatives))


def is_nothing(expr: ast.Expr) -> bool:
    """Whether ``expr`` is the empty character class (which matches nothing)."""
    return isinstance(expr, ast.CharClass) and not expr.ranges and not expr.negated


def prefixed(heads: list[ast.Expr], tail: ast.Expr) -> ast.Expr:
    """``sequence([*heads, tail])`` for a ``tail`` that :func:`sequence` built: only the seam
    is joined and ``tail``'s other items are copied as they are, instead of walked again item
    by item (chains built from their ends were walked once per link)."""
    if not isinstance(tail, ast.Sequence):
        return sequence([*heads, tail])
    first = sequence([*heads, tail.items[0]])
    if is_nothing(first):
        return first
    if isinstance(first, ast.Sequence):
        items = first.items + tail.items[1:]
    elif first == ast.Literal(""):
        items = tail.items[1:]
    else:
        items = (first, *tail.items[1:])
    return items[0] if len(items) == 1 else ast.Sequence(items)


def sequence(items: list[ast.Expr]) -> ast.Expr:
    """Juxtaposition, merging adjacent literals; the single item when there is one."""
    kept: list[ast.Expr] = []
    pending = list(reversed(items))
    while pending:
        part = pending.pop()
        if isinstance(part, ast.Sequence):
            pending.extend(reversed(part.items))
            continue
        if isinstance(part, ast.Literal):
            if not part.value:
                continue
            last = kept[-1] if kept else None
            if isinstance(last, ast.Literal):
                kept[-1] = ast.Literal(last.value + part.value)
                continue
        elif isinstance(part, ast.CharClass) and not part.ranges and not part.negated:
            return part  # nothing: the whole sequence matches nothing
        kept.append(part)
    if not kept:
        return ast.Literal("")
    return kept[0] if len(kept) == 1 else ast.Sequence(tuple(kept))
