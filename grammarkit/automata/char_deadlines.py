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
without budgets never come here.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

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


def code_points(data: bytes | memoryview, start: int, stop: int) -> int:
    """How many bytes of ``data[start:stop]`` start a code point."""
    return len(bytes(data[start:stop]).translate(None, _CONTINUATIONS))


class DeadlineScan:
    """Whole-input scans of a grammar whose rules have character budgets.

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
        self.deadlines: dict[Frame, Deadlines] = {}
        self.earliest = NO_DEADLINE  # the earliest deadline given so far
        self._calls: dict[int, dict[int, frozenset[int]]] = {}
        self._spans: dict[tuple[Frame, int], tuple[int, int]] = {}

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

        for parent, config in frame.parents:
            deadlines = self.deadlines[parent]
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
        self.deadlines[frame] = found
        if found:
            self.earliest = min(self.earliest, *found.values())

    def assign_new(self, groups: Iterable[Frame], data: bytes | memoryview, start: int,
                   chars: int) -> None:
        """Give deadlines to the frames of ``groups`` (and their parents) that have none.

        They were made in ``data[start:]``, where ``chars`` code points had been read.
        """
        deadlines = self.deadlines
        for frame in groups:
            if frame in deadlines:
                continue
            stack = [frame]
            while stack:
                top = stack[-1]
                missing = [p for p, _ in top.parents if p not in deadlines]
                if missing:
                    stack.extend(missing)
                    continue
                stack.pop()
                if top not in deadlines:
                    self._assign(top, chars + code_points(data, start, top.position))

    # -- enforcement -----------------------------------------------------------------------------
    def _span(self, frame: Frame, config: int) -> tuple[int, int]:
        """The earliest and latest deadline of the states of ``config`` that can scan."""
        key = (frame, config)
        found = self._spans.get(key)
        if found is None:
            g = self.tables.g
            deadlines = self.deadlines[frame]
            found = (NO_DEADLINE + 1, -1)
            for s in self.tables.configs[config]:
                if g.byte_edges[s] or g.token_edges[s]:
                    d = deadlines.get(g.state_rule[s], NO_DEADLINE)
                    found = (min(found[0], d), max(found[1], d))
            self._spans[key] = found
        return found

    def enforced(self, groups: dict[Frame, int], chars: int) -> dict[Frame, int]:
        """``groups`` before a byte that starts a code point, ``chars`` code points read."""
        if self.earliest > chars:
            return groups
        expired = alive = False
        for frame, config in groups.items():
            first, last = self._span(frame, config)
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
            first, _ = self._span(frame, config)
            if first > chars:
                kept[frame] = config
                continue
            deadlines = self.deadlines[frame]
            states = frozenset(
                s for s in tables.configs[config]
                if not (g.byte_edges[s] or g.token_edges[s])
                or deadlines.get(g.state_rule[s], NO_DEADLINE) > chars)
            if states:  # not closed again: that would bring dropped states back
                kept[frame] = tables._intern(states)
        return kept

    # -- whole inputs ----------------------------------------------------------------------------
    def run(self, data: bytes, groups: dict[Frame, int], history: History | None,
            timeout: float | None) -> tuple[int, dict[Frame, int], bool]:
        """Scan all of ``data`` from the start ``groups``: ``(position, groups, failed)``.

        Raises
        ------
        MatchTimeout
            If scanning takes longer than ``timeout`` seconds.
        """
        deadline = None if timeout is None else time.perf_counter() + timeout
        view = memoryview(data)
        self.assign_new(groups, data, 0, 0)
        position = chars = 0
        while position < len(data):
            if deadline is not None and time.perf_counter() > deadline:
                raise MatchTimeout(timeout or 0.0, position, len(data))
            if data[position] & 0xC0 != 0x80:
                groups = self.enforced(groups, chars)
                if history is not None:
                    history.append((position, groups))
            # no deadline can expire within the next `span` bytes but at their first
            span = max(1, min(self.earliest - chars, self.smallest, _CHUNK))
            stop = min(position + span, len(data))
            try:
                reached, groups, outcome = Recognizer._run(
                    self.tables, view[position:stop], position, groups, history, deadline)
            except _Expired as expired:
                raise MatchTimeout(timeout or 0.0, expired.position, len(data)) from None
            if outcome == _FAILED:
                return reached, groups, True
            self.assign_new(groups, data, position, chars)
            chars += code_points(data, position, stop)
            position = stop
        return position, groups, False
