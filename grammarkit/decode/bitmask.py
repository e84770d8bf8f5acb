"""Token bitmasks in xgrammar's layout: ``int32`` words, bit ``i % 32`` of word ``i // 32``."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Words = npt.NDArray[np.int32]
"""One row of a bitmask: ``ceil(vocab_size / 32)`` words."""


def bitmask_width(vocab_size: int) -> int:
    """Words per bitmask row for ``vocab_size`` tokens."""
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> npt.NDArray[np.int32]:
    """A ``(batch_size, ceil(vocab_size / 32))`` ``int32`` bitmask with every token allowed.

    Raises
    ------
    ValueError
        If either size is not positive.
    """
    if batch_size <= 0 or vocab_size <= 0:
        raise ValueError(f"sizes must be positive, got batch {batch_size}, vocab {vocab_size}")
    return np.full((batch_size, bitmask_width(vocab_size)), -1, dtype=np.int32)


def words_from_bools(allowed: npt.NDArray[np.bool_]) -> Words:
    """Pack a boolean array indexed by token id into bitmask words."""
    width = bitmask_width(len(allowed))
    padded = np.zeros(width * 32, dtype=np.bool_)
    padded[: len(allowed)] = allowed
    return np.packbits(padded, bitorder="little").view(np.int32)


def bools_from_words(words: Words, vocab_size: int) -> npt.NDArray[np.bool_]:
    """Unpack bitmask words into a boolean array of ``vocab_size`` entries."""
    bits = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), bitorder="little")
    return bits[:vocab_size].astype(np.bool_)


DENSE_IDS = 2048
"""From this many ids on, :func:`set_bits` packs a boolean array instead of scattering bits."""


_BITS = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))
"""``_BITS[i]``: bit ``i`` of a word."""


def set_bits(words: Words, ids: npt.NDArray[np.int64]) -> None:
    """Set the bits of token ``ids`` in ``words`` (in place)."""
    if len(ids) >= DENSE_IDS:
        allowed = np.zeros(len(words) * 32, dtype=np.bool_)
        allowed[ids] = True
        np.bitwise_or(words, np.packbits(allowed, bitorder="little").view(np.int32), out=words)
    elif len(ids):
        np.bitwise_or.at(words.view(np.uint32), ids >> 5, _BITS[ids & 31])


def clear_bits(words: Words, ids: npt.NDArray[np.int64]) -> None:
    """Clear the bits of token ``ids`` in ``words`` (in place)."""
    if len(ids):
        np.bitwise_and.at(words.view(np.uint32), ids >> 5, ~_BITS[ids & 31])


class FixedBits:
    """A few token ids (stop tokens) set into many rows: their words and bits worked out once.

    Parameters
    ----------
    ids
        Token ids, in any order, repeats allowed.
    """

    def __init__(self, ids: npt.NDArray[np.int64]):
        words: dict[int, int] = {}
        for i in ids.tolist():
            words[i >> 5] = words.get(i >> 5, 0) | 1 << (i & 31)
        self._words = np.array(sorted(words), dtype=np.int64)
        self._bits = np.array([words[w] for w in sorted(words)], dtype=np.uint32).view(np.int32)

    def set_in(self, row: Words) -> None:
        """Set the bits in ``row`` (one bitmask row, in place)."""
        if len(self._words):
            row[self._words] |= self._bits


def apply_token_bitmask(logits: Any, bitmask: Any) -> Any:
    """Set ``logits`` to ``-inf`` wherever ``bitmask`` disallows the token, in place.

    Parameters
    ----------
    logits
        A numpy array or torch tensor, ``(vocab,)`` or ``(batch, vocab)``; its vocabulary may be
        smaller than the bitmask's width (padded lm heads are the other way round: extra logits
        beyond the bitmask are masked).
    bitmask
        ``int32`` words as from :func:`allocate_token_bitmask`, numpy or torch.

    Returns
    -------
    The same ``logits`` object.
    """
    words = _to_numpy(bitmask).astype(np.int32, copy=False)
    squeeze = False
    if words.ndim == 1:
        words = words[None, :]
    vocab = logits.shape[-1]
    rows = logits.shape[0] if logits.ndim == 2 else 1
    if logits.ndim == 1:
        squeeze = True
    if words.shape[0] != rows:
        raise ValueError(f"bitmask has {words.shape[0]} rows, logits {rows}")
    allowed = np.zeros((rows, vocab), dtype=np.bool_)
    unpacked = np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=1,
                             bitorder="little").astype(np.bool_)
    covered = min(vocab, unpacked.shape[1])
    allowed[:, :covered] = unpacked[:, :covered]
    blocked = ~allowed[0] if squeeze else ~allowed
    if isinstance(logits, np.ndarray):
        logits[blocked] = -np.inf
        return logits
    import torch

    logits.masked_fill_(torch.from_numpy(blocked).to(logits.device), float("-inf"))
    return logits


def _to_numpy(array: Any) -> npt.NDArray[Any]:
    if isinstance(array, np.ndarray):
        return array
    return array.detach().cpu().numpy()  # a torch tensor
