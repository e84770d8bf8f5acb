"""`TokenIndex`: a vocabulary's ordinary tokens sorted by bytes, as a token trie in arrays.

Tokens are numbered by *rank*, their position in byte order, so tokens sharing a prefix are
contiguous and ``lcp[r]`` (the common prefix of ranks ``r - 1`` and ``r``) lets a depth-first
walk reuse the parser state of the shared prefix, exactly like a walk over a trie. The byte
matrix (one column per byte position, padded) lets a byte automaton run over every token at
once with numpy.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, words_from_bools
from grammarkit.vocab import Vocabulary


class TokenIndex:
    """Ordinary (non-special, non-empty) tokens of one vocabulary, in byte order.

    Attributes
    ----------
    vocab_size
        Ids in the vocabulary (the bitmask width in bits).
    ids : ndarray of int64
        Token id of each rank.
    tokens
        Bytes of each rank.
    lengths : ndarray of int32
        Byte length of each rank.
    lcp : ndarray of int32
        ``lcp[r]``: length of the common prefix of ranks ``r - 1`` and ``r`` (``lcp[0] == 0``).
    columns : ndarray of uint8, shape (max_length, num_tokens)
        ``columns[k, r]``: byte ``k`` of rank ``r`` (0 past its end).
    ordinary_words
        Bitmask words with every ordinary token set.
    first_byte_starts : ndarray of int64, shape (257,)
        Ranks ``first_byte_starts[b]:first_byte_starts[b + 1]`` are the tokens starting with
        byte ``b``.
    """

    def __init__(self, vocab: Vocabulary):
        arrays = vocab.to_arrays()
        order = arrays.sorted_ids.astype(np.int64)
        ordinary = ~arrays.special_mask[order] & (arrays.lengths[order] > 0)
        self.vocab_size = vocab.vocab_size
        self.ids = order[ordinary]
        self.ids.setflags(write=False)
        all_tokens = vocab.tokens
        self.tokens: list[bytes] = [all_tokens[i] for i in self.ids.tolist()]
        self.lengths = arrays.lengths[self.ids]
        self.lcp = _common_prefixes(self.tokens)
        self.columns = _byte_columns(arrays.data, arrays.offsets[self.ids], self.lengths)
        allowed = np.zeros(self.vocab_size, dtype=np.bool_)
        allowed[self.ids] = True
        self.ordinary_words: Words = words_from_bools(allowed)
        self.ordinary_words.setflags(write=False)
        self.first_byte_starts = np.searchsorted(self.columns[0], np.arange(257), side="left")
        self.rank_of = np.full(self.vocab_size, -1, dtype=np.int64)
        self.rank_of[self.ids] = np.arange(len(self.ids))

    @property
    def num_tokens(self) -> int:
        return len(self.ids)

    def starting_with(self, first_bytes: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """The ranks, ascending, of the tokens whose first byte is set in ``first_bytes``."""
        starts = self.first_byte_starts
        chosen = np.flatnonzero(first_bytes)
        if len(chosen) == 256:
            return np.arange(self.num_tokens, dtype=np.int64)
        return np.concatenate([np.arange(starts[b], starts[b + 1], dtype=np.int64)
                               for b in chosen.tolist()] or [np.zeros(0, dtype=np.int64)])

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of what the decoder sees of the vocabulary: its size and ordinary tokens."""
        hasher = hashlib.sha256(str(self.vocab_size).encode())
        hasher.update(self.ids.tobytes())
        hasher.update(self.lengths.tobytes())
        hasher.update(b"".join(self.tokens))
        return hasher.hexdigest()

    @property
    def nbytes(self) -> int:
        """Memory held by the index's arrays (the token list not included)."""
        return sum(a.nbytes for a in (self.ids, self.lengths, self.lcp, self.columns,
                                      self.ordinary_words, self.rank_of))


@functools.lru_cache(maxsize=4)
def token_index(vocab: Vocabulary) -> TokenIndex:
    """The (cached) index of ``vocab``: about 1 s for 250k tokens, once per vocabulary."""
    return TokenIndex(vocab)


def _common_prefixes(tokens: list[bytes]) -> npt.NDArray[np.int32]:
    lcp = np.zeros(len(tokens), dtype=np.int32)
    previous = b""
    for rank, token in enumerate(tokens):
        n = min(len(previous), len(token))
        k = 0
        while k < n and previous[k] == token[k]:
            k += 1
        lcp[rank] = k
        previous = token
    return lcp


def _byte_columns(data: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64],
                  lengths: npt.NDArray[np.int32]) -> npt.NDArray[np.uint8]:
    width = int(lengths.max()) if len(lengths) else 0
    columns = np.zeros((width, len(lengths)), dtype=np.uint8)
    for k in range(width):
        present = np.flatnonzero(lengths > k)
        columns[k, present] = data[starts[present] + k]
    columns.setflags(write=False)
    return columns
