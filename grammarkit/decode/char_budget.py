"""``name[max_chars=N]`` in the decoder: xgrammar 0.2.8's character deadlines, token by token.

The decoder runs the rule of xgrammar's parser that ``Grammar.matches`` runs
(:mod:`grammarkit.automata.char_deadlines`): every Earley item has a deadline in code points,
and before a byte that starts a code point the items past theirs are dropped if another item
is alive or the input could end there (else all are kept: the budget is relaxed). Budgeted
rules are compiled as ordinary rules (``CompiledGrammar.char_deadlines``), so recursive and
nested budgets, and ``max_tokens`` rules inside them, run as in xgrammar.

Tokens are stepped through bytes with that rule (:meth:`CharBudget.advance`); at a token
boundary on a character boundary the rule is applied once more, so the state kept is the one
the next byte meets. Enforcement only ever drops items, so the mask of a state with budgets is
a subset of its mask without them (what the mask engine computes and caches): a token keeps
its bit without a second look when it has too few code points to reach a deadline (the
earliest deadline of the items alive or waiting, or the smallest budget a rule predicted
inside it could get); the others are walked again with the deadlines, column by column
through a :class:`~grammarkit.decode.deadline_automaton.DeadlineAutomaton`, which numbers
states by their deadlines relative to the code points read and keeps its byte steps across
the matcher's masks. Deadlines are kept per frame (:class:`DeadlineScan`) for the matcher's history
and forgotten on rollback; frames made while exploring (masks, jump-forward strings) are
forgotten at once. A grammar without ``max_chars`` has no such object.
"""

from __future__ import annotations

import bisect
import weakref
from typing import cast

import numpy as np
import numpy.typing as npt

from grammarkit.automata.char_deadlines import code_points
from grammarkit.decode.bitmask import Words, clear_bits, set_bits
from grammarkit.decode.deadline_automaton import MASK_CACHE_SIZE, DeadlineAutomaton
from grammarkit.decode.earley_core import EarleyCore, Frame, ParseState
from grammarkit.decode.token_index import TokenIndex

_CHAR_COUNTS: weakref.WeakKeyDictionary[TokenIndex, np.ndarray] = weakref.WeakKeyDictionary()
"""Per token index, the code points (bytes that start one) of each rank."""


_LONG_WORDS: weakref.WeakKeyDictionary[TokenIndex, dict[int, Words]] = (
    weakref.WeakKeyDictionary())
"""Per token index and count of code points, the bitmask words of the ordinary tokens with more
code points than that."""


_AUTOMATA: weakref.WeakKeyDictionary[EarleyCore, DeadlineAutomaton] = weakref.WeakKeyDictionary()
"""Per grammar's Earley adapter (one per mask engine), the automaton its matchers share."""


def _shared_automaton(core: EarleyCore, index: TokenIndex) -> DeadlineAutomaton:
    """The deadline automaton of ``core``'s matchers, made on first use."""
    found = _AUTOMATA.get(core)
    if found is None:
        # a proxy: the automaton must not keep its own key alive
        proxy = cast(EarleyCore, weakref.proxy(core))
        found = _AUTOMATA[core] = DeadlineAutomaton(proxy, index, int(_char_counts(index).max()))
    return found


def _char_counts(index: TokenIndex) -> np.ndarray:
    """How many bytes of each rank's token start a code point."""
    found = _CHAR_COUNTS.get(index)
    if found is None:
        starts = (np.frombuffer(b"".join(index.tokens), dtype=np.uint8) & 0xC0) != 0x80
        offsets = np.zeros(len(index.tokens), dtype=np.int64)
        np.cumsum(index.lengths[:-1], out=offsets[1:])
        found = (np.add.reduceat(starts.astype(np.int64), offsets) if len(offsets)
                 else np.zeros(0, dtype=np.int64))
        _CHAR_COUNTS[index] = found
    return found


def _longer_than(index: TokenIndex, reach: int) -> Words:
    """Bitmask words (read-only) of the ordinary tokens of ``index`` with more than ``reach``
    code points."""
    known = _LONG_WORDS.setdefault(index, {})
    found = known.get(reach)
    if found is None:
        found = np.zeros_like(index.ordinary_words)
        set_bits(found, index.ids[_char_counts(index) > reach])
        found.setflags(write=False)
        known[reach] = found
    return found


