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

DIRECT_RANKS = 16_384
"""Walks over at most this many tokens run them all while the groups are not computed yet."""


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


def clear_partitions() -> None:
    """Forget every cached partition."""
    _PARTITIONS.clear()


class TokenPartition:
    """The index's tokens grouped by the byte classes of one grammar.

    The groups are computed the first time a walk over more than :data:`DIRECT_RANKS` tokens
    needs them (tens of milliseconds for 248k tokens); smaller walks before that run every
    token, so a first mask over few tokens does not wait for them.

    Parameters
    ----------
    classes
        The class of each byte (see :func:`byte_classes`).
    index
        The tokens.
    groups
        ``(group_of, representative)`` computed earlier for the same classes and index.

    Attributes
    ----------
    classes : ndarray of int64
        The class of each byte.
    same_class : list of ndarray of int64
        ``same_class[b]``: the bytes of byte ``b``'s class.
    """

    def __init__(self, classes: npt.NDArray[np.int64], index: TokenIndex,
                 groups: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None):
        self.classes = classes
        self.same_class = [np.flatnonzero(classes == c) for c in classes.tolist()]
        self._index = index
        self._groups = groups
        self._marks = np.zeros(0 if groups is None else len(groups[1]), dtype=np.bool_)
        self._layout: _GroupLayout | None = None
        self._class_sets: npt.NDArray[np.uint64] | None = None

    @property
    def is_grouped(self) -> bool:
        """Whether the groups have been computed."""
        return self._groups is not None

    def adopt(self, groups: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]) -> None:
        """Use ``(group_of, representative)`` computed earlier for the same classes and index
        (a cache file), unless the groups are computed already."""
        if self._groups is None:
            self._groups = groups
            self._marks = np.zeros(len(groups[1]), dtype=np.bool_)

    @property
    def group_of(self) -> npt.NDArray[np.int64]:
        """The group of each rank."""
        return self._grouped()[0]

    @property
    def representative(self) -> npt.NDArray[np.int64]:
        """One rank of each group."""
        return self._grouped()[1]

    def _grouped(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        if self._groups is None:
            self._groups = _group_tokens(self.classes, self._index)
            self._marks = np.zeros(len(self._groups[1]), dtype=np.bool_)
        return self._groups

    @property
    def num_groups(self) -> int:
        return len(self.representative)

    @property
    def nbytes(self) -> int:
        if self._groups is None:
            return 0
        layout = 0 if self._layout is None else self._layout.nbytes
        return int(self._groups[0].nbytes + self._groups[1].nbytes) + layout

    def groups_starting_with(self, first_bytes: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        """The groups whose tokens start with a byte set in ``first_bytes`` (a union of whole
        byte classes, as every byte row is), without looking at their tokens."""
        layout = self._grouped_layout()
        wanted = np.unique(self.classes[first_bytes]).tolist()
        starts = layout.class_starts
        return np.concatenate([layout.by_first_class[starts[c]: starts[c + 1]] for c in wanted]
                              or [np.zeros(0, dtype=np.int64)])

    def member_ranks(self, groups: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Every rank of the distinct ``groups`` (in no particular order), in time proportional
        to their number of members."""
        layout = self._grouped_layout()
        if not len(groups):
            return np.zeros(0, dtype=np.int64)
        first = layout.member_starts[groups]
        counts = layout.member_starts[groups + 1] - first
        ends = np.cumsum(counts)
        shift = np.repeat(first - (ends - counts), counts)
        return layout.members[np.arange(int(ends[-1]), dtype=np.int64) + shift]

    @property
    def class_sets(self) -> npt.NDArray[np.uint64] | None:
        """Per rank, the byte classes its token holds (bit ``c`` for class ``c``); ``None``
        when the grammar has more than 64 byte classes. Computed on first use."""
        if self._class_sets is None and int(self.classes.max()) < 64:
            self._class_sets = _class_sets(self.classes, self._index)
        return self._class_sets

    def group_sizes(self, groups: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """How many tokens each of ``groups`` holds."""
        starts = self._grouped_layout().member_starts
        return starts[groups + 1] - starts[groups]

    def _grouped_layout(self) -> _GroupLayout:
        if self._layout is None:
            group_of, representative = self._grouped()
            self._layout = _GroupLayout(self.classes, self._index, group_of, representative)
        return self._layout

    def representatives(self, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """One rank per group present in ``ranks`` (``ranks`` itself while few tokens are
        walked before the groups exist)."""
        if self._groups is None and len(ranks) <= DIRECT_RANKS:
            return ranks
        group_of, representative = self._grouped()
        marks = self._marks
        marks[group_of[ranks]] = True
        groups = np.flatnonzero(marks)
        marks[groups] = False
        return representative[groups]

    def members(self, representatives: npt.NDArray[np.int64],
                ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The ranks of ``ranks`` in the groups of ``representatives`` (as returned for
        ``ranks`` by :meth:`representatives`)."""
        if not len(representatives) or self._groups is None:
            return representatives
        group_of = self._groups[0]
        marks = self._marks
        marks[group_of[representatives]] = True
        chosen = ranks[marks[group_of[ranks]]]
        marks[group_of[representatives]] = False
        return chosen


class _GroupLayout:
    """The groups sorted by the class of their first byte, and the ranks sorted by group."""

    def __init__(self, classes: npt.NDArray[np.int64], index: TokenIndex,
                 group_of: npt.NDArray[np.int64], representative: npt.NDArray[np.int64]):
        first_class = classes[index.columns[0][representative]]
        self.by_first_class = np.argsort(first_class, kind="stable")
        self.class_starts = np.searchsorted(first_class[self.by_first_class],
                                            np.arange(int(classes.max()) + 2))
        self.members = np.argsort(group_of, kind="stable")
        self.member_starts = np.zeros(len(representative) + 1, dtype=np.int64)
        np.cumsum(np.bincount(group_of, minlength=len(representative)),
                  out=self.member_starts[1:])

    @property
    def nbytes(self) -> int:
        return int(self.by_first_class.nbytes + self.class_starts.nbytes + self.members.nbytes
                   + self.member_starts.nbytes)


def _class_sets(classes: npt.NDArray[np.int64], index: TokenIndex) -> npt.NDArray[np.uint64]:
    bits = np.left_shift(np.uint64(1), classes.astype(np.uint64))
    by_length = np.argsort(-index.lengths, kind="stable")
    longer = np.searchsorted(-index.lengths[by_length], -np.arange(index.columns.shape[0]),
                             side="left")  # longer[k]: how many tokens have more than k bytes
    sets = np.zeros(index.num_tokens, dtype=np.uint64)
    for k, column in enumerate(index.columns):
        alive = by_length[: longer[k]]
        sets[alive] |= bits[column[alive]]
    return sets


def _group_tokens(classes: npt.NDArray[np.int64],
                  index: TokenIndex) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The group of each rank and one rank per group, for the byte ``classes``.

    Tokens start grouped by length; each pass refines the groups of the tokens still long
    enough by a few more columns of byte classes packed into one int64 key.
    """
    bits = max(1, int(classes.max()).bit_length())
    per_pass = max(1, (62 - index.num_tokens.bit_length()) // bits)
    lengths = index.lengths.astype(np.int64)
    group = lengths.copy()  # ids of finished tokens; each pass numbers its groups afresh
    next_id = int(lengths.max(initial=0)) + 1
    alive = np.arange(index.num_tokens, dtype=np.int64)
    dense = lengths.copy()  # the current groups of ``alive``, numbered from 0
    for k in range(0, index.columns.shape[0], per_pass):
        longer = lengths[alive] > k
        alive, keys = alive[longer], dense[longer]
        everyone = len(alive) == index.num_tokens
        if not len(alive):
            break
        for column in index.columns[k: k + per_pass]:
            # past the end: padding, the same for tokens of one length
            keys = (keys << bits) | classes[column if everyone else column[alive]]
        dense = _dense_ids(keys)
        group[alive] = dense + next_id
        next_id += len(alive)
    used = np.zeros(next_id, dtype=np.bool_)
    used[group] = True
    group_of = (np.cumsum(used) - 1)[group]
    representative = np.empty(int(used.sum()), dtype=np.int64)
    representative[group_of] = np.arange(index.num_tokens, dtype=np.int64)
    return group_of, representative


def _dense_ids(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Equal keys get equal ids, numbered from 0."""
    if not len(keys):
        return keys
    order = np.argsort(keys, kind="stable")  # keys of byte-sorted tokens: runs to merge
    ordered = keys[order]
    starts = np.empty(len(keys), dtype=np.bool_)
    starts[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    ids = np.empty(len(keys), dtype=np.int64)
    ids[order] = np.cumsum(starts) - 1
    return ids


_PARTITIONS: weakref.WeakKeyDictionary[TokenIndex, dict[bytes, TokenPartition]] = (
    weakref.WeakKeyDictionary())
