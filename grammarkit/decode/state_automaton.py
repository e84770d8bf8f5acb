"""`StateAutomaton`: Earley states as a lazily built DFA, and token walks over it in numpy.

Every Earley state the decoder meets is numbered by its canonical key, so states that allow the
same continuations share one number. The key keeps only what a future byte or token can reach:

- groups that can do nothing more (no edges left, not accepting: their completions are done)
  are dropped, except where they complete at the bottom of a local state (see below);
- a frame is described by its own configuration and those parent entries whose configuration
  calls a rule that can still complete at the frame, recursively; positions and object
  identities are dropped.

So a free string, which leaves one finished character frame behind per character, keeps one key.
Configurations are taken in their canonical form for the longest token (counts of counted
repetitions far from both bounds look alike, :meth:`EarleyCore.canonical`): a key then only
promises the same continuations up to that many bytes, which is all a mask or a token walk
looks at, so the middle of ``[a-z]{0,100000}`` is one state and one cached mask.

Byte steps between numbers are computed with the recognizer the first time they are needed and
kept in a dense ``[states, 256]`` table; one step fills every byte that leads each group of the
state to the same configuration (a parser step depends on nothing else), so a string body's
characters cost one step however many byte classes the grammar's other rules split them into.
A token walk then runs every candidate token through the table column by column, like a byte
DFA, and only unseen ``(state, byte)`` pairs cost a parser step. Because the table is shared by
all masks of a grammar, tokens sharing a prefix share its steps within one mask (a token-trie
walk) and across masks. Only one token per group of a
:class:`~grammarkit.decode.token_partition.TokenPartition` is walked.

Tokens that *settle* are accepted without being walked: in the first columns of a large walk,
a token in a state that loops (a string body), or whose next byte leads its state to the loop
most of its bytes lead to (the first character off a key's declared prefix), is accepted there
if every later byte loops, or if its later bytes are whole UTF-8 characters, each one-byte one
looping, and every multi-byte character leads the loop back to itself. Byte classes tell this
per token group (:class:`SuffixClasses`), so a JSON key or string state walks only the tokens
that start with a declared key's next letter or hold a quote, a backslash or a broken
character.

*Local* states support :mod:`grammarkit.decode.token_classes`: one group parsed on its own (with
the rules it calls), over a *bottom* frame that predicted the same configuration as the group's
real frame but has no parents. Rules started there complete into the frame's own callers (an
identifier completing into ``call ::= name "("``, at the same origin) exactly as in the real
state. Where a rule started at the bottom completes, the real parse stack below could take over
too, but only with a byte that can follow that rule (the bottom frame's ``follow``: FOLLOW sets
over bytes; the parents' own continuations would be more precise, but make many more contexts
to classify): such
``(state, byte)`` pairs are *rescuable*, and a token rejected after one is only uncertain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.decode.earley_core import EarleyCore, Frame, ParseState
from grammarkit.decode.token_index import TokenIndex
from grammarkit.decode.token_partition import TokenPartition

Follow = tuple[tuple[int, int], ...]
"""Per rule started at a frame, the bytes that can come once it completes (a 256-bit int)."""


class BottomFrame(Frame):
    """The bottom frame of a local state: it predicted ``own``; ``follow`` can come after it."""

    __slots__ = ("follow",)

    def __init__(self, own: int, follow: Follow):
        super().__init__(-1, (), own)
        self.follow = dict(follow)

UNKNOWN = -2
"""Table entry of a step not computed yet (``-1``: the byte is rejected)."""

MAX_STATES = 100_000
"""States kept before the automaton starts afresh (bounds the table to about 100 MB)."""

SCALAR_TAIL = 8
"""Walks finish token by token once this few tokens remain (saves numpy calls per column)."""

LOOP_RANKS = 4096
"""Walks over more tokens than this accept, without walking them, the tokens whose bytes from
column ``k < LOOP_COLUMNS`` on all lead their state at ``k`` back to itself (string bodies, runs
of spaces: after a key's first bytes, most tokens)."""

LOOP_COLUMNS = 3
"""Columns before which walks look for tokens that only loop (see :data:`LOOP_RANKS`)."""

LOOP_MIN_RANKS = 64
"""States holding fewer tokens at a column are not checked for loops..."""

LOOP_SHARE = 16
"""... nor those holding less than this fraction of them."""

PRUNE_GROUPS = 256
"""Groups of one first byte class beyond which :meth:`StateAutomaton.candidate_groups` keeps
only those whose second byte can follow."""

DENSE_PAIRS = 1 << 22
"""Unknown ``(state, byte)`` pairs are deduplicated in a dense scratch array up to this size."""

StateKey = tuple[tuple[int, int], ...]


def distinct_pairs(pairs: npt.NDArray[np.int64], size: int, dense_limit: int) -> list[int]:
    """The distinct values of ``pairs`` (all below ``size``), ascending: by marking a dense
    array when ``size`` is at most ``dense_limit``, else by sorting."""
    if size <= dense_limit:
        seen = np.zeros(size, dtype=np.bool_)
        seen[pairs] = True
        return np.flatnonzero(seen).tolist()
    return np.unique(pairs).tolist()


@dataclass(frozen=True)
class Walk:
    """The outcome of running tokens (by rank) from one state.

    Attributes
    ----------
    accepted : ndarray of int64
        Ranks whose every byte was accepted (in no particular order).
    open_failed : ndarray of int64
        Ranks rejected after passing a rescuable ``(state, byte)`` pair (always empty for real
        states).
    arrived : ndarray of int64
        The numbers of the states the accepted ranks end in (with repeats).
    """

    accepted: npt.NDArray[np.int64]
    open_failed: npt.NDArray[np.int64]
    arrived: npt.NDArray[np.int64]


class StateAutomaton:
    """Numbers Earley states canonically and steps them by bytes, memoized."""

    def __init__(self, core: EarleyCore, index: TokenIndex, partition: TokenPartition):
        self.core = core
        self._index = index
        self.partition = partition
        self.horizon = int(index.columns.shape[0]) + 1
        """Bytes a key must keep exact: one more than the longest token."""
        self._suffixes = SuffixClasses(partition, index)
        self._signatures: dict[tuple[int, tuple[tuple[int, int], ...], Follow | None], int] = {}
        self._scannable: dict[int, npt.NDArray[np.bool_]] = {}
        self._rows: dict[int, npt.NDArray[np.int64]] = {}
        self.epoch = -1
        """How many times the automaton started afresh (state numbers of another epoch mean
        other states)."""
        self._reset()

    def _reset(self) -> None:
        self.epoch += 1
        self._numbers: dict[StateKey, int] = {}
        self._keys: list[StateKey] = []
        self._states: list[ParseState] = []
        self._first: list[npt.NDArray[np.bool_]] = []
        self._table = np.full((64, 256), UNKNOWN, dtype=np.int32)
        self._rescuable = np.zeros((64, 256), dtype=np.bool_)
        self._frame_keys: dict[Frame, int] = {}
        self._loops: dict[int, int] = {}
        self._closing: dict[int, bool] = {}
        self._settlings: dict[int, tuple[npt.NDArray[np.bool_], int, int] | None] = {}

    @property
    def nbytes(self) -> int:
        return int(self._table.nbytes + self._rescuable.nbytes)

    @property
    def num_states(self) -> int:
        return len(self._states)

    def state(self, number: int) -> ParseState:
        """The (first) state numbered ``number``."""
        return self._states[number]

    # -- numbering -------------------------------------------------------------------------------
    def number(self, state: ParseState) -> int:
        """The number of ``state`` (its canonical key's)."""
        key = self.state_key(state, self._frame_keys)
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self._states)
            self._states.append(state)
            self._keys.append(key)
            first = np.zeros(256, dtype=np.bool_)
            for _, config in state.groups:
                row = self._scannable.get(config)
                if row is None:
                    row = self._scannable[config] = np.asarray(self.core.byte_row(config)) >= 0
                first |= row
            first.setflags(write=False)
            self._first.append(first)
            if found >= len(self._table):
                grown = np.full((2 * len(self._table), 256), UNKNOWN, dtype=np.int32)
                grown[: len(self._table)] = self._table
                self._table = grown
                rescuable = np.zeros(grown.shape, dtype=np.bool_)
                rescuable[: len(self._rescuable)] = self._rescuable
                self._rescuable = rescuable
            self._table[found, ~first] = -1  # no parser step for these
            scannable = 0
            for frame, config in state.groups:
                if isinstance(frame, BottomFrame):
                    for rule in self.core.completes(config):
                        scannable |= frame.follow.get(rule, 0)
            if scannable:
                bits = np.frombuffer(scannable.to_bytes(32, "little"), dtype=np.uint8)
                self._rescuable[found] = np.unpackbits(bits, bitorder="little")
        return found

    def key_of(self, number: int) -> StateKey:
        """The canonical key of state ``number``."""
        return self._keys[number]

    def first_bytes(self, number: int) -> npt.NDArray[np.bool_]:
        """Which bytes some group of state ``number`` can scan (a superset of its steps;
        read-only)."""
        return self._first[number]

    def candidate_groups(self, number: int) -> npt.NDArray[np.int64]:
        """The partition's groups a walk from state ``number`` must run: those whose first
        byte the state can scan and, where a first byte class holds more than
        :data:`PRUNE_GROUPS` groups, whose second byte can be scanned or rescued after it
        (or which end after one byte).

        A walk rejects the others at their first or second byte without passing a rescuable
        pair, so walking only these gives the same :class:`Walk` as walking every group
        (the parser step of each first class is taken now; the walk would take it anyway).
        """
        partition = self.partition
        classes = partition.classes
        span = partition.num_classes + 1
        lows: list[int] = []
        highs: list[int] = []
        for first in np.unique(classes[self._first[number]]).tolist():
            low = first * span
            if partition.groups_with_first_class(first) <= PRUNE_GROUPS:
                lows.append(low)
                highs.append(low + span)
                continue
            byte = int(partition.class_bytes[first])
            if self._table[number, byte] == UNKNOWN:
                self._step(number, byte)
            after = int(self._table[number, byte])
            if after < 0:
                continue
            second = np.zeros(span, dtype=np.bool_)
            second[classes[self._first[after] | self._rescuable[after]]] = True
            second[-1] = True  # one-byte tokens
            keys = (low + np.flatnonzero(second)).tolist()
            lows.extend(keys)
            highs.extend(key + 1 for key in keys)
        return partition.groups_starting_with_pairs(np.array(lows, dtype=np.int64),
                                                    np.array(highs, dtype=np.int64))

    def canonical(self, config: int) -> int:
        """``config`` in its canonical form for this automaton's horizon."""
        return self.core.canonical(config, self.horizon)

    def local(self, config: int, own: int, follow: Follow) -> int:
        """The number of ``config`` parsed over a ``BottomFrame(own, follow)``."""
        bottom = BottomFrame(self.canonical(own), follow)
        return self.number(self.core.close({bottom: self.canonical(config)}, 0))

    def state_key(self, state: ParseState, frame_keys: dict[Frame, int]) -> StateKey:
        """A key equal for states that allow the same continuations (see the module docstring).

        ``frame_keys`` memoizes frame numbers (frames never change once built).
        """
        inactive, completes = self.core.is_inactive, self.core.completes
        canonical = self.canonical
        return tuple(sorted((self._frame_key(frame, frame_keys), canonical(config))
                            for frame, config in state.groups
                            if not inactive(config)
                            or isinstance(frame, BottomFrame) and completes(config)))

    def _frame_key(self, frame: Frame, memo: dict[Frame, int]) -> int:
        found = memo.get(frame)
        if found is not None:
            return found
        core = self.core
        pending = [frame]
        while pending:
            top = pending[-1]
            if top in memo:
                pending.pop()
                continue
            completable = core.rules(top.own)
            parents = [(p, c) for p, c in top.parents if not completable.isdisjoint(core.calls(c))]
            missing = [p for p, _ in parents if p not in memo]
            if missing:
                pending.extend(missing)
                continue
            follow = tuple(sorted(top.follow.items())) if isinstance(top, BottomFrame) else None
            canonical = self.canonical
            signature = (canonical(top.own),
                         tuple(sorted((memo[p], canonical(c)) for p, c in parents)), follow)
            memo[top] = self._signatures.setdefault(signature, len(self._signatures))
            pending.pop()
        return memo[frame]

    def _step(self, number: int, byte: int) -> None:
        """Fill the table entries of ``number`` for every byte that leads each group of state
        ``number`` to the same configuration as ``byte`` does: a parser step depends only on
        those configurations, so one step serves them all (a string body's characters are one
        step, however many byte classes the grammar's other rules split them into)."""
        after = self.core.advance(self._states[number], bytes((byte,)))
        target = -1 if after is None else self.number(after)
        alike: npt.NDArray[np.bool_] | None = None
        for _, config in self._states[number].groups:
            row = self._row(config)
            same = row == row[byte]
            alike = same if alike is None else alike & same
        self._table[number, alike] = target

    def _row(self, config: int) -> npt.NDArray[np.int64]:
        """The configuration each byte leads ``config`` to (``-1``: rejected), as an array."""
        found = self._rows.get(config)
        if found is None:
            found = self._rows[config] = np.asarray(self.core.byte_row(config), dtype=np.int64)
        return found

    # -- walks -----------------------------------------------------------------------------------
    def walk(self, start: int, ranks: npt.NDArray[np.int64]) -> Walk:
        """Run the tokens ``ranks`` from state number ``start``."""
        partition = self.partition
        walk = self._walk_each(start, partition.representatives(ranks))
        return Walk(partition.members(walk.accepted, ranks),
                    partition.members(walk.open_failed, ranks), walk.arrived)

    def walk_representatives(self, start: int, representatives: npt.NDArray[np.int64]) -> Walk:
        """Run only the given representatives of the partition's groups (see :meth:`walk`)."""
        return self._walk_each(start, representatives)

    def tokens_starting_with(self, first_bytes: npt.NDArray[np.bool_]) -> int:
        """How many tokens start with a byte set in ``first_bytes``."""
        starts = self._index.first_byte_starts
        return int((starts[1:] - starts[:-1])[first_bytes].sum())

    def _walk_each(self, start: int, ranks: npt.NDArray[np.int64]) -> Walk:
        if len(self._states) > MAX_STATES:
            state = self._states[start]
            self._reset()
            start = self.number(state)
        out: _Parts = ([], [], [])
        self._walk_columns(0, ranks, np.full(len(ranks), start, dtype=np.int64), out)
        return Walk(*(_joined(part) for part in out))

    def _walk_columns(self, first: int, ranks: npt.NDArray[np.int64],
                      current: npt.NDArray[np.int64], out: _Parts) -> None:
        """Walk ``ranks`` from column ``first`` on, each from its state in ``current``."""
        columns = self._index.columns
        accepted, failed, arrived = out
        lengths = self._index.lengths[ranks].astype(
            np.int16 if columns.shape[0] < 1 << 15 else np.int32)
        by_length = np.argsort(lengths, kind="stable")  # a radix sort (16 bits): the tokens
        ranks, lengths = ranks[by_length], lengths[by_length]  # ending at a column come first
        current = current[by_length]
        passed = np.zeros(len(ranks), dtype=np.bool_)
        for k in range(first, columns.shape[0] + 1):
            if len(ranks) <= SCALAR_TAIL:
                self._finish(k, ranks, current, passed, out)
                break
            ending = int(np.searchsorted(lengths, k, side="right"))
            if ending:
                accepted.append(ranks[:ending])
                arrived.append(current[:ending])
                ranks, current, passed, lengths = ranks[ending:], current[ending:], \
                    passed[ending:], lengths[ending:]
            if not len(ranks):
                break
            if k < LOOP_COLUMNS and len(ranks) > LOOP_RANKS and self.partition.is_grouped:
                settled = self._settled(k, ranks, current)
                if settled is not None:
                    inside, ending_in = settled
                    accepted.append(ranks[inside])
                    arrived.append(ending_in[inside])
                    outside = ~inside
                    ranks, current, passed, lengths = ranks[outside], current[outside], \
                        passed[outside], lengths[outside]
                    if len(ranks) <= SCALAR_TAIL:
                        self._finish(k, ranks, current, passed, out)
                        break
            pairs = current * 256 + columns[k, ranks]
            if k:
                passed |= self._rescuable.reshape(-1)[pairs]
            following = self._table.reshape(-1)[pairs]
            unknown = following == UNKNOWN
            if unknown.any():
                self._fill(pairs[unknown])
                following = self._table.reshape(-1)[pairs]
            dead = following < 0
            if dead.any():
                failed.append(ranks[dead & passed])
                live = ~dead
                ranks, following, passed, lengths = ranks[live], following[live], passed[live], \
                    lengths[live]
            current = following.astype(np.int64)

    def _settled(self, k: int, ranks: npt.NDArray[np.int64], current: npt.NDArray[np.int64]
                 ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]] | None:
        """Which of ``ranks``, in states ``current`` before their byte ``k``, are accepted
        because their bytes from there on settle in a loop (:meth:`_settling`), and the
        states they end in; ``None`` if no state holding many of them settles."""
        counts = np.bincount(current)
        hubs = np.flatnonzero(counts >= max(LOOP_MIN_RANKS, len(ranks) // LOOP_SHARE))
        inside: npt.NDArray[np.bool_] | None = None
        ending = current
        for state in hubs.tolist():
            settling = self._settling(state)
            if settling is None or settling[2] != state and k + 1 >= LOOP_COLUMNS:
                continue
            leading, loop, target = settling
            at = np.flatnonzero(current == state)
            if target == state:
                at = at[self._loops_from(k, ranks[at], target, loop)]
            else:
                first = self.partition.classes[self._index.columns[k, ranks[at]]]
                at = at[leading[first]]
                at = at[self._loops_from(k + 1, ranks[at], target, loop)]
            if inside is None:
                inside = np.zeros(len(ranks), dtype=np.bool_)
                ending = current.copy()
            inside[at] = True
            ending[at] = target
        return None if inside is None else (inside, ending)

    def _loops_from(self, k: int, ranks: npt.NDArray[np.int64], number: int, loop: int
                    ) -> npt.NDArray[np.bool_]:
        """Whether each token's bytes from column ``k`` on lead state ``number`` back to
        itself: each byte has a class in ``loop``, the classes ``number`` loops on, or (if
        every multi-byte character leads ``number`` back to itself and no class of ``loop``
        mixes parts of UTF-8 sequences) they are whole characters, each one-byte one in
        ``loop``. Tokens of a group follow the same path through the automaton and, on these
        classes, split into the same characters, so the group's representative tells."""
        suffixes = self._suffixes
        inside = suffixes.within(k, ranks, loop)
        if not loop & suffixes.mixed and self._closes_characters(number) and not inside.all():
            inside |= (suffixes.within(k, ranks, loop | suffixes.multibyte)
                       & suffixes.whole_characters(k, ranks))
        return inside

    def _closes_characters(self, number: int) -> bool:
        """Whether every valid multi-byte UTF-8 character leads state ``number`` back to
        itself (a string body that takes any non-ASCII character), on bytes of classes that
        tell UTF-8 sequences apart (:attr:`SuffixClasses.multibyte`)."""
        found = self._closing.get(number)
        if found is None:
            found = True
            multibyte = self._suffixes.multibyte
            representatives = [int(self.partition.class_bytes[c])
                               for c in range(self.partition.num_classes) if multibyte >> c & 1]
            pending, seen = [(0, number)], {(0, number)}
            while pending and found:
                position, state = pending.pop()
                for byte in representatives:
                    following = int(_UTF8[position, byte])
                    if following < 0:
                        continue
                    if self._table[state, byte] == UNKNOWN:
                        self._step(state, byte)
                    after = int(self._table[state, byte])
                    if after < 0 or following == 0 and after != number:
                        found = False
                        break
                    if following and (following, after) not in seen:
                        seen.add((following, after))
                        pending.append((following, after))
            self._closing[number] = found
        return found

    def _settling(self, number: int) -> tuple[npt.NDArray[np.bool_], int, int] | None:
        """``(leading, loop, target)``: ``target`` is ``number`` if it loops, else the state
        most of its bytes lead to, if that loops; ``leading[c]`` tells whether class ``c``
        leads ``number`` to ``target`` and ``loop`` holds the classes ``target`` loops on (bit
        ``c`` for class ``c``). A token whose next byte leads there and every later byte loops
        is accepted and ends in ``target`` (``number`` itself in a string body; the state after
        the first character off a key's declared prefix)."""
        if number not in self._settlings:
            found = None
            classes = self.partition.classes
            loop = self._loop_classes(number)
            row = self._table[number]
            target = number
            if not loop:
                targets = row[row >= 0]
                if len(targets):
                    values, counts = np.unique(targets, return_counts=True)
                    target = int(values[np.argmax(counts)])
                    loop = self._loop_classes(target)
            if loop:
                leading = np.zeros(self.partition.num_classes, dtype=np.bool_)
                leading[classes[row == target]] = True
                found = (leading, loop, target)
            self._settlings[number] = found
        return self._settlings[number]

    def _loop_classes(self, number: int) -> int:
        """The byte classes leading state ``number`` back to itself (bit ``c`` for class
        ``c``)."""
        found = self._loops.get(number)
        if found is None:
            found = 0
            classes = self.partition.classes
            table = self._table
            for byte in np.flatnonzero(self.first_bytes(number)).tolist():
                if table[number, byte] == UNKNOWN:
                    self._step(number, byte)
                    table = self._table
                if table[number, byte] == number:
                    found |= 1 << int(classes[byte])
            self._loops[number] = found
        return found

    def _finish(self, k: int, ranks: npt.NDArray[np.int64], current: npt.NDArray[np.int64],
                passed: npt.NDArray[np.bool_],
                out: tuple[list[npt.NDArray[np.int64]], ...]) -> None:
        """Walk the last few tokens byte by byte from column ``k`` (long tokens, mostly)."""
        accepted: list[int] = []
        failed: list[int] = []
        arrived: list[int] = []
        tokens = self._index.tokens
        for rank, state, rescued in zip(ranks.tolist(), current.tolist(), passed.tolist(),
                                        strict=True):
            token = tokens[rank]
            for position in range(k, len(token)):
                byte = token[position]
                if position and not rescued:
                    rescued = bool(self._rescuable[state, byte])
                following = int(self._table[state, byte])
                if following == UNKNOWN:
                    self._step(state, byte)
                    following = int(self._table[state, byte])
                if following < 0:
                    if rescued:
                        failed.append(rank)
                    break
                state = following
            else:
                accepted.append(rank)
                arrived.append(state)
        for found, part in zip(out, (accepted, failed, arrived), strict=True):
            found.append(np.array(part, dtype=np.int64))

    def _fill(self, pairs: npt.NDArray[np.int64]) -> None:
        """Compute the table entries of ``pairs`` (``state * 256 + byte``, with repeats)."""
        table = self._table
        for pair in distinct_pairs(pairs, len(self._states) * 256, DENSE_PAIRS):
            if table[pair >> 8, pair & 255] == UNKNOWN:
                self._step(pair >> 8, pair & 255)
                table = self._table


class SuffixClasses:
    """Per token, the byte classes of its bytes from column ``k`` on, for ``k`` below
    :data:`LOOP_COLUMNS` (bit ``c % 64`` of word ``c // 64`` for class ``c``); kept per group
    of the partition once it is grouped (its tokens have the same classes), computed for the
    ranks asked before that."""

    def __init__(self, partition: TokenPartition, index: TokenIndex):
        self._partition = partition
        self._index = index
        self.words = (partition.num_classes + 63) // 64
        self._per_group: npt.NDArray[np.uint64] | None = None
        self._whole: npt.NDArray[np.bool_] | None = None
        classes = partition.classes
        uniform = [bool((_UTF8[:, classes == c] == _UTF8[:, [int(partition.class_bytes[c])]])
                        .all()) for c in range(partition.num_classes)]
        high = [bool((np.flatnonzero(classes == c) >= 0x80).any())
                for c in range(partition.num_classes)]
        self.multibyte = sum(1 << c for c in range(partition.num_classes)
                             if uniform[c] and int(partition.class_bytes[c]) >= 0x80)
        """The classes of bytes >= 0x80 whose bytes play one part in UTF-8 sequences (so a
        class sequence tells whether its bytes are whole characters)."""
        self.mixed = sum(1 << c for c in range(partition.num_classes)
                         if high[c] and not uniform[c])
        """The classes holding bytes >= 0x80 that play different parts."""

    def whole_characters(self, k: int, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Whether each token's bytes from column ``k`` on are whole UTF-8 characters, and so
        are those before (read from each group's representative: meaningful for tokens whose
        non-ASCII bytes are all of :attr:`multibyte` classes)."""
        partition = self._partition
        if partition.is_grouped:
            if self._whole is None:
                self._whole = self._whole_characters(partition.representative)
            return self._whole[k][partition.group_of[ranks]]
        return self._whole_characters(ranks)[k]

    def _whole_characters(self, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """``[LOOP_COLUMNS, len(ranks)]``: valid UTF-8, longer than ``k`` bytes, with a
        character boundary at ``k``."""
        columns, lengths = self._index.columns, self._index.lengths[ranks]
        by_length = np.argsort(-lengths, kind="stable")
        longer = np.searchsorted(-lengths[by_length], -np.arange(columns.shape[0]),
                                 side="left")  # longer[k]: how many tokens have more than k bytes
        table = np.where(_UTF8 < 0, len(_UTF8), _UTF8)
        table = np.vstack([table, np.full(256, len(_UTF8))])  # invalid: a sink
        state = np.zeros(len(ranks), dtype=np.int64)
        boundary = np.zeros((LOOP_COLUMNS, len(ranks)), dtype=np.bool_)
        boundary[0] = True
        for k in range(columns.shape[0]):
            alive = by_length[: longer[k]]
            if not len(alive):
                break
            state[alive] = table[state[alive], columns[k, ranks[alive]]]
            if k + 1 < LOOP_COLUMNS:
                boundary[k + 1] = state == 0
        return boundary & (state == 0) & (lengths > np.arange(LOOP_COLUMNS)[:, None])

    def within(self, k: int, ranks: npt.NDArray[np.int64], classes: int
               ) -> npt.NDArray[np.bool_]:
        """Whether each token's bytes from column ``k`` on all have one of ``classes`` (bit
        ``c`` for class ``c``)."""
        partition = self._partition
        if partition.is_grouped:
            if self._per_group is None:
                self._per_group = self._computed(partition.representative)
            sets, rows = self._per_group[k], partition.group_of[ranks]
        else:
            sets, rows = self._computed(ranks)[k], np.arange(len(ranks))
        outside = np.zeros(len(ranks), dtype=np.bool_)
        for w in range(self.words):
            other = ~np.uint64((classes >> (64 * w)) & ((1 << 64) - 1))
            if other:
                outside |= (sets[w][rows] & other) != 0
        return ~outside

    def _computed(self, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.uint64]:
        """``[LOOP_COLUMNS, words, len(ranks)]``."""
        classes = self._partition.classes
        columns = self._index.columns
        lengths = self._index.lengths[ranks]
        by_length = np.argsort(-lengths, kind="stable")
        longer = np.searchsorted(-lengths[by_length], -np.arange(columns.shape[0]),
                                 side="left")  # longer[k]: how many tokens have more than k bytes
        found = np.zeros((LOOP_COLUMNS, self.words, len(ranks)), dtype=np.uint64)
        for w in range(self.words):
            bits = np.where(classes // 64 == w,
                            np.left_shift(np.uint64(1), (classes % 64).astype(np.uint64)),
                            np.uint64(0))
            sets = np.zeros(len(ranks), dtype=np.uint64)
            for k in range(columns.shape[0] - 1, -1, -1):
                alive = by_length[: longer[k]]
                if len(alive):
                    sets[alive] |= bits[columns[k, ranks[alive]]]
                if k < LOOP_COLUMNS:
                    found[k, w] = sets
        return found


def _utf8_table() -> npt.NDArray[np.int64]:
    """``[position, byte]``: the UTF-8 decoder's next position (0: between characters; 1-7:
    inside one, by what may follow) or ``-1`` (invalid)."""
    table = np.full((8, 256), -1, dtype=np.int64)
    table[0, :0x80] = 0
    table[0, 0xC2:0xE0] = 1
    table[0, 0xE0] = 3
    table[0, 0xE1:0xED] = table[0, 0xEE:0xF0] = 2
    table[0, 0xED] = 4
    table[0, 0xF0] = 5
    table[0, 0xF1:0xF4] = 6
    table[0, 0xF4] = 7
    table[1, 0x80:0xC0] = 0
    table[2, 0x80:0xC0] = 1
    table[3, 0xA0:0xC0] = 1
    table[4, 0x80:0xA0] = 1
    table[5, 0x90:0xC0] = 2
    table[6, 0x80:0xC0] = 2
    table[7, 0x80:0x90] = 2
    return table


_UTF8 = _utf8_table()

_Parts = tuple[list[npt.NDArray[np.int64]], list[npt.NDArray[np.int64]],
               list[npt.NDArray[np.int64]]]
"""Accepted ranks, ranks failed after a rescuable pair, and the states accepted ranks end in,
as lists of arrays to join."""


def _joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
