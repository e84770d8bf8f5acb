"""Code point sets to UTF-8 byte-range sequences, and locating characters in byte strings."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.automata import utf8

codepoints = st.integers(0, utf8.MAX_CODEPOINT)
boundaries = st.sampled_from([0, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDFFF, 0xE000,
                              0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0x10FFFF])
interesting = st.one_of(codepoints, boundaries, boundaries.map(lambda b: min(b + 1, 0x10FFFF)))
code_sets = st.lists(st.tuples(interesting, interesting).map(sorted), max_size=4).map(
    lambda pairs: utf8.normalize((lo, hi) for lo, hi in pairs))


def matches(sequences: list[utf8.ByteSequence], data: bytes) -> bool:
    return any(len(seq) == len(data) and all(lo <= b <= hi for b, (lo, hi) in zip(data, seq,
                                                                                    strict=True))
               for seq in sequences)


@settings(max_examples=150)
@given(ranges=code_sets, probes=st.lists(interesting, min_size=1, max_size=40))
def test_byte_sequences_match_exactly_the_encodings(ranges: utf8.CodepointRanges,
                                                    probes: list[int]) -> None:
    sequences = utf8.byte_sequences(ranges)
    for cp in probes + [p for r in ranges for p in r]:
        inside = any(lo <= cp <= hi for lo, hi in ranges)
        assert matches(sequences, utf8.encode(chr(cp))) == inside


@settings(max_examples=100)
@given(ranges=code_sets, data=st.binary(min_size=1, max_size=4))
def test_byte_sequences_match_only_valid_utf8(ranges: utf8.CodepointRanges, data: bytes) -> None:
    if matches(utf8.byte_sequences(ranges), data):
        decoded = data.decode("utf-8", "surrogatepass")
        assert len(decoded) == 1 and any(lo <= ord(decoded) <= hi for lo, hi in ranges)


def test_everything_takes_seven_sequences() -> None:
    assert len(utf8.byte_sequences(((0, utf8.MAX_CODEPOINT),))) == 7
    assert utf8.byte_sequences(()) == []


@given(code_sets)
def test_complement_is_an_involution(ranges: utf8.CodepointRanges) -> None:
    inverse = utf8.complement(ranges)
    assert utf8.complement(inverse) == ranges
    assert sum(hi - lo + 1 for lo, hi in ranges + inverse) == utf8.MAX_CODEPOINT + 1


def test_class_codepoints() -> None:
    assert utf8.class_codepoints([(5, 9), (0, 6)], negated=False) == ((0, 9),)
    assert utf8.class_codepoints([], negated=True) == ((0, utf8.MAX_CODEPOINT),)
    assert utf8.class_codepoints([(0, 10)], negated=True) == ((11, utf8.MAX_CODEPOINT),)


def test_char_start() -> None:
    data = "aé€😀".encode()
    starts = [utf8.char_start(data, i) for i in range(len(data) + 1)]
    assert starts == [0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10]
    malformed = b'"\xe6\x97"'
    assert [utf8.char_start(malformed, i) for i in range(5)] == [0, 1, 1, 1, 4]
    assert utf8.char_start(b"\x80\x80", 1) == 1
