"""``name[max_chars=N]`` as xgrammar 0.2.8's parser enforces it: a deadline on Earley items.

xgrammar gives every Earley item a *character deadline*: an item of a rule predicted at the
``c``-th code point gets ``min(c + N, caller's deadline)`` if its rule has ``max_chars=N``, its
caller's deadline otherwise (none at the root); items carry theirs on as they scan, and a rule
that completes hands its caller back the caller's own. Before each byte that starts a code
point (``c`` code points read so far), if some item that can scan has a deadline ``<= c``
(*expired*), the expired items are dropped when another item that can scan is not expired or
the whole input could end here; otherwise they are all kept (the budget is relaxed, and
xgrammar warns once). The same item with several deadlines behaves as its latest one.

:class:`DeadlineScan` runs that over the recognizer's groups (``{origin frame: configuration}``,
see :mod:`grammarkit.automata.earley`): a rule's items started at one frame share one deadline,
so deadlines are kept per frame and rule, computed when the frame is first seen. Between two
points where a deadline could expire, the input runs through the recognizer's ordinary engine
in one chunk, so a long budgeted text costs what it costs without a budget, and grammars
without budgets never come here. Whole inputs (``Grammar.matches``) and the token-mask decoder
(:mod:`grammarkit.decode.char_budget`, byte strings from a parse state) share it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from grammarkit.automata.earley import (
    _CHUNK,
    _FAILED,
    Frame,
    History,
    MatchTimeout,
    Recognizer,
    _Expired,
    _Tables,
)

NO_DEADLINE = 1 << 62
"""The deadline of items outside every budget."""

_CONTINUATIONS = bytes(range(0x80, 0xC0))
"""Bytes that continue a UTF-8 character (every other byte starts a code point)."""

Deadlines = dict[int, int]
"""A frame's deadlines: ``{rule: deadline}`` for its rules with one (others have none)."""

CharsAt = Callable[[int], int]
"""How many code points precede a byte position of the input."""


def code_points(data: bytes | bytearray | memoryview, start: int = 0, stop: int | None = None) -> int:
    """How many bytes of ``data[start:stop]`` start a code point."""
    return len(bytes(data[start:stop]).translate(None, _CONTINUATIONS))


class _FrameInfo:
    """A frame's deadlines, the earliest deadline of the items waiting below it (in its
    parents and theirs), and per configuration the span of its items' deadlines."""

    __slots__ = ("below", "deadlines", "spans")

    def __init__(self, deadlines: Deadlines, below: int):
        self.deadlines = deadlines
        self.below = below
        self.spans: dict[int, tuple[int, int, int]] = {}


