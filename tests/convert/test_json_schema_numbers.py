"""Numeric grammars against exact decimal arithmetic: bounds, integers, multiples, spellings."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.convert.json_schema.automata import dfa_from_expr, intersect
from grammarkit.convert.json_schema.numbers import (
    ANY_INTEGER,
    ANY_NUMBER,
    Bound,
    BoundTooLarge,
    integer_magnitudes,
    multiple_dfa,
    number_range,
)

decimals = st.builds(
    lambda digits, scale, negative: Decimal(("-" if negative else "") + digits).scaleb(-scale),
    st.from_regex(r"\A(0|[1-9][0-9]{0,5})\Z"), st.integers(0, 4), st.booleans())
bounds = st.none() | st.builds(Bound, decimals, st.booleans())


def spellings(value: Decimal, extra_zeros: int) -> list[str]:
    """Plain-notation spellings of ``value``: canonical, with zeros appended, and ``-0``."""
    text = format(value.normalize(), "f") if value else "0"
    if "." not in text:
        forms = [text, f"{text}.{'0' * max(extra_zeros, 1)}"]
    else:
        forms = [text, text + "0" * extra_zeros]
    if value == 0:
        forms += ["-0", "-0.0"]
    return forms


def inside(value: Decimal, low: Bound | None, high: Bound | None) -> bool:
    above = low is None or (value > low.value if low.exclusive else value >= low.value)
    below = high is None or (value < high.value if high.exclusive else value <= high.value)
    return above and below


@settings(max_examples=150)
@given(bounds, bounds, st.booleans(), st.lists(decimals, min_size=1, max_size=8),
       st.integers(0, 3))
def test_ranges_are_exact(low: Bound | None, high: Bound | None, integer: bool,
                          values: list[Decimal], zeros: int) -> None:
    dfa = dfa_from_expr(number_range(low, high, integer))
    probes = list(values) + [b.value for b in (low, high) if b is not None]
    for value in probes:
        expected = inside(value, low, high) and (not integer or value == value.to_integral())
        for text in spellings(value, zeros):
            assert dfa.accepts(text) == expected, (low, high, integer, text)


@settings(max_examples=80)
@given(st.integers(0, 10**6), st.none() | st.integers(0, 10**7))
def test_integer_magnitudes(low: int, high: int | None) -> None:
    dfa = dfa_from_expr(integer_magnitudes(low, high))
    for value in {low, low - 1, low + 1, 0, 9, 10, 99, 100, 10**6, 10**7 + 1,
                  high if high is not None else 0, (high or 0) + 1}:
        if value >= 0:
            assert dfa.accepts(str(value)) == (low <= value and (high is None or value <= high))
    assert not dfa.accepts("01") and not dfa.accepts("")


@settings(max_examples=100)
@given(st.sampled_from(["1", "2", "3", "7", "10", "0.5", "1.5", "0.25", "0.001", "2.5", "12"]),
       st.lists(decimals, min_size=1, max_size=8), st.integers(0, 2))
def test_multiples(step: str, values: list[Decimal], zeros: int) -> None:
    dfa = multiple_dfa(Decimal(step))
    for value in values:
        for text in spellings(value, zeros):
            assert dfa.accepts(text) == (value % Decimal(step) == 0), (step, text)


def test_multiples_within_a_range() -> None:
    both = intersect(multiple_dfa(Decimal("0.5")),
                     dfa_from_expr(number_range(Bound(Decimal(-1)), Bound(Decimal(2), True),
                                                False)))
    allowed = [str(Decimal(n) / 4) for n in range(-8, 12) if both.accepts(str(Decimal(n) / 4))]
    assert allowed == ["-1", "-0.5", "0", "0.5", "1", "1.5"]


def test_huge_and_tiny_bounds() -> None:
    dfa = dfa_from_expr(number_range(Bound(Decimal("1e-300")), Bound(Decimal("1.5e300")), False))
    assert dfa.accepts("1" + "0" * 300) and dfa.accepts("0." + "0" * 299 + "1")
    assert not dfa.accepts("0." + "0" * 300 + "9") and not dfa.accepts("2" + "0" * 300)
    with pytest.raises(BoundTooLarge):
        number_range(None, Bound(Decimal("1e5000")), False)


def test_unconstrained_spellings() -> None:
    numbers, integers = dfa_from_expr(ANY_NUMBER), dfa_from_expr(ANY_INTEGER)
    for text in ("0", "-1.5e+10", "2E-3", "10.0"):
        assert numbers.accepts(text)
    for text in ("00", "1.", ".1", "+1", "1e", "--1"):
        assert not numbers.accepts(text)
    assert integers.accepts("12.000E+3") and not integers.accepts("1.5e1")
