"""Bit setting in bitmask rows: `set_bits`, `clear_bits` and `FixedBits` agree with a plain
boolean array, for sparse and dense id sets and repeated ids."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.decode.bitmask import (
    DENSE_IDS,
    FixedBits,
    bools_from_words,
    clear_bits,
    set_bits,
    words_from_bools,
)

VOCAB = 3 * DENSE_IDS + 17
"""Not a multiple of 32: the last word is partly outside the vocabulary."""

ids = st.lists(st.integers(0, VOCAB - 1), max_size=40).map(
    lambda found: np.array(found, dtype=np.int64))


@given(seed=st.integers(0, 2**32 - 1), added=ids, dense=st.booleans(), removed=ids)
@settings(max_examples=40, deadline=None)
def test_bits_set_and_cleared_as_in_a_boolean_array(seed: int, added: np.ndarray, dense: bool,
                                                    removed: np.ndarray) -> None:
    expected = np.random.default_rng(seed).random(VOCAB) < 0.5
    words = words_from_bools(expected)
    if dense:  # past DENSE_IDS ids set_bits packs a boolean array instead
        added = np.concatenate([added, np.arange(0, VOCAB, 2, dtype=np.int64)])
    set_bits(words, added)
    expected[added] = True
    assert np.array_equal(bools_from_words(words, VOCAB), expected)
    clear_bits(words, removed)
    expected[removed] = False
    assert np.array_equal(bools_from_words(words, VOCAB), expected)
    fixed = FixedBits(removed)
    row = words.copy()
    fixed.set_in(row)
    expected[removed] = True
    assert np.array_equal(bools_from_words(row, VOCAB), expected)
