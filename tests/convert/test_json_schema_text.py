"""The JSON string layer, pattern search semantics and formats, against independent oracles."""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import codepoints
from grammarkit.convert.json_schema.automata import (
    SCALARS,
    Ranges,
    complement,
    dfa_from_expr,
    in_ranges,
    intersect,
    literals_dfa,
    with_length,
)
from grammarkit.convert.json_schema.formats import STRING_FORMATS
from grammarkit.convert.json_schema.json_text import spell_ranges
from grammarkit.convert.json_schema.languages import without_empty
from grammarkit.convert.json_schema.patterns import pattern_expr
from grammarkit.convert.regex import regex_to_ast

scalars = st.integers(0, 0x10FFFF).filter(lambda cp: not 0xD800 <= cp <= 0xDFFF)
code_point_sets = st.lists(st.tuples(scalars, st.integers(0, 70000)), min_size=1,
                           max_size=4).map(
    lambda pairs: codepoints.merge((low, min(low + width, 0x10FFFF)) for low, width in pairs))


def json_spellings(point: int) -> list[str]:
    """Every JSON spelling of one code point (hex digits in both cases)."""
    char = chr(point)
    forms = [json.dumps(char, ensure_ascii=True)[1:-1], json.dumps(char, ensure_ascii=False)[1:-1]]
    if point < 0x10000:
        forms += [f"\\u{point:04x}", f"\\u{point:04X}"]
    else:
        offset = point - 0x10000
        forms += [f"\\u{0xD800 + (offset >> 10):04x}\\u{0xDC00 + (offset & 0x3FF):04X}"]
    if char == "/":
        forms.append("\\/")
    return forms


@settings(max_examples=60)
@given(code_point_sets, st.lists(scalars, max_size=6))
def test_spell_ranges_matches_exactly_the_spellings_of_members(ranges: Ranges,
                                                                 extra: list[int]) -> None:
    dfa = dfa_from_expr(spell_ranges(ranges))
    probes = set(extra)
    for low, high in ranges:
        probes |= {low, high, (low + high) // 2, low - 1, high + 1}
    for point in probes:
        if 0 <= point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF:
            for text in json_spellings(point):
                assert dfa.accepts(text) == in_ranges(point, ranges), (hex(point), text)
    assert not dfa.accepts("\\ud800") and not dfa.accepts("\\udc00")


# Regular expressions where ECMA-262 and Python's ``re`` agree.
atoms = st.sampled_from(["a", "b", "c", "[ab]", "[^a]", "\\d", "(a|bc)", "(?:ab)", "x"])
quantifiers = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}"])
simple_patterns = st.builds(
    lambda start, parts, end: ("^" if start else "") + "".join(parts) + ("$" if end else ""),
    st.booleans(), st.lists(st.builds(str.__add__, atoms, quantifiers), min_size=1,
                            max_size=4), st.booleans())
texts = st.text(alphabet="abcx1 ", max_size=8)


@settings(max_examples=80)
@given(simple_patterns, st.lists(texts, min_size=1, max_size=10))
def test_patterns_search_like_ecma(pattern: str, samples: list[str]) -> None:
    dfa = dfa_from_expr(pattern_expr(pattern))
    for text in samples:
        assert dfa.accepts(text) == bool(re.search(pattern, text)), (pattern, text)


@settings(max_examples=40)
@given(simple_patterns, st.integers(0, 4), st.integers(0, 6), st.lists(texts, max_size=10))
def test_pattern_length_intersection(pattern: str, low: int, extra: int,
                                     samples: list[str]) -> None:
    dfa = with_length(dfa_from_expr(pattern_expr(pattern)), low, low + extra)
    for text in samples:
        expected = bool(re.search(pattern, text)) and low <= len(text) <= low + extra
        assert dfa.accepts(text) == expected


@settings(max_examples=60)
@given(simple_patterns.map(lambda p: p.replace("+", "*")), st.lists(texts, max_size=10))
def test_non_empty_part_of_a_pattern(pattern: str, samples: list[str]) -> None:
    dfa = dfa_from_expr(without_empty(pattern_expr(pattern)))
    for text in [*samples, ""]:
        assert dfa.accepts(text) == (bool(re.search(pattern, text)) and text != "")


@settings(max_examples=40)
@given(st.lists(st.text(alphabet="abé", max_size=4), max_size=5), st.lists(
    st.text(alphabet="abé", max_size=5), max_size=10))
def test_complement_of_a_word_list(words: list[str], samples: list[str]) -> None:
    others = intersect(complement(literals_dfa(words)), dfa_from_expr(regex_to_ast("[^]*")))
    for text in samples + words:
        assert others.accepts(text) == (text not in words)


def _format(name: str) -> object:
    return dfa_from_expr(regex_to_ast(STRING_FORMATS[name]))


@settings(max_examples=60)
@given(st.integers(0, 9999), st.integers(0, 13), st.integers(0, 32))
def test_date_knows_the_calendar(year: int, month: int, day: int) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    lengths = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    valid = 1 <= month <= 12 and 1 <= day <= lengths[month - 1]
    if year:
        assert valid == _is_date(year, month, day)
    assert _format("date").accepts(text) == valid, text  # type: ignore[attr-defined]


def _is_date(year: int, month: int, day: int) -> bool:
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    return True


ipv6_texts = st.builds(lambda ip: ip.compressed, st.ip_addresses(v=6)) | st.builds(
    lambda ip: ip.exploded, st.ip_addresses(v=6)) | st.text(alphabet="0123:af.", max_size=12)


@settings(max_examples=80)
@given(ipv6_texts)
def test_ipv6_agrees_with_ipaddress(text: str) -> None:
    try:
        ipaddress.IPv6Address(text)
        valid = "%" not in text
    except ValueError:
        valid = False
    assert _format("ipv6").accepts(text) == valid, text  # type: ignore[attr-defined]


@settings(max_examples=60)
@given(st.builds(str, st.ip_addresses(v=4)) | st.text(alphabet="0125.", max_size=15))
def test_ipv4_agrees_with_ipaddress(text: str) -> None:
    try:
        ipaddress.IPv4Address(text)
        valid = True
    except ValueError:
        valid = False
    assert _format("ipv4").accepts(text) == valid, text  # type: ignore[attr-defined]


@settings(max_examples=30)
@given(st.uuids())
def test_uuid(value: uuid.UUID) -> None:
    dfa = _format("uuid")
    assert dfa.accepts(str(value)) and dfa.accepts(str(value).upper())  # type: ignore[attr-defined]
    assert not dfa.accepts(value.hex)  # type: ignore[attr-defined]


def test_any_scalar_spelling_rule_is_exact_for_lone_surrogates() -> None:
    dfa = dfa_from_expr(spell_ranges(SCALARS))
    assert dfa.accepts("\\uD83D\\uDE00") and not dfa.accepts("\\uDE00\\uD83D")
