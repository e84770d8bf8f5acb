"""`TokenPartition`: tokens that one grammar cannot tell apart, walked once per group.

Two bytes lying in exactly the same byte-edge ranges of every rule automaton lead every parser
state to the same place; they form one *byte class* (letters of an identifier, the characters
of a string body). Tokens whose bytes have the same classes, position by position, are parsed
identically from any state, so a walk needs to run only one representative per group and can
give its verdict to all members. Identifier-like tokens collapse by the ten thousand.
"""

from __future__ import annotations

import weakref

import numpy as np
import numpy.typing as npt

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.decode.token_index import TokenIndex

_CACHE_SIZE = 8
"""Partitions kept per index (grammars with the same byte classes share one)."""


def byte_classes(compiled: CompiledGrammar) -> npt.NDArray[np.int64]:
    """The class of each byte: equal for bytes in the same edge ranges everywhere."""
    ranges = compiled.byte_ranges()
    classes = np.zeros(256, dtype=np.int64)
    inside = np.zeros(256, dtype=np.int64)
    for lo, hi in sorted(ranges):
        inside[:] = 0
        inside[lo: hi + 1] = 1
        _, classes = np.unique(classes * 2 + inside, return_inverse=True)
    return classes


def token_partition(compiled: CompiledGrammar, index: TokenIndex) -> TokenPartition:
    """The (cached) partition of ``index`` under the byte classes of ``compiled``."""
    classes = byte_classes(compiled)
    key = classes.tobytes()
    cache = _PARTITIONS.setdefault(index, {})
    found = cache.get(key)
    if found is None:
        if len(cache) >= _CACHE_SIZE:
            del cache[next(iter(cache))]
        found = cache[key] = TokenPartition(classes, index)
    return found


class TokenPartition:
    """The index's tokens grouped by the byte classes of one grammar.

    Attributes
    ----------
    group_of : ndarray of int64
        The group of each rank.
    representative : ndarray of int64
        One rank of each group.
    same_class : list of ndarray of int64
        ``same_class[b]``: the bytes of byte ``b``'s class.
    """

    def __init__(self, classes: npt.NDArray[np.int64], index: TokenIndex):
        self.same_class = [np.flatnonzero(classes == c) for c in classes.tolist()]
        bits = max(1, int(classes.max()).bit_length())
        per_pass = max(1, (62 - index.num_tokens.bit_length()) // bits)
        lengths = index.lengths.astype(np.int64)
        group = np.zeros(index.num_tokens, dtype=np.int64)
        alive = np.arange(index.num_tokens, dtype=np.int64)
        width = index.columns.shape[0]
        for k in range(0, width, per_pass):
            alive = alive[lengths[alive] > k]
            if not len(alive):
                break
            keys = group[alive]
            for column in index.columns[k: k + per_pass]:
                keys = (keys << bits) | classes[column[alive]]  # past the end: padding
            _, group[alive] = np.unique(keys, return_inverse=True)
        # the padding is the same for tokens of one length; the length tells the rest apart
        _, first, self.group_of = np.unique(group * (width + 1) + lengths, return_index=True,
                                            return_inverse=True)
        self.representative = first.astype(np.int64)
        self._marks = np.zeros(len(first), dtype=np.bool_)

    @property
    def num_groups(self) -> int:
        return len(self.representative)

    @property
    def nbytes(self) -> int:
        return int(self.group_of.nbytes + self.representative.nbytes)

    def representatives(self, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """One rank per group present in ``ranks``."""
        marks = self._marks
        marks[self.group_of[ranks]] = True
        groups = np.flatnonzero(marks)
        marks[groups] = False
        return self.representative[groups]

    def members(self, representatives: npt.NDArray[np.int64],
                ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The ranks of ``ranks`` in the groups of ``representatives``."""
        if not len(representatives):
            return representatives
        marks = self._marks
        marks[self.group_of[representatives]] = True
        chosen = ranks[marks[self.group_of[ranks]]]
        marks[self.group_of[representatives]] = False
        return chosen


_PARTITIONS: weakref.WeakKeyDictionary[TokenIndex, dict[bytes, TokenPartition]] = (
    weakref.WeakKeyDictionary())