def most_code_points(index: TokenIndex, ranks: npt.NDArray[np.int64]) -> int:
    """The most code points of the tokens ``ranks`` of ``index``, ``-1`` if none: a mask
    allowing only those needs no walk with deadlines at least that many code points away."""
    return int(_char_counts(index)[ranks].max()) if len(ranks) else -1


def allowed_ranks(words: Words, index: TokenIndex) -> npt.NDArray[np.int64]:
    """The ranks of the ordinary tokens of ``index`` that ``words`` allows."""
    ranks = index.rank_of[_set_ids(words)]
    return ranks[ranks >= 0]


def _set_ids(words: Words) -> npt.NDArray[np.int64]:
    """The ids whose bits are set in ``words``, ascending (unpacking only the nonzero words,
    unless they are many)."""
    nonzero = np.flatnonzero(words)
    if 3 * len(nonzero) > len(words):
        return np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))
    bits = np.unpackbits(words[nonzero].view(np.uint8), bitorder="little").reshape(-1, 32)
    at, bit = np.nonzero(bits)
    return nonzero[at] * 32 + bit


def _open_after(open_bytes: int, data: bytes) -> int:
    """Continuation bytes still expected after ``data``, ``open_bytes`` being expected before."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:
            need = 0 if byte < 0xC0 else 1 if byte < 0xE0 else 2 if byte < 0xF0 else 3
            return max(0, need - back + 1)
    return max(0, open_bytes - len(data))


class Cursor:
    """A parse state with what the budget needs of it: code points read, and continuation
    bytes still expected (no deadline is enforced before those)."""

    __slots__ = ("chars", "open", "state")

    def __init__(self, state: ParseState, chars: int, open_bytes: int):
        self.state = state
        self.chars = chars
        self.open = open_bytes


class CharBudget:
    """The character budgets of one matcher's history.

    Parameters
    ----------
    core
        The Earley adapter of a grammar compiled with ``char_deadlines``.
    """

    def __init__(self, core: EarleyCore):
        self._core = core
        self._scan = self._core.deadline_scan()
        self._marks: list[tuple[int, int]] = []  # (position, code points) after each step
        self._open: list[int] = []  # continuation bytes still expected after each step
        self._pushed: ParseState | None = None  # the state of the last step, if pushed
        self._added: list[list[Frame]] = []
        self._bytes = bytearray()

    @classmethod
    def of(cls, core: EarleyCore) -> CharBudget | None:
        """The budget of a grammar, or ``None`` if no reachable rule has ``max_chars``."""
        return cls(core) if core.compiled.char_deadlines else None

    # -- history ---------------------------------------------------------------------------------
    def start(self, state: ParseState) -> None:
        """Forget everything; ``state`` is the state before any token."""
        self._scan = self._core.deadline_scan()
        self._marks = [(0, 0)]
        self._open = [0]
        self._bytes = bytearray()
        self._added = [self._scan.assign_new((frame for frame, _ in state.groups),
                                             lambda _: 0)]
        self._pushed = state

    def cursor(self, state: ParseState) -> Cursor:
        """``state``, the latest of the history (or one made from it without bytes)."""
        if state is not self._pushed:  # the frames of a pushed state have their deadlines
            self._added[-1] += self._scan.assign_new((frame for frame, _ in state.groups),
                                                     self._chars_before)
        return Cursor(state, self._marks[-1][1], self._open[-1])

    def push(self, state: ParseState, data: bytes) -> None:
        """One more step, by ``data``, led to ``state`` (what :meth:`advance` returned)."""
        position, chars = self._marks[-1]
        self._bytes += data
        self._marks.append((position + len(data), chars + code_points(data)))
        self._open.append(_open_after(self._open[-1], data))
        self._added.append(self._scan.assign_new((frame for frame, _ in state.groups),
                                                 self._chars_before))
        self._pushed = state

    def pop(self, count: int) -> None:
        """The last ``count`` steps were rolled back."""
        for _ in range(count):
            self._scan.forget(self._added.pop())
            self._marks.pop()
            self._open.pop()
        self._pushed = None
        del self._bytes[self._marks[-1][0]:]

    def _chars_before(self, position: int) -> int:
        """Code points before byte ``position`` of the accepted input."""
        marks = self._marks
        at = bisect.bisect_right(marks, (position, 1 << 62)) - 1
        mark, chars = marks[at]
        return chars + code_points(self._bytes, mark, position)

    # -- steps -----------------------------------------------------------------------------------
    def advance(self, cursor: Cursor, data: bytes, explored: list[Frame] | None = None,
                settle: bool = True) -> Cursor | None:
        """The cursor after ``data``, deadlines enforced, or ``None`` if it is rejected.

        With ``settle``, the deadlines are enforced after ``data`` too, if a byte that starts
        a code point comes next (as xgrammar does after a token). Frames made on the way are
        remembered for the history, unless ``explored`` collects them (the caller then
        :meth:`discard` s them).
        """
        scan = self._scan
        state = cursor.state
        position, groups, chars, failed, added = scan.scan(
            data, state.position, dict(state.groups), cursor.chars, self._chars_before)
        if explored is not None:
            explored += added
        elif added:
            self._added[-1] += added
        if failed:
            return None
        open_bytes = _open_after(cursor.open, data)
        if settle and not open_bytes:  # the next byte starts a code point
            groups = scan.enforced(groups, chars)
        return Cursor(ParseState(position, tuple(groups.items())), chars, open_bytes)

    def settled(self, cursor: Cursor, data: bytes, state: ParseState) -> ParseState:
        """``state``, reached from ``cursor`` by a token of text ``data`` that ``Token(...)``
        edges took (perhaps with its bytes too), with the deadlines enforced where the next
        byte starts a code point."""
        scan = self._scan
        chars = cursor.chars + code_points(data)
        start = cursor.state.position

        def chars_at(at: int) -> int:
            return (self._chars_before(at) if at < start
                    else cursor.chars + code_points(data, 0, at - start))

        self._added[-1] += scan.assign_new((frame for frame, _ in state.groups), chars_at)
        if _open_after(cursor.open, data):
            return state
        return ParseState(state.position, tuple(scan.enforced(dict(state.groups), chars).items()))

    def discard(self, explored: list[Frame]) -> None:
        """Forget the frames an exploration made."""
        self._scan.forget(explored)

    def stops_jump(self, cursor: Cursor, byte: int) -> bool:
        """Whether a jump-forward string stops before ``byte``: xgrammar's does before a
        byte that starts a code point while an item that can scan is past its deadline."""
        if byte & 0xC0 == 0x80:
            return False
        chars = cursor.chars
        return any(self._scan.span(frame, config)[0] <= chars
                   for frame, config in cursor.state.groups)

    # -- masks -----------------------------------------------------------------------------------
    def refined(self, cursor: Cursor, words: Words, index: TokenIndex,
                by_edges: Words | None = None, longest: int | None = None) -> Words:
        """``words`` (the mask of ``cursor``'s state without budgets) without the tokens its
        deadlines reject; ``by_edges``: those its ``Token(...)`` edges allow (a token either
        way is taken whole, and xgrammar holds it to no deadline inside it); ``longest``: the
        most code points of an ordinary token ``words`` allows, if known
        (:func:`most_code_points`)."""
        scan = self._scan
        state = cursor.state
        # no token reaching a deadline: found without a pass over the mask, and first against
        # the earliest deadline given so far (no later than those of the state's items)
        if by_edges is not None:
            longest = None  # such masks are walked as before
        if longest is not None and longest <= min(scan.earliest - cursor.chars, scan.smallest):
            return words
        reach = max(min(scan.lowest(state.groups) - cursor.chars, scan.smallest), -1)
        if longest is not None and longest <= reach:
            return words
        # Token(...) ids are not walked, nor tokens too short to reach a deadline
        walked = words & _longer_than(index, reach)
        if by_edges is not None:
            walked &= ~by_edges
        if not walked.any():
            return words
        automaton = _shared_automaton(self._core, index)
        start = automaton.start(dict(state.groups), state.position, cursor.chars, scan)
        found = automaton.masks.get(start)
        if found is not None:
            automaton.masks.move_to_end(start)
            return found
        ranks = index.rank_of[_set_ids(walked)]
        rejected = automaton.rejected(start, ranks)
        if len(rejected):
            words = words.copy()
            clear_bits(words, index.ids[rejected])
            words.setflags(write=False)
        automaton.masks[start] = words
        if len(automaton.masks) > MASK_CACHE_SIZE:
            automaton.masks.popitem(last=False)
        return words