class DeadlineScan:
    """Byte scans of a grammar whose rules have character budgets.

    Parameters
    ----------
    tables
        The recognizer's memo tables.
    budgets
        ``{rule: N}`` for the rules with ``max_chars=N``.
    """

    def __init__(self, tables: _Tables, budgets: dict[int, int]):
        self.tables = tables
        self.budgets = budgets
        self.smallest = min(budgets.values())
        self.frames: dict[Frame, _FrameInfo] = {}
        self.earliest = NO_DEADLINE  # the earliest deadline given so far
        self._calls: dict[int, dict[int, frozenset[int]]] = {}

    # -- deadlines of frames ---------------------------------------------------------------------
    def _rule_calls(self, config: int) -> dict[int, frozenset[int]]:
        """For each rule with states in ``config``: the rules those states call."""
        found = self._calls.get(config)
        if found is None:
            g = self.tables.g
            calls: dict[int, set[int]] = {}
            for s in self.tables.configs[config]:
                edges = g.call_edges[s]
                if edges:
                    calls.setdefault(g.state_rule[s], set()).update(r for r, _ in edges)
            found = self._calls[config] = {r: frozenset(c) for r, c in calls.items()}
        return found

    def _assign(self, frame: Frame, chars: int) -> None:
        """Give ``frame``'s rules their deadlines (``chars``: code points before ``frame``)."""
        budgets = self.budgets
        best: dict[int, int] = {}
        pending: list[int] = []

        def offer(caller: int, rule: int) -> None:
            budget = budgets.get(rule)
            deadline = caller if budget is None else min(caller, chars + budget)
            if deadline > best.get(rule, -1):
                best[rule] = deadline
                pending.append(rule)

        below = NO_DEADLINE
        for parent, config in frame.parents:
            info = self.frames[parent]
            below = min(below, info.below, self.span(parent, config)[2])
            deadlines = info.deadlines
            for rule, callees in self._rule_calls(config).items():
                caller = deadlines.get(rule, NO_DEADLINE)
                for callee in callees:
                    offer(caller, callee)
        if not frame.parents:  # the start: the entry rule calls the root
            best[self.tables.pseudo_rule] = NO_DEADLINE
            pending.append(self.tables.pseudo_rule)
        own = self._rule_calls(frame.own)
        while pending:
            rule = pending.pop()
            caller = best[rule]
            for callee in own.get(rule, ()):
                offer(caller, callee)
        found = {rule: d for rule, d in best.items() if d < NO_DEADLINE}
        self.frames[frame] = _FrameInfo(found, below)
        if found:
            self.earliest = min(self.earliest, *found.values())

    def assign_new(self, groups: Iterable[Frame], chars_at: CharsAt) -> list[Frame]:
        """Give deadlines to the frames of ``groups`` (and their parents) that have none.

        ``chars_at`` tells how many code points precede a frame's position. Returns the
        frames given deadlines, so that a caller exploring inputs can :meth:`forget` them.
        """
        frames = self.frames
        added: list[Frame] = []
        for frame in groups:
            if frame in frames:
                continue
            stack = [frame]
            while stack:
                top = stack[-1]
                missing = [p for p, _ in top.parents if p not in frames]
                if missing:
                    stack.extend(missing)
                    continue
                stack.pop()
                if top not in frames:
                    self._assign(top, chars_at(top.position))
                    added.append(top)
        return added

    def forget(self, frames: Iterable[Frame]) -> None:
        """Drop what is known of ``frames`` (made while exploring inputs, or rolled back)."""
        known = self.frames
        for frame in frames:
            known.pop(frame, None)

    # -- enforcement -----------------------------------------------------------------------------
    def span(self, frame: Frame, config: int) -> tuple[int, int, int]:
        """The earliest and latest deadline of the states of ``config`` at ``frame`` that can
        scan, and the earliest of all its states."""
        info = self.frames[frame]
        found = info.spans.get(config)
        if found is None:
            g = self.tables.g
            deadlines = info.deadlines
            first, last, any_first = NO_DEADLINE + 1, -1, NO_DEADLINE
            for s in self.tables.configs[config]:
                d = deadlines.get(g.state_rule[s], NO_DEADLINE)
                any_first = min(any_first, d)
                if g.byte_edges[s] or g.token_edges[s]:
                    first, last = min(first, d), max(last, d)
            found = info.spans[config] = (first, last, any_first)
        return found

    def lowest(self, groups: Iterable[tuple[Frame, int]]) -> int:
        """The earliest deadline of the items of ``groups`` and of the items they return to."""
        frames = self.frames
        return min((min(frames[frame].below, self.span(frame, config)[2])
                    for frame, config in groups), default=NO_DEADLINE)

    def enforced(self, groups: dict[Frame, int], chars: int) -> dict[Frame, int]:
        """``groups`` before a byte that starts a code point, ``chars`` code points read."""
        if self.earliest > chars:
            return groups
        expired = alive = False
        for frame, config in groups.items():
            first, last, _ = self.span(frame, config)
            expired = expired or first <= chars
            alive = alive or last > chars
        if not expired:
            return groups
        tables = self.tables
        if not alive and not any(tables.accepting[c] for c in groups.values()):
            return groups  # nothing else could go on: the budget is relaxed
        g = tables.g
        kept: dict[Frame, int] = {}
        for frame, config in groups.items():
            if self.span(frame, config)[0] > chars:
                kept[frame] = config
                continue
            deadlines = self.frames[frame].deadlines
            states = frozenset(
                s for s in tables.configs[config]
                if not (g.byte_edges[s] or g.token_edges[s])
                or deadlines.get(g.state_rule[s], NO_DEADLINE) > chars)
            if states:  # not closed again: that would bring dropped states back
                kept[frame] = tables._intern(states)
        return kept

    # -- scans -----------------------------------------------------------------------------------
    def scan(self, data: bytes | memoryview, position: int, groups: dict[Frame, int],
             chars: int, chars_before: CharsAt, history: History | None = None,
             deadline: float | None = None) -> tuple[int, dict[Frame, int], int, bool, list[Frame]]:
        """Scan ``data``, which starts at byte ``position`` after ``chars`` code points.

        ``groups``' frames must have deadlines; ``chars_before`` tells the code points before a
        position earlier than ``position`` (frames made in ``data`` are counted in it).
        Returns ``(position, groups, chars, failed, frames given deadlines)``: the position
        and groups at the end of ``data`` or before the byte that could not be scanned.

        Raises
        ------
        _Expired
            Once past ``deadline`` (a ``time.perf_counter()`` value).
        """
        view = memoryview(data)
        end = position + len(data)
        added: list[Frame] = []
        base = position

        def chars_at(at: int) -> int:  # frames made in the chunk from `position` on
            return (chars_before(at) if at < base
                    else chars + code_points(view, position - base, at - base))

        while position < end:
            if deadline is not None and time.perf_counter() > deadline:
                expired = _Expired()
                expired.position = position
                raise expired
            if view[position - base] & 0xC0 != 0x80:
                groups = self.enforced(groups, chars)
                if history is not None:
                    history.append((position, groups))
            # no deadline can expire within the next `span` bytes but at their first
            span = max(1, min(self.earliest - chars, self.smallest, _CHUNK))
            stop = min(position + span, end)
            reached, groups, outcome = Recognizer._run(
                self.tables, view[position - base:stop - base], position, groups, history,
                deadline)
            if outcome == _FAILED:
                return reached, groups, chars, True, added
            added += self.assign_new(groups, chars_at)
            chars += code_points(view, position - base, stop - base)
            position = stop
        return position, groups, chars, False, added

    def step(self, groups: dict[Frame, int], position: int, chars: int, byte: int,
             added: list[Frame]) -> tuple[dict[Frame, int], int] | None:
        """``(groups, chars)`` after one ``byte`` at ``position`` (``chars`` code points
        before it), or ``None`` if it is rejected; frames given deadlines go to ``added``.

        :meth:`scan` of one byte, without its set-up (token walks take millions of steps).
        """
        starts = byte & 0xC0 != 0x80
        if starts:
            groups = self.enforced(groups, chars)
        _, groups, outcome = Recognizer._run(self.tables, bytes((byte,)), position, groups, None)
        if outcome == _FAILED:
            return None
        after = chars + starts
        added += self.assign_new(groups, lambda _: after)
        return groups, after

    def run(self, data: bytes, groups: dict[Frame, int], history: History | None,
            timeout: float | None) -> tuple[int, dict[Frame, int], bool]:
        """Scan all of ``data`` from the start ``groups``: ``(position, groups, failed)``.

        Raises
        ------
        MatchTimeout
            If scanning takes longer than ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.perf_counter() + timeout
        self.assign_new(groups, lambda _: 0)
        try:
            position, groups, _, failed, _ = self.scan(data, 0, groups, 0, lambda _: 0,
                                                       history, deadline)
        except _Expired as expired:
            raise MatchTimeout(timeout or 0.0, expired.position, len(data)) from None
        return position, groups, failed
