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
    class_bytes : ndarray of int64
        ``class_bytes[c]``: the first byte of class ``c``.
    """

    def __init__(self, classes: npt.NDArray[np.int64], index: TokenIndex,
                 groups: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None):
        self.classes = classes
        self.same_class = [np.flatnonzero(classes == c) for c in classes.tolist()]
        self.class_bytes = np.unique(classes, return_index=True)[1]
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
        wanted = np.unique(self.classes[first_bytes]) * (self.num_classes + 1)
        return self.groups_starting_with_pairs(wanted, wanted + self.num_classes + 1)

    def groups_starting_with_pairs(self, lows: npt.NDArray[np.int64],
                                   highs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The groups whose *pair key* lies in one of the ranges ``[lows[i], highs[i])``.

        A group's pair key is ``c0 * (C + 1) + c1`` for the class ``c0`` of its first byte and
        ``c1`` of its second (``C``, the number of classes, for one-byte tokens), so the groups
        of one first class are one range and those of one first and second class another.
        """
        layout = self._grouped_layout()
        return _gather(layout.by_pair, layout.pair_starts[lows], layout.pair_starts[highs])

    def groups_with_first_class(self, first_class: int) -> int:
        """How many groups' tokens start with a byte of class ``first_class``."""
        starts, span = self._grouped_layout().pair_starts, self.num_classes + 1
        return int(starts[(first_class + 1) * span] - starts[first_class * span])

    @property
    def num_classes(self) -> int:
        return int(self.classes.max()) + 1

    def member_ranks(self, groups: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Every rank of the distinct ``groups`` (in no particular order), in time proportional
        to their number of members."""
        layout = self._grouped_layout()
        return _gather(layout.members, layout.member_starts[groups],
                       layout.member_starts[groups + 1])

    def class_sets_of(self, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64] | None:
        """Per rank of ``ranks``, the byte classes its token holds (bit ``c`` for class ``c``);
        ``None`` when the grammar has more than 64 byte classes. Once the groups exist, read
        from a table per group (computed on first use from one token each)."""
        if int(self.classes.max()) >= 64:
            return None
        if self._groups is None:
            return _class_sets(self.classes, self._index, ranks)
        if self._class_sets is None:
            self._class_sets = _class_sets(self.classes, self._index, self._groups[1])
        return self._class_sets[self._groups[0][ranks]]

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
    """The groups sorted by the classes of their first two bytes, and the ranks sorted by
    group."""

    def __init__(self, classes: npt.NDArray[np.int64], index: TokenIndex,
                 group_of: npt.NDArray[np.int64], representative: npt.NDArray[np.int64]):
        count = int(classes.max()) + 1
        second = np.where(index.lengths[representative] > 1,
                          classes[index.columns[1][representative]] if len(index.columns) > 1
                          else count, count)
        pair = classes[index.columns[0][representative]] * (count + 1) + second
        self.by_pair = np.argsort(pair, kind="stable")
        self.pair_starts = np.searchsorted(pair[self.by_pair],
                                           np.arange(count * (count + 1) + 1))
        self.members = _sorted_by(group_of)
        self.member_starts = np.zeros(len(representative) + 1, dtype=np.int64)
        np.cumsum(np.bincount(group_of, minlength=len(representative)),
                  out=self.member_starts[1:])

    @property
    def nbytes(self) -> int:
        return int(self.by_pair.nbytes + self.pair_starts.nbytes + self.members.nbytes
                   + self.member_starts.nbytes)


def _sorted_by(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The stable argsort of non-negative ``keys`` below ``2**32``: two radix passes of 16
    bits (4x faster than a stable argsort of int64 keys for 248k tokens)."""
    order = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    if len(keys) and int(keys.max()) > 0xFFFF:
        order = order[np.argsort((keys[order] >> 16).astype(np.uint16), kind="stable")]
    return order


def _gather(values: npt.NDArray[np.int64], lows: npt.NDArray[np.int64],
            highs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``values[lows[i]:highs[i]]`` for every ``i``, concatenated (without a Python loop)."""
    counts = highs - lows
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    if not total:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(lows - (ends - counts), counts)
    return values[np.arange(total, dtype=np.int64) + shift]


def _class_sets(classes: npt.NDArray[np.int64], index: TokenIndex,
                ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
    bits = np.left_shift(np.uint64(1), classes.astype(np.uint64))
    lengths = index.lengths[ranks]
    by_length = np.argsort(-lengths, kind="stable")
    longer = np.searchsorted(-lengths[by_length], -np.arange(index.columns.shape[0]),
                             side="left")  # longer[k]: how many tokens have more than k bytes
    sets = np.zeros(len(ranks), dtype=np.uint64)
    for k, column in enumerate(index.columns):
        alive = by_length[: longer[k]]
        if not len(alive):
            break
        sets[alive] |= bits[column[ranks[alive]]]
    return sets


def _group_tokens(classes: npt.NDArray[np.int64],
                  index: TokenIndex) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The group of each rank and one rank per group, for the byte ``classes``.

    Tokens start grouped by length; each pass refines the groups of the tokens still long
    enough by a few more columns of byte classes packed into one int64 key. Tokens are taken
    longest first, so those still long enough are a prefix of that order.
    """
    bits = max(1, int(classes.max()).bit_length())
    per_pass = max(1, (62 - index.num_tokens.bit_length()) // bits)
    order, longer = _longest_first(index)
    table = classes.astype(np.uint8)  # at most 256 classes
    group = index.lengths.astype(np.int64)  # ids of finished tokens; each pass numbers afresh
    next_id = int(group.max(initial=0)) + 1
    dense = group  # the current groups of the tokens still long enough, numbered from 0
    for k in range(0, index.columns.shape[0], per_pass):
        alive = int(longer[k])
        if not alive:
            break
        everyone = not k  # the first pass (every token has a byte), in rank order
        ranks = order[:alive]
        keys = dense[:alive].copy()
        for column in index.columns[k: k + per_pass]:
            # past the end: padding, the same for tokens of one length
            np.left_shift(keys, bits, out=keys)
            np.bitwise_or(keys, table[column if everyone else column[ranks]], out=keys)
        dense = _dense_ids(keys)
        if everyone:  # by length from now on: the tokens still long enough come first
            group = dense + next_id
            group, dense = group[order], dense[order]
        else:
            group[:alive] = dense + next_id
        next_id += alive
    used = np.zeros(next_id, dtype=np.bool_)
    used[group] = True
    group_of = np.empty(index.num_tokens, dtype=np.int64)
    group_of[order] = (np.cumsum(used) - 1)[group]
    representative = np.empty(int(used.sum()), dtype=np.int64)
    representative[group_of] = np.arange(index.num_tokens, dtype=np.int64)
    return group_of, representative


def _longest_first(index: TokenIndex) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The ranks of ``index`` longest first, and per column ``k`` how many tokens are longer
    than ``k`` bytes (cached per index)."""
    found = _LONGEST_FIRST.get(index)
    if found is None:
        lengths = index.lengths
        order = np.argsort(-lengths.astype(np.int16), kind="stable")
        longer = np.searchsorted(-lengths[order], -np.arange(index.columns.shape[0] + 1),
                                 side="left")
        found = _LONGEST_FIRST[index] = (order, longer)
    return found


def _dense_ids(keys: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Equal keys get equal ids, numbered from 0 (in no particular order).

    Keys are placed in an open table of at least twice their number by a multiplicative hash;
    each key takes as its owner the key written last into its slot if the two are *equal*
    (compared whole, so a shared slot never merges different keys), and the others try again
    with another multiplier. Every round settles at least the last writer of each slot. About
    three times faster than sorting 248k keys (the sort was two thirds of the grouping).
    """
    count = len(keys)
    if not count:
        return keys
    bits = max(8, (2 * count - 1).bit_length())
    table = np.empty(1 << bits, dtype=np.int64)
    owner = np.empty(count, dtype=np.int64)
    pending = np.arange(count, dtype=np.int64)
    scrambled = keys.view(np.uint64)
    multiplier = _GOLDEN
    while len(pending):
        slots = ((scrambled[pending] * np.uint64(multiplier)) >> np.uint64(64 - bits)
                 ).astype(np.int64)
        table[slots] = pending
        owners = table[slots]
        equal = keys[owners] == keys[pending]
        owner[pending[equal]] = owners[equal]
        pending = pending[~equal]
        multiplier = (multiplier * _GOLDEN + 2) & 0xFFFF_FFFF_FFFF_FFFF  # odd again
    owned = np.zeros(count, dtype=np.bool_)
    owned[owner] = True
    return (np.cumsum(owned) - 1)[owner]


_GOLDEN = 0x9E3779B97F4A7C15
"""An odd 64-bit multiplier (2**64 over the golden ratio) for :func:`_dense_ids`."""


_PARTITIONS: weakref.WeakKeyDictionary[TokenIndex, dict[bytes, TokenPartition]] = (
    weakref.WeakKeyDictionary())

_LONGEST_FIRST: weakref.WeakKeyDictionary[
    TokenIndex, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = weakref.WeakKeyDictionary()
