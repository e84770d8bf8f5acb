"""JSON numbers as grammar expressions: ranges by digit decomposition, divisibility as DFAs.

Spelling domain: exactness is promised for numbers in *plain notation* (``-12``, ``0.50``,
``3.0``); exponent notation (``1e5``) is accepted only where the schema leaves the number
unconstrained (:data:`ANY_NUMBER`, :data:`ANY_INTEGER`). Within that domain every spelling of an
allowed value is accepted: ``-0``, trailing fraction zeros, ``1.0`` for an integer.

Bounds are exact at any magnitude: digits are compared position by position and runs of equal
digits collapse into repetitions, so ``maximum: 1e300`` costs a handful of alternatives.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from grammarkit.convert.json_schema.automata import (
    DFA,
    StateBuilder,
    TooComplex,
    dfa_from_expr,
    minimize,
)
from grammarkit.convert.json_schema.digits import choice, range_patterns, render, sequence
from grammarkit.ebnf import ast

MAX_DIGITS = 1100
"""Bounds and steps needing more digits than this (beyond any float's) are refused."""

MAX_MODULUS = 1000
"""The largest ``multipleOf`` numerator handled exactly (the divisibility automaton's size)."""

DIGIT = ast.CharClass(((0x30, 0x39),))
NONZERO = ast.CharClass(((0x31, 0x39),))
_ANY_DIGITS = ast.Repeat(DIGIT, 0, None, "*")
_SOME_DIGITS = ast.Repeat(DIGIT, 1, None, "+")
_ZEROS = ast.Repeat(ast.Literal("0"), 0, None, "*")
_SOME_ZEROS = ast.Repeat(ast.Literal("0"), 1, None, "+")
_MINUS = ast.Repeat(ast.Literal("-"), 0, 1, "?")
_EXPONENT_MARK = ast.CharClass(((0x45, 0x45), (0x65, 0x65)))

MAGNITUDE = choice([ast.Literal("0"), sequence([NONZERO, _ANY_DIGITS])])
"""A non-negative integer without leading zeros."""

ANY_NUMBER = sequence([
    _MINUS,
    MAGNITUDE,
    ast.Repeat(sequence([ast.Literal("."), _SOME_DIGITS]), 0, 1, "?"),
    ast.Repeat(sequence([
        _EXPONENT_MARK, ast.Repeat(ast.CharClass(((0x2B, 0x2B), (0x2D, 0x2D))), 0, 1, "?"),
        _SOME_DIGITS,
    ]), 0, 1, "?"),
])
"""Every JSON number."""

ZERO_FRACTION = ast.Repeat(sequence([ast.Literal("."), _SOME_ZEROS]), 0, 1, "?")
"""An optional fraction of zeros: what may follow an integer's digits."""

ANY_INTEGER = sequence([
    _MINUS,
    MAGNITUDE,
    ZERO_FRACTION,
    ast.Repeat(sequence([
        _EXPONENT_MARK, ast.Repeat(ast.Literal("+"), 0, 1, "?"), _SOME_DIGITS,
    ]), 0, 1, "?"),
])
"""The integer-valued JSON numbers with a whole mantissa and a non-negative exponent (``-3``,
``3.0``, ``3e5``, ``3.00E+2``)."""

_NONZERO_TAIL = sequence([_ZEROS, NONZERO, _ANY_DIGITS])

NON_INTEGER = sequence([_MINUS, MAGNITUDE, ast.Literal("."), _NONZERO_TAIL])
"""Plain-notation numbers with a non-zero fraction digit."""


class BoundTooLarge(ValueError):
    """A bound or step needs more than :data:`MAX_DIGITS` digits."""


@dataclass(frozen=True)
class Bound:
    """One end of an interval of numbers."""

    value: Decimal
    exclusive: bool = False


def check_digits(value: Decimal) -> None:
    """Raise :class:`BoundTooLarge` if ``value`` needs more than :data:`MAX_DIGITS` digits."""
    _, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    width = max(len(digits) + exponent, 1) + max(-exponent, 0)
    if width > MAX_DIGITS:
        raise BoundTooLarge(f"{value} needs {width} digits; the limit is {MAX_DIGITS}")


# -- integers ----------------------------------------------------------------------------------
def integer_magnitudes(low: int, high: int | None) -> ast.Expr:
    """Spellings (no leading zeros) of the integers in ``[low, high]``, ``0 <= low``;
    ``high=None`` for no upper bound."""
    alternatives: list[ast.Expr] = []
    if low == 0:
        alternatives.append(ast.Literal("0"))
        low = 1
    if high is not None and low > high:
        return choice(alternatives)
    width = len(str(low))
    high_width = None if high is None else len(str(high))
    while True:
        block_start = 10 ** (width - 1)
        if high is None or (high_width is not None and width < high_width):
            if low != block_start:
                # The rest of this width, then start the next one from its first number.
                alternatives.extend(_decimal(p) for p in range_patterns(low, 10**width - 1,
                                                                        width, 10))
                low, width = 10**width, width + 1
                continue
            if high is None:
                alternatives.append(sequence([NONZERO, ast.Repeat(DIGIT, width - 1, None)]))
                break
            assert high_width is not None
            last_full = high_width if high == 10**high_width - 1 else high_width - 1
            alternatives.append(sequence([NONZERO, ast.Repeat(DIGIT, width - 1, last_full - 1)]))
            if last_full == high_width:
                break
            low, width = 10 ** (high_width - 1), high_width
            continue
        alternatives.extend(_decimal(p) for p in range_patterns(low, high, width, 10))
        break
    return choice(alternatives)


def _decimal(pattern: tuple[tuple[int, int], ...]) -> ast.Expr:
    return render(pattern, _digit_class, 9)


def _digit_class(low: int, high: int) -> ast.Expr:
    return ast.CharClass(((0x30 + low, 0x30 + high),))


# -- fractions ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Digits:
    """A set of fraction digit strings: whether the empty string (no fraction) is a member,
    and the non-empty members as alternatives."""

    empty: bool
    alternatives: tuple[ast.Expr, ...]

    def prefixed(self, digits: str) -> list[ast.Expr]:
        """The members, each after ``digits``."""
        head: list[ast.Expr] = [ast.Literal(digits)] if self.empty else []
        return head + [sequence([ast.Literal(digits), alt]) for alt in self.alternatives]

    @property
    def is_empty_set(self) -> bool:
        return not self.empty and not self.alternatives


def _runs(digits: str) -> list[tuple[str, int, int]]:
    """``digits`` as runs of one repeated digit: (digits before the run, digit, run length)."""
    runs = []
    start = 0
    while start < len(digits):
        end = start
        while end < len(digits) and digits[end] == digits[start]:
            end += 1
        runs.append((digits[:start], int(digits[start]), end - start))
        start = end
    return runs


def _up_to(digit: int, run: int) -> ast.Expr:
    """Between none and ``run - 1`` copies of ``digit``: how far into a run a comparison goes."""
    return ast.Repeat(ast.Literal(str(digit)), 0, run - 1) if run > 1 else ast.Literal("")


def _at_least(bound: str, inclusive: bool) -> _Digits:
    """Digit strings ``d`` with ``0.d >= 0.bound`` (``>`` unless ``inclusive``)."""
    if not bound:
        return _Digits(inclusive, (_SOME_DIGITS if inclusive else _NONZERO_TAIL,))
    alternatives = [
        sequence([ast.Literal(before), _up_to(digit, run),
                  ast.CharClass(((0x31 + digit, 0x39),)), _ANY_DIGITS])
        for before, digit, run in _runs(bound)
        if digit < 9
    ]
    alternatives.append(sequence([ast.Literal(bound),
                                  _ANY_DIGITS if inclusive else _NONZERO_TAIL]))
    return _Digits(False, tuple(alternatives))


def _at_most(bound: str, inclusive: bool) -> _Digits:
    """Digit strings ``d`` with ``0.d <= 0.bound`` (``<`` unless ``inclusive``)."""
    if not bound:
        return _Digits(True, (_SOME_ZEROS,)) if inclusive else _Digits(False, ())
    alternatives: list[ast.Expr] = []
    for before, digit, run in _runs(bound):
        # Stopping early (a proper prefix of the bound) is always smaller.
        if before:
            alternatives.append(ast.Literal(before))
        if run > 1:
            alternatives.append(sequence([ast.Literal(before),
                                          ast.Repeat(ast.Literal(str(digit)), 1, run - 1)]))
        if digit > 0:
            alternatives.append(sequence([ast.Literal(before), _up_to(digit, run),
                                          ast.CharClass(((0x30, 0x2F + digit),)), _ANY_DIGITS]))
    if inclusive:
        alternatives.append(sequence([ast.Literal(bound), _ZEROS]))
    return _Digits(True, tuple(alternatives))


def _between(low: str, high: str, low_inclusive: bool, high_inclusive: bool) -> _Digits:
    """Digit strings ``d`` with ``0.low <= 0.d <= 0.high`` (ends as the flags say), given
    ``0.low <= 0.high``."""
    width = max(len(low), len(high))
    padded_low, padded_high = low.ljust(width, "0"), high.ljust(width, "0")
    common = 0
    while common < width and padded_low[common] == padded_high[common]:
        common += 1
    if common == width:
        if not (low_inclusive and high_inclusive):
            return _Digits(False, ())
        return _Digits(True, (_SOME_ZEROS,)) if not low else _Digits(
            False, (sequence([ast.Literal(low), _ZEROS]),))
    prefix = padded_low[:common]
    low_digit, high_digit = int(padded_low[common]), int(padded_high[common])
    # Ending within the shared prefix equals ``low`` if ``low`` ends there, else is below it.
    alternatives: list[ast.Expr] = []
    if low_inclusive:
        alternatives.extend(ast.Literal(prefix[:k]) for k in range(max(len(low), 1), common + 1))
    alternatives.extend(_at_least(low[common + 1 :], low_inclusive).prefixed(
        prefix + str(low_digit)))
    if high_digit - low_digit > 1:
        alternatives.append(sequence([
            ast.Literal(prefix), ast.CharClass(((0x31 + low_digit, 0x2F + high_digit),)),
            _ANY_DIGITS,
        ]))
    alternatives.extend(_at_most(high[common + 1 :], high_inclusive).prefixed(
        prefix + str(high_digit)))
    return _Digits(not low and low_inclusive, tuple(alternatives))


def _fraction(digits: _Digits) -> ast.Expr:
    """A number's optional fraction part, from the set of its digit strings."""
    dotted = [sequence([ast.Literal("."), alt]) for alt in digits.alternatives]
    if digits.empty:
        dotted.insert(0, ast.Literal(""))
    return choice(dotted)


_ANY_FRACTION = ast.Repeat(sequence([ast.Literal("."), _SOME_DIGITS]), 0, 1, "?")


# -- signed ranges -----------------------------------------------------------------------------
def number_range(low: Bound | None, high: Bound | None, integer: bool) -> ast.Expr:
    """Plain-notation spellings of the numbers (only integers if ``integer``) within the bounds.

    Raises
    ------
    BoundTooLarge
        If a bound needs more than :data:`MAX_DIGITS` digits.
    """
    for bound in (low, high):
        if bound is not None:
            check_digits(bound.value)
    alternatives = []
    positive = _magnitudes(_at_least_zero(low), high, integer)
    if positive is not None:
        alternatives.append(positive)
    negative = _magnitudes(_at_least_zero(_negated(high)), _negated(low), integer)
    if negative is not None:
        alternatives.append(sequence([ast.Literal("-"), negative]))
    return choice(alternatives)


def _negated(bound: Bound | None) -> Bound | None:
    return None if bound is None else Bound(-bound.value, bound.exclusive)


def _at_least_zero(low: Bound | None) -> Bound:
    if low is None or low.value < 0:
        return Bound(Decimal(0))
    return low


def _magnitudes(low: Bound, high: Bound | None, integer: bool) -> ast.Expr | None:
    """Spellings of the magnitudes in the interval (``low >= 0``), or ``None`` if it is empty."""
    if high is not None and (high.value < low.value or (
            high.value == low.value and (high.exclusive or low.exclusive))):
        return None
    if integer:
        first = _rounded(low.value, ROUND_CEILING)
        if low.exclusive and first == low.value:
            first += 1
        last = None
        if high is not None:
            last = _rounded(high.value, ROUND_FLOOR)
            if high.exclusive and last == high.value:
                last -= 1
            if last < first:
                return None
        return sequence([integer_magnitudes(first, last), ZERO_FRACTION])
    low_whole, low_fraction = _split(low.value)
    bottom = sequence([ast.Literal(str(low_whole)),
                       _fraction(_at_least(low_fraction, not low.exclusive))])
    if high is None:
        return choice([bottom, sequence([integer_magnitudes(low_whole + 1, None),
                                         _ANY_FRACTION])])
    high_whole, high_fraction = _split(high.value)
    if low_whole == high_whole:
        digits = _between(low_fraction, high_fraction, not low.exclusive, not high.exclusive)
        if digits.is_empty_set:
            return None
        return sequence([ast.Literal(str(low_whole)), _fraction(digits)])
    parts = [bottom]
    if high_whole - low_whole > 1:
        parts.append(sequence([integer_magnitudes(low_whole + 1, high_whole - 1),
                               _ANY_FRACTION]))
    top = _at_most(high_fraction, not high.exclusive)
    if not top.is_empty_set:
        parts.append(sequence([ast.Literal(str(high_whole)), _fraction(top)]))
    return choice(parts)


def _split(value: Decimal) -> tuple[int, str]:
    """A non-negative decimal as (integer part, fraction digits without trailing zeros)."""
    whole, _, fraction = format(value, "f").partition(".")
    return int(whole), fraction.rstrip("0")


def _rounded(value: Decimal, rounding: str) -> int:
    return int(value.to_integral_value(rounding=rounding))


# -- divisibility ------------------------------------------------------------------------------
def multiple_dfa(step: Decimal) -> DFA:
    """Plain-notation numbers that are whole multiples of ``step > 0``, as a DFA.

    With ``step = p / 10**q`` (``p`` an integer), ``x`` is a multiple exactly when ``x * 10**q``
    is an integer divisible by ``p``: the automaton tracks the remainder modulo ``p`` of the
    digits read so far and, after the point, how many fraction digits it has read.

    Raises
    ------
    TooComplex
        If ``p`` exceeds :data:`MAX_MODULUS`.
    BoundTooLarge
        If ``step`` needs more than :data:`MAX_DIGITS` digits.
    """
    check_digits(step)
    modulus, scale = _as_fraction(step)
    if modulus > MAX_MODULUS:
        raise TooComplex(f"multipleOf {step} needs a divisibility check modulo {modulus}; "
                         f"the limit is {MAX_MODULUS}")
    builder = StateBuilder()
    start, sign = builder.state("start"), builder.state("sign")
    builder.edges[start].append((((0x2D, 0x2D),), sign))
    for origin in (start, sign):
        builder.edges[origin].append((((0x30, 0x30),), builder.state(("whole", 0, True))))
        for digit in range(1, 10):
            target = builder.state(("whole", digit % modulus, False))
            builder.edges[origin].append((((0x30 + digit,) * 2,), target))
    while builder.pending:
        key = builder.pending.pop()
        if not isinstance(key, tuple):
            continue
        source = builder.ids[key]
        kind, remainder = key[0], key[1]
        if kind == "whole":
            if remainder * 10**scale % modulus == 0:
                builder.accepting.add(source)
            if not key[2]:
                for digit in range(10):
                    target = builder.state(("whole", (remainder * 10 + digit) % modulus, False))
                    builder.edges[source].append((((0x30 + digit,) * 2,), target))
            builder.edges[source].append((((0x2E, 0x2E),), builder.state(("point", remainder))))
            continue
        read = key[2] if kind == "fraction" else 0
        if kind == "fraction" and remainder * 10 ** (scale - read) % modulus == 0:
            builder.accepting.add(source)
        if read < scale:
            for digit in range(10):
                target = builder.state(("fraction", (remainder * 10 + digit) % modulus, read + 1))
                builder.edges[source].append((((0x30 + digit,) * 2,), target))
        else:
            target = builder.state(("fraction", remainder, read))
            builder.edges[source].append((((0x30, 0x30),), target))
    return minimize(builder.finish(start))


def _as_fraction(step: Decimal) -> tuple[int, int]:
    """``step`` as ``(p, q)`` with ``step == p / 10**q`` and ``q`` minimal."""
    _, digits, exponent = step.normalize().as_tuple()
    assert isinstance(exponent, int)
    numerator = int("".join(map(str, digits)) or "0")
    if exponent >= 0:
        return numerator * 10**exponent, 0
    return numerator, -exponent


def non_integer_dfa() -> DFA:
    """:data:`NON_INTEGER` as a DFA."""
    return dfa_from_expr(NON_INTEGER)


def range_dfa(low: Bound | None, high: Bound | None, integer: bool) -> DFA:
    """:func:`number_range` as a DFA."""
    return dfa_from_expr(number_range(low, high, integer))
