"""`DeadlineAutomaton`: byte steps under character budgets, numbered, for token walks in numpy.

A mask near a ``max_chars`` deadline must read its longer tokens again with the deadlines
(:mod:`grammarkit.decode.char_budget`). What a parse state with deadlines does with the bytes
that follow depends only on its groups and on each item's deadline *relative to the code
points read*, and only up to the longest token: a deadline at least that many code points
away cannot expire within a token, and one already passed stays passed. So states are keyed
like :meth:`StateAutomaton.state_key` (positions and identities dropped, counters canonical
for the longest token) with, per frame, its rules' deadlines minus the code points read,
clipped to ``0..far`` (``far``: the most code points of a token; a clipped ``far`` is no
deadline). Equal keys step alike under every byte string a token can hold, so the first
state met with a key stands for it, and steps between numbers are kept in a dense
``[states, 256]`` table filled on first use: a walk runs every candidate token through it
column by column, and only unseen ``(state, byte)`` pairs cost a parser step (which fills the
entries of every byte of the grammar's byte class that starts, or continues, a code point as
the byte does). Tokens sharing a prefix share its steps, and so do the masks of one matcher (a
new word under a budget meets the states the previous one did). Equal keys also have equal
masks, so the caller keeps masks by state number (:attr:`DeadlineAutomaton.masks`).

The automaton keeps its own :class:`~grammarkit.automata.char_deadlines.DeadlineScan`: the
frames of its states stay known there whatever the matcher rolls back.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from grammarkit.automata.char_deadlines import NO_DEADLINE, DeadlineScan
from grammarkit.decode.bitmask import Words
from grammarkit.decode.earley_core import EarleyCore, Frame
from grammarkit.decode.state_automaton import distinct_pairs
from grammarkit.decode.token_index import TokenIndex
from grammarkit.decode.token_partition import byte_classes

UNKNOWN = -2
"""Table entry of a step not computed yet (``-1``: the byte is rejected)."""

MAX_STATES = 50_000
"""States kept before the automaton starts afresh (bounds the table to about 50 MB)."""

MAX_FRAMES = 100_000
"""Frames known (those of its states and of the matchers' states it started from), and frame
keys (one per frame and count of code points), kept before the automaton starts afresh."""

DENSE_PAIRS = 1 << 20
"""Unknown ``(state, byte)`` pairs are deduplicated in a dense scratch array up to this size."""

SCALAR_TAIL = 8
"""Walks finish token by token once this few tokens remain."""

MASK_CACHE_SIZE = 256
"""Masks with budgets kept per automaton, by state number (each ``vocab_size / 8`` bytes)."""

Groups = dict[Frame, int]


class DeadlineAutomaton:
    """Parse states with character deadlines, numbered by what they can still do.

    Parameters
    ----------
    core
        The Earley adapter of a grammar with ``max_chars`` rules.
    index
        The vocabulary's token index (its longest token bounds what a key must tell apart).
    far
        The most code points of any token of ``index``.
    """

    def __init__(self, core: EarleyCore, index: TokenIndex, far: int):
        self._core = core
        self._index = index
        self._far = far
        self._horizon = int(index.columns.shape[0]) + 1
        # bytes in the same edge ranges everywhere that all start, or all continue, a code
        # point step alike: one parser step fills the table for all of them
        classes = (byte_classes(core.compiled) * 2 + ((np.arange(256) & 0xC0) == 0x80)).tolist()
        members: dict[int, list[int]] = {}
        for byte, c in enumerate(classes):
            members.setdefault(c, []).append(byte)
        arrays = {c: np.array(bytes_, dtype=np.int64) for c, bytes_ in members.items()}
        self._same_class = [arrays[c] for c in classes]
        self._reset()

    def _reset(self) -> None:
        self._scan = self._core.deadline_scan()
        self._numbers: dict[tuple[tuple[int, int], ...], int] = {}
        self._states: list[tuple[Groups, int, int]] = []  # (groups, position, code points)
        self._table = np.full((64, 256), UNKNOWN, dtype=np.int32)
        self._signatures: dict[tuple[object, ...], int] = {}
        self._frame_keys: dict[tuple[Frame, int], int] = {}
        self.masks: OrderedDict[int, Words] = OrderedDict()
        """Masks with budgets by state number (least recently used first), for the caller."""

    @property
    def num_states(self) -> int:
        """States numbered so far."""
        return len(self._states)

    # -- numbering -------------------------------------------------------------------------------
    def _number(self, groups: Groups, position: int, chars: int) -> int:
        """The number of ``groups`` at byte ``position`` after ``chars`` code points (their
        frames known to this automaton's scan)."""
        core = self._core
        inactive = core.is_inactive
        horizon = self._horizon
        key = tuple(sorted((self._frame_key(frame, chars), core.canonical(config, horizon))
                           for frame, config in groups.items() if not inactive(config)))
        found = self._numbers.get(key)
        if found is None:
            found = self._numbers[key] = len(self._states)
            self._states.append((groups, position, chars))
            if found >= len(self._table):
                grown = np.full((2 * len(self._table), 256), UNKNOWN, dtype=np.int32)
                grown[: len(self._table)] = self._table
                self._table = grown
        return found

    def _frame_key(self, frame: Frame, chars: int) -> int:
        """A number equal for frames whose completions and deadlines, ``chars`` code points
        read, act alike (see the module docstring)."""
        memo = self._frame_keys
        found = memo.get((frame, chars))
        if found is not None:
            return found
        core = self._core
        horizon, far = self._horizon, self._far
        frames = self._scan.frames
        pending = [frame]
        while pending:
            top = pending[-1]
            if (top, chars) in memo:
                pending.pop()
                continue
            completable = core.rules(top.own)
            parents = [(p, c) for p, c in top.parents if not completable.isdisjoint(core.calls(c))]
            missing = [p for p, _ in parents if (p, chars) not in memo]
            if missing:
                pending.extend(missing)
                continue
            deadlines = tuple(sorted(
                (rule, max(0, deadline - chars))
                for rule, deadline in frames[top].deadlines.items() if deadline - chars < far))
            signature = (core.canonical(top.own, horizon),
                         tuple(sorted((memo[p, chars], core.canonical(c, horizon))
                                      for p, c in parents)), deadlines)
            memo[top, chars] = self._signatures.setdefault(signature, len(self._signatures))
            pending.pop()
        return memo[frame, chars]

    def _adopt(self, groups: Groups, scan: DeadlineScan) -> None:
        """Make the frames of ``groups`` (and their ancestors), which ``scan`` knows, known here."""
        known = self._scan.frames
        earliest = self._scan.earliest
        pending = [frame for frame in groups if frame not in known]
        while pending:
            frame = pending.pop()
            if frame not in known:
                info = known[frame] = scan.frames[frame]
                earliest = min(earliest, min(info.deadlines.values(), default=NO_DEADLINE))
                pending.extend(parent for parent, _ in frame.parents if parent not in known)
        self._scan.earliest = earliest

    def _step(self, number: int, byte: int) -> None:
        groups, position, chars = self._states[number]
        after = self._scan.step(groups, position, chars, byte, [])
        target = -1 if after is None else self._number(after[0], position + 1, after[1])
        self._table[number, self._same_class[byte]] = target

    def _fill(self, pairs: npt.NDArray[np.int64]) -> None:
        """Compute the table entries of ``pairs`` (``state * 256 + byte``, with repeats)."""
        table = self._table
        for pair in distinct_pairs(pairs, len(self._states) * 256, DENSE_PAIRS):
            if table[pair >> 8, pair & 255] == UNKNOWN:
                self._step(pair >> 8, pair & 255)
                table = self._table

    # -- walks -----------------------------------------------------------------------------------
    def start(self, groups: Groups, position: int, chars: int, scan: DeadlineScan) -> int:
        """The number of ``groups`` at byte ``position``, ``chars`` code points read (``scan``
        knows their frames): equal numbers have equal masks until the automaton starts afresh,
        which happens only here (then :attr:`masks` is emptied)."""
        if (len(self._states) > MAX_STATES or len(self._frame_keys) > MAX_FRAMES
                or len(self._scan.frames) > MAX_FRAMES):
            self._reset()
        self._adopt(groups, scan)
        return self._number(groups, position, chars)

    def rejected(self, start: int, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """The ranks among ``ranks`` that the deadlines reject after state number ``start``.

        A token is rejected where a byte of it cannot be read, the deadlines enforced before
        each byte that starts a code point (as :meth:`DeadlineScan.step` reads it).
        """
        columns = self._index.columns
        lengths = self._index.lengths[ranks]
        by_length = np.argsort(lengths, kind="stable")
        ranks, lengths = ranks[by_length], lengths[by_length]
        current = np.full(len(ranks), start, dtype=np.int64)
        rejected: list[npt.NDArray[np.int64]] = []
        for k in range(int(lengths[-1]) if len(lengths) else 0):
            ending = int(np.searchsorted(lengths, k, side="right"))
            if ending:
                ranks, current, lengths = ranks[ending:], current[ending:], lengths[ending:]
            if len(ranks) <= SCALAR_TAIL:
                rejected.append(self._rejected_one_by_one(k, ranks, current))
                break
            pairs = current * 256 + columns[k, ranks]
            following = self._table.reshape(-1)[pairs]
            unknown = following == UNKNOWN
            if unknown.any():
                self._fill(pairs[unknown])
                following = self._table.reshape(-1)[pairs]
            dead = following < 0
            if dead.any():
                rejected.append(ranks[dead])
                live = ~dead
                ranks, following, lengths = ranks[live], following[live], lengths[live]
            current = following.astype(np.int64)
        return np.concatenate(rejected) if rejected else np.zeros(0, dtype=np.int64)

    def _rejected_one_by_one(self, k: int, ranks: npt.NDArray[np.int64],
                             current: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Walk the last few tokens byte by byte from column ``k`` (long tokens, mostly)."""
        tokens = self._index.tokens
        rejected = []
        for rank, state in zip(ranks.tolist(), current.tolist(), strict=True):
            token = tokens[rank]
            for byte in token[k:]:
                following = int(self._table[state, byte])
                if following == UNKNOWN:
                    self._step(state, byte)
                    following = int(self._table[state, byte])
                if following < 0:
                    rejected.append(rank)
                    break
                state = following
        return np.array(rejected, dtype=np.int64)
