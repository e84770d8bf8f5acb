"""Flat numpy views of a vocabulary for the decoder: concatenated bytes, offsets, sort order."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, eq=False)
class VocabArrays:
    """Read-only numpy arrays describing every token id of a `Vocabulary`.

    Attributes
    ----------
    data : ndarray of uint8
        All tokens' bytes concatenated in id order.
    offsets : ndarray of int64, shape (vocab_size + 1,)
        Token ``i`` is ``data[offsets[i]:offsets[i + 1]]``.
    lengths : ndarray of int32, shape (vocab_size,)
        Byte length of each token (0 for unused ids).
    sorted_ids : ndarray of int32, shape (vocab_size,)
        All ids ordered by their bytes (lexicographically; equal bytes by id), so tokens
        sharing a prefix are contiguous, as a token trie walk needs.
    special_mask : ndarray of bool, shape (vocab_size,)
        True for special (and unused) ids.
    stop_mask : ndarray of bool, shape (vocab_size,)
        True for stop ids.
    """

    data: npt.NDArray[np.uint8]
    offsets: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int32]
    sorted_ids: npt.NDArray[np.int32]
    special_mask: npt.NDArray[np.bool_]
    stop_mask: npt.NDArray[np.bool_]


def _mask(size: int, ids: Collection[int]) -> npt.NDArray[np.bool_]:
    mask = np.zeros(size, dtype=np.bool_)
    mask[np.fromiter(ids, dtype=np.int64, count=len(ids))] = True
    return mask


def build_arrays(
    tokens: Sequence[bytes], special_ids: Collection[int], stop_ids: Collection[int]
) -> VocabArrays:
    """Index ``tokens`` into a `VocabArrays` (about 0.2 s for 250k tokens)."""
    size = len(tokens)
    lengths = np.fromiter(map(len, tokens), dtype=np.int32, count=size)
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    sorted_ids = np.array(sorted(range(size), key=tokens.__getitem__), dtype=np.int32)
    arrays = VocabArrays(
        data, offsets, lengths, sorted_ids, _mask(size, special_ids), _mask(size, stop_ids)
    )
    for array in (offsets, lengths, sorted_ids, arrays.special_mask, arrays.stop_mask):
        array.setflags(write=False)
    return arrays
