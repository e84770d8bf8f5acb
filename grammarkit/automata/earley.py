"""Exact recognition: an Earley parser over the compiled rule automata.

An Earley *item* is ``(state, origin)``: some rule's automaton is in ``state``, having started at
input position ``origin``. Items are grouped by origin, and a group's states form one interned
*configuration* (a ``frozenset`` of states numbered by a small int), so the per-byte work is a
few table look-ups per group rather than per item:

:class:`Frame`
    An input position where rules were predicted: a node of a graph-structured stack. ``parents``
    are the groups present there and ``own`` the predicted configuration; from them, ``waiting``
    lazily memoizes, per rule, where items continue once that rule (started here) completes.
    Frames never change meaning once built and reference only older frames, so unreferenced
    ones are freed as soon as no item uses them.
:class:`ParseState`
    The items after some input: ``groups`` pairs each origin frame with a configuration. It is
    immutable, so a decoder can keep states to roll back to and continue differently.
Configurations (``_Tables``, shared by every recognizer of one compiled grammar)
    Closed under the nullable-rule shortcut (a call of a rule that derives the empty string may
    be stepped over at once, as in Aycock & Horspool); ``predicted(c)`` is the closed
    configuration of the rules ``c`` calls. Byte steps (``rows[c]``: 256 target configurations,
    ``-1`` for none) are built on first use, so recognition walks a lazily built automaton of
    configurations. Whole-input scans keep these tables bounded (see ``Recognizer._scan``).

Whole inputs (``matches``, ``explain``) are scanned by :class:`_ShapeScan`: the top of the
stack (the groups' frames and their parents) is known there only by configurations, and what a
byte does to such a *shape* is computed once and remembered, whatever the grammar and however
deep the document; frames are built only where they leave the shape's top. Inputs that meet new
shapes all the time (a long literal, an ambiguous grammar) go back to the per-group engine
(``Recognizer._run``, which ``advance`` always uses). There, three shapes skip work: runs of
bytes that lead inert configurations (no calls, no completions) back to themselves are consumed
by one regular expression (string bodies, multi-byte characters included; the shape scan uses
these too); so are runs that keep a calling configuration while killing its predictions
(whitespace before a value); and a group's completions are memoized on its frame (the digits of
a number).

Semantics are xgrammar 0.2.8's ``accept_string`` followed by ``is_terminated``: the whole input
must be derived from the root; ``Token``/``ExcludeToken`` edges match no bytes.
"""
from __future__ import annotations

import re
import time
import weakref
from collections import deque
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import repeat
from operator import or_
from typing import TypeAlias

from grammarkit._gc import paused_gc
from grammarkit.automata import utf8
from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.lazy_dfa import split_ranges
from grammarkit.diagnostics import error
from grammarkit.ebnf.escapes import class_char, quote_string

_CHUNK = 1 << 12
"""Whole inputs are scanned in chunks of this many bytes (then table sizes are checked)."""

_MAX_CONFIGS = 20_000
"""Above this many interned configurations, whole-input scans switch to fresh private tables."""

_MAX_CYCLES = 64
"""At most this many multi-byte paths are put in one skipping regex."""

_MAX_LISTED = 8
"""Expected sets of more characters than this are shown as character classes."""

DEFAULT_TIMEOUT = 60.0
"""Seconds :meth:`Recognizer.matches` and :meth:`Recognizer.explain` may take by default."""

_DEADLINE_EVERY = 4096
"""Completion steps between two looks at the clock."""

_SHAPED_PARENTS = 2
"""Completions of frames with at most this many parents are memoized by shape, not per frame."""

_WIDE_GROUPS = 32
"""Whole-input scans with more origin groups than this at once continue on :class:`_WideScan`."""


class MatchTimeout(TimeoutError):
    """Matching took longer than its time budget (``GK122``; see ``docs/diagnostics.md``).

    Attributes
    ----------
    diagnostic
        The ``GK122`` diagnostic, naming the budget and how far the input was scanned.
    """

    def __init__(self, seconds: float, offset: int, length: int):
        self.seconds, self.offset, self.length = seconds, offset, length
        self.diagnostic = error(
            "GK122", f"matching did not finish within {seconds:g} s (stopped near byte "
            f"{offset:,} of {length:,})", None,
            "pass a larger timeout, or make the grammar less ambiguous (rules like "
            "`x ::= x x | ...` take time cubic in the input length)")
        super().__init__(self.diagnostic.message)

    def __reduce__(self) -> tuple[type[MatchTimeout], tuple[float, int, int]]:
        return MatchTimeout, (self.seconds, self.offset, self.length)


class _Expired(Exception):
    """Raised inside the engine when a deadline has passed (near input ``position``)."""

    position = 0


class Frame:
    """An input position where rules were predicted: a node of the graph-structured stack.

    ``parents`` are the groups present at that position, ``own`` the configuration predicted
    there; together they say where each rule started here continues once it completes.
    """

    __slots__ = ("completed", "own", "parents", "position", "waiting")

    def __init__(self, position: int, parents: tuple[tuple[Frame, int], ...], own: int):
        self.position = position
        self.parents = parents
        self.own = own
        # memo tables, made on first use (most frames of a deep document never complete)
        self.waiting: dict[int, tuple[tuple[Frame | None, int], ...]] | None = None
        self.completed: dict[int, tuple[int, dict[Frame, int], int]] | None = None

    def __repr__(self) -> str:
        return f"Frame({self.position})"


def parents_first(frames: Iterable[Frame], done: Container[Frame]) -> Iterator[Frame]:
    """``frames`` and their ancestors that are not in ``done``, each after its parents: the
    caller puts each frame it gets into ``done`` before asking for the next."""
    pending = list(frames)
    while pending:
        frame = pending[-1]
        if frame in done:
            pending.pop()
            continue
        missing = [parent for parent, _ in frame.parents if parent not in done]
        if missing:
            pending.extend(missing)
            continue
        pending.pop()
        yield frame


@dataclass(frozen=True, eq=False)
class ParseState:
    """All Earley items after ``position`` bytes: ``(origin frame, configuration)`` groups."""

    position: int
    groups: tuple[tuple[Frame, int], ...]


History: TypeAlias = deque[tuple[int, dict[Frame, int] | int]]
"""Recent ``(position, items)`` of a scan, for explanations: the main engine's groups, or
(after :class:`_WideScan` took over) the configuration of all item states."""


@dataclass(frozen=True)
class Explanation:
    """Why an input does not match: where matching stopped and what would have continued it.

    Attributes
    ----------
    offset
        Byte offset of the first character that cannot be matched (the input length if the
        input ends too early).
    line, column
        1-based; the column counts characters.
    expected
        What could come next, human-readable: ``'","'``, ``"[0-9]"``, ``"end of input"``.
    found
        What is there instead: a quoted character, ``"end of input"``, or
        ``"invalid UTF-8 0xE6 0x97"`` for a malformed character.
    """

    offset: int
    line: int
    column: int
    expected: tuple[str, ...]
    found: str

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}"
        if not self.expected:
            return f"nothing can follow at {where}, found {self.found}"
        what = " ".join(self.expected)
        lead = "expected one of" if len(self.expected) > 1 else "expected"
        return f"{lead} {what} at {where}, found {self.found}"


class Recognizer:
    """Decides membership of byte strings in a compiled grammar's language.

    Construction is cheap: the lazily built tables are shared by every recognizer of the same
    :class:`CompiledGrammar`.
    """

    def __init__(self, compiled: CompiledGrammar):
        self.compiled = compiled
        self._tables = _tables_for(compiled)

    # -- incremental interface -----------------------------------------------------------------
    def initial(self) -> ParseState:
        """The state before any input."""
        tables = self._tables
        config = tables.closed_config(frozenset((self.compiled.entry_state,)))
        predicted = tables.predicted(config)
        if predicted >= 0:
            config = tables.union(config, predicted)
        return ParseState(0, ((Frame(0, (), config), config),))

    def advance(self, state: ParseState, data: bytes) -> ParseState | None:
        """The state after ``data`` follows ``state``, or ``None`` if the grammar rejects it."""
        position, groups, outcome = self._run(self._tables, data, state.position,
                                              dict(state.groups), None)
        if outcome == _FAILED:
            return None
        return ParseState(position, tuple(groups.items()))

    def is_accepting(self, state: ParseState) -> bool:
        """Whether the input so far is a complete sentence of the grammar."""
        accepting = self._tables.accepting
        return any(accepting[config] for _, config in state.groups)

    # -- whole inputs ----------------------------------------------------------------------------
    def matches(self, data: bytes, timeout: float | None = DEFAULT_TIMEOUT) -> bool:
        """Whether the whole of ``data`` is in the language.

        Raises
        ------
        MatchTimeout
            If deciding takes longer than ``timeout`` seconds (``None``: no limit).
        """
        tables, _, config, failed = self._scan(data, None, timeout)
        return not failed and tables.accepting[config]

    def explain(self, data: bytes, timeout: float | None = DEFAULT_TIMEOUT
                ) -> Explanation | None:
        """``None`` if ``data`` matches; otherwise where and why matching fails.

        Raises
        ------
        MatchTimeout
            If deciding takes longer than ``timeout`` seconds (``None``: no limit).
        """
        history: History = deque(maxlen=8)
        tables, position, config, failed = self._scan(data, history, timeout)
        if not failed and tables.accepting[config]:
            return None
        offset = utf8.char_start(data, position)
        for recorded, items in reversed(history):
            if recorded <= offset:
                config = items if isinstance(items, int) else tables.merged(items.values())
                break
        expected = tables.describe_expected(config)
        return _explanation(data, offset, expected)

    def _scan(self, data: bytes, history: History | None, timeout: float | None
              ) -> tuple[_Tables, int, int, bool]:
        """Run over all of ``data`` in chunks, keeping the memo tables bounded.

        Returns ``(tables, position, configuration of all item states, failed)``.

        When the shared tables hold more than :data:`_MAX_CONFIGS` configurations (inputs that
        drive a nondeterministic rule through ever new state sets), the rest of the input runs
        on private tables, rebuilt from the live state whenever they grow as large. Chunks end on
        character boundaries, so explanations never need a state from before a rebuild. When
        more than :data:`_WIDE_GROUPS` origins are live at once (an ambiguous grammar), the rest
        of the input runs on :class:`_WideScan`.
        """
        with paused_gc():  # frames hold no cycles; what the scan built joins the oldest
            if self.compiled.char_deadlines:  # budgets as xgrammar's parser enforces them
                return self._scan_with_deadlines(data, history, timeout)
            return self._scan_all(data, history, timeout)

    def _scan_with_deadlines(self, data: bytes, history: History | None, timeout: float | None
                             ) -> tuple[_Tables, int, int, bool]:
        from grammarkit.automata.char_deadlines import DeadlineScan

        scan = DeadlineScan(self._tables, self.compiled.char_deadlines)
        position, groups, failed = scan.run(data, dict(self.initial().groups), history, timeout)
        return self._tables, position, self._tables.merged(groups.values()), failed

    def _scan_all(self, data: bytes, history: History | None, timeout: float | None
                  ) -> tuple[_Tables, int, int, bool]:
        tables = self._tables
        groups = dict(self.initial().groups)
        if len(tables.configs) > _MAX_CONFIGS:
            tables, groups = _rebuilt(tables, groups)
        view = memoryview(data)
        position = 0
        deadline = None if timeout is None else time.perf_counter() + timeout
        shapes_from = 0  # scan by shapes from this position on (see below)
        backoff = _CHUNK
        while True:
            stop = _chunk_end(data, position + _CHUNK)
            try:
                outcome = _WIDENED
                if position >= shapes_from:
                    position, groups, outcome = tables.shape_scan().run(
                        view[position:stop], position, groups, history, deadline)
                    if outcome == _WIDENED:  # try shapes again later, and later again
                        shapes_from, backoff = position + backoff, 2 * backoff
                if outcome == _WIDENED:
                    position, groups, outcome = self._run(tables, view[position:stop], position,
                                                          groups, history, deadline, _WIDE_GROUPS)
                if outcome == _WIDENED:
                    wide = _WideScan(tables, groups)
                    position, failed = wide.run(data, position, history, deadline)
                    return tables, position, wide.config(), failed
            except _Expired as expired:
                raise MatchTimeout(timeout or 0.0, expired.position, len(data)) from None
            failed = outcome == _FAILED
            if failed or position >= len(data):
                return tables, position, tables.merged(groups.values()), failed
            if deadline is not None and time.perf_counter() > deadline:
                raise MatchTimeout(timeout or 0.0, position, len(data))
            if len(tables.configs) > _MAX_CONFIGS:
                tables, groups = _rebuilt(tables, groups)
                if history is not None:
                    history.clear()
                    history.append((position, groups))

    # -- the engine ------------------------------------------------------------------------------
    @staticmethod
    def _run(tables: _Tables, data: bytes | memoryview, position: int, groups: dict[Frame, int],
             history: History | None, deadline: float | None = None, wide: int | None = None
             ) -> tuple[int, dict[Frame, int], int]:
        """Scan ``data``, which starts at ``position``, from ``groups``.

        Returns ``(position, groups, outcome)``: :data:`_SCANNED` at the end of ``data``;
        :data:`_FAILED` with the position of the byte that could not be scanned and the groups
        before it; :data:`_WIDENED` as soon as completions leave more than ``wide`` groups.
        Raises :class:`_Expired` once past ``deadline`` (a ``time.perf_counter()`` value),
        checked where many groups complete.
        """
        rows = tables.rows
        inert = tables.inert
        completes = tables.completes
        end = position + len(data)
        offset = position  # data[i] is the byte at position offset + i
        skip: re.Pattern[bytes] | None = None  # runs of bytes that leave ``groups`` as they are
        caller: Frame | None = None  # set when ``groups`` is (caller, config) + a fresh frame
        config = -1
        last_frame: Frame | None = None  # the last single group completed, and how
        last_config = -1
        last_found: tuple[int, dict[Frame, int], int] = (-1, {}, -1)
        while True:
            if history is not None:
                history.append((position, groups))
            if position >= end:
                return position, groups, _SCANNED
            if skip is not None:
                match = skip.match(data, position - offset)
                if match is not None:
                    position = match.end() + offset
                    if caller is not None:  # the fresh frame moves along
                        predicted = tables.predicted(config)
                        groups = {caller: config,
                                  Frame(position, ((caller, config),), predicted): predicted}
                    if history is not None:
                        history.append((position, groups))
                    if position >= end:
                        return position, groups, _SCANNED
            byte = data[position - offset]
            kernel: dict[Frame, int] = {}
            all_inert = True
            for frame, current in groups.items():
                row = rows[current]
                if row is None:
                    if deadline is not None and time.perf_counter() > deadline:
                        expired = _Expired()
                        expired.position = position
                        raise expired
                    row = tables.build_row(current)
                target = row[byte]
                if target >= 0:
                    kernel[frame] = target
                    if all_inert and not inert[target]:
                        all_inert = False
            if not kernel:
                return position, groups, _FAILED
            position += 1
            caller = None
            single = len(kernel) == 1
            if single:
                ((frame, config),) = kernel.items()
            if all_inert:
                groups = kernel
                key = config if single else tuple(sorted(kernel.values()))
                if deadline is not None and key not in tables._loops \
                        and time.perf_counter() > deadline:  # a new pattern builds rows
                    expired = _Expired()
                    expired.position = position
                    raise expired
                skip = tables.loop_pattern(key)
                run = tables.counted_run(config) if single and skip is None else None
                if run is not None:  # iterations of a counted repetition, all at once
                    done, stop = run.scan(data, position - offset, end - offset)
                    if done:
                        position = stop + offset
                        config = tables.shifted(config, run.state, done)
                        groups = {frame: config}
            elif single and not completes[config]:
                # the common shape: one group that calls rules, which start here
                caller = frame
                predicted = tables.predicted(config)
                pushes = tables.push_pattern(config)
                match = pushes.match(data, position - offset) if pushes is not None else None
                if match is not None:  # opening brackets of a deep document: a frame each
                    stop = match.end() + offset
                    for at in range(position, stop):
                        caller = Frame(at, ((caller, config),), predicted)
                    position = stop
                groups = {caller: config,
                          Frame(position, ((caller, config),), predicted): predicted}
                skip = tables.stable_pattern(config)
            elif single:
                # completions depend only on the frame: remember them (digits of a number)
                if frame is not last_frame or config != last_config:
                    try:
                        last_found = tables.completed(frame, config, deadline)
                    except _Expired as expired:
                        expired.position = position
                        raise
                    last_frame, last_config = frame, config
                own, others, predicted = last_found
                added = tables.added_scans(own, config)
                run = tables.counted_run(config) if added is not None else None
                if run is not None and added is not None and not run.first & (
                        added | tables.scannable(others, predicted)):
                    # iterations of a counted repetition that only its own group can scan (the
                    # states completions add beside it, like the rest of a rule that called a
                    # budgeted one at the same position, die at each and come back)
                    done, stop = run.scan(data, position - offset, end - offset)
                    if done:
                        position = stop + offset
                        config = tables.shifted(config, run.state, done)
                        own, others, predicted = tables.completed(frame, config)
                groups = dict(others)
                groups[frame] = own
                if predicted >= 0:
                    groups[Frame(position, tables.callers(groups), predicted)] = predicted
                skip = None
                if wide is not None and len(groups) > wide:
                    return position, groups, _WIDENED
            else:
                try:
                    groups = tables.close(kernel, position, deadline)
                except _Expired as expired:
                    expired.position = position
                    raise
                skip = None
                if wide is not None and len(groups) > wide:
                    return position, groups, _WIDENED


_COMPACT_AT = 4096
"""The wide scan renumbers its live origins whenever their count has grown by this much."""

_Template: TypeAlias = tuple[int, tuple[tuple[int, int, int], ...], int]
"""A completion remembered by shape: ``(own, ((parent, parent's parent or -1, config), ...),
predicted)`` (see :meth:`_Tables.completed`)."""

_DEEPER: _Template = (-1, (), -1)
"""In the shape table (compared by identity): this shape's completions reach further than it
covers."""


def _deep_shape(frame: Frame, shape: tuple[int, ...]) -> tuple[int, ...] | None:
    """``shape`` extended with the configurations of ``frame``'s parents' frames (``None``
    if one of them has many parents)."""
    parts = list(shape)
    for parent, _ in frame.parents:
        if len(parent.parents) > _SHAPED_PARENTS:
            return None
        parts += (-1, parent.own, len(parent.parents), *[c for _, c in parent.parents])
    return tuple(parts)


def _placed(frame: Frame, template: _Template) -> tuple[int, dict[Frame, int], int] | None:
    """The completion ``template`` made for ``frame`` (``None`` if two of its places are one
    frame here, which the template cannot merge)."""
    own, placed, predicted = template
    parents = frame.parents
    others: dict[Frame, int] = {}
    for index, inner, config in placed:
        parent = parents[index][0]
        others[parent if inner < 0 else parent.parents[inner][0]] = config
    if len(others) != len(placed):
        return None
    return own, others, predicted


_SCANNED, _FAILED, _WIDENED = 0, 1, 2
"""Outcomes of :meth:`Recognizer._run`."""



_SHAPE_NODES = 12
"""A shape with more frames than this is flattened (its frames built, its groups re-anchored)."""

_SHAPE_STEPS = 200_000
"""Above this many remembered steps (and reads), the next chunk starts a fresh
:class:`_ShapeScan`."""

_SHAPE_MISSES = 256
"""A chunk leaves :class:`_ShapeScan` once it computed this many steps more than one per 8
bytes (inputs that meet new shapes all the time, such as a long literal)."""

_UNREAD = -2
"""The ``own`` of a shape node whose frame has not been read yet (its parents are unknown)."""

_Node: TypeAlias = tuple[int, int, tuple[tuple[int, int], ...]]
"""A frame in a shape: ``(group configuration or -1, own configuration or _UNREAD, parents)``,
the parents as ``(node index, configuration)``."""

_Step: TypeAlias = tuple[int, "tuple[int, ...] | _Remap | int | None"]
"""A remembered step: ``(next shape, None)`` when the frames stay as they are, ``(next shape,
mapping)`` where each new node is the old node ``mapping[i]`` (``-1``: a frame predicted
here), ``(-1, _NO_MATCH)`` when the byte is rejected, ``(-1, i)`` when node ``i`` must be read."""

_NO_MATCH = -1


@dataclass(frozen=True)
class _Remap:
    """A step's mapping of nodes where some frames predicted during the scan leave the
    shape's top and are built first (``builds``: their old node indices)."""

    mapping: tuple[int, ...]
    builds: tuple[int, ...]


@dataclass(frozen=True)
class _CountedSkip:
    """Iterations of a counted repetition that only the group of ``node`` can scan."""

    node: int
    core: int  # the repetition's state alone: the rest of the group dies at each iteration
    run: _CountedRun


class _ShapeScan:
    """Whole-input scans over *shapes*: the top of the graph-structured stack, by configuration.

    A shape is a small graph of frames (:data:`_Node`), each known only by configurations: the
    group there, and for frames that have been *read*, the ``own`` configuration and the
    parents. A step's outcome (scan a byte, complete, predict) depends on nothing else, so it is
    computed once per ``(shape, byte)`` and remembered, for any grammar and to any depth: the
    scan itself is a dictionary look-up per byte, with the actual frames (or, for frames
    predicted during the scan, their positions) kept beside the shape in a list.

    When a completion reaches a frame that has not been read, the step asks for it: the frame's
    ``own`` and parents (parents already in the shape found by identity) extend the shape, and
    the step is looked up again. Frames nothing refers to any more leave the shape. A shape with
    more than :data:`_SHAPE_NODES` frames is *flattened*: its frames are built, and the scan
    continues from a shape holding only the groups' frames, unread.
    """

    def __init__(self, tables: _Tables):
        self.tables = tables
        self.ids: dict[tuple[_Node, ...], int] = {}
        self.shapes: list[tuple[_Node, ...]] = []
        self.steps: dict[int, _Step] = {}
        self.reads: dict[tuple[int, int, int, tuple[tuple[int, int], ...]], int] = {}
        self.merged_configs: list[int] = []
        self.sizes: list[int] = []
        self.skips: list[re.Pattern[bytes] | _CountedSkip | None] = []
        self.jumps: dict[tuple[int, int, int], _Step] = {}
        self.misses = 0  # steps and reads computed (not remembered)

    def run(self, data: bytes | memoryview, position: int, groups: dict[Frame, int],
            history: History | None, deadline: float | None = None
            ) -> tuple[int, dict[Frame, int], int]:
        """Scan ``data`` (starting at ``position``) from ``groups``, as ``Recognizer._run``.

        Returns ``(position, groups, outcome)``; :data:`_WIDENED` when the groups become too
        many for shapes (the caller continues with the per-group engine). Raises
        :class:`_Expired` when a step must be computed past ``deadline``.
        """
        state = self._intern(tuple((config, _UNREAD, ()) for config in groups.values()))
        objects: list[Frame | int] = list(groups)
        get, read = self.steps.get, self.reads.get
        sizes, skips = self.sizes, self.skips
        misses = self.misses
        index, stop = 0, len(data)
        while index < stop:
            if history is not None:
                history.append((position + index, self.merged(state)))
            byte = data[index]
            step = get(state << 8 | byte)
            if step is None:
                if self.misses - misses > _SHAPE_MISSES + index // 8:
                    # new shapes every few bytes: the per-group engine does better
                    return position + index, self._groups(state, objects), _WIDENED
                if deadline is not None and time.perf_counter() > deadline:
                    expired = _Expired()
                    expired.position = position + index
                    raise expired
                step = self._step(state, byte)
            following, mapping = step
            index += 1
            if mapping is not None:
                if mapping.__class__ is int:
                    index -= 1
                    if mapping == _NO_MATCH:
                        return position + index, self._groups(state, objects), _FAILED
                    if history is None:  # closing brackets: pop them in one loop
                        objects, moved = self._pops(state, mapping, objects, data, index, stop,
                                                    position)
                        if moved > index:
                            index = moved
                            continue
                    frame = objects[mapping]
                    if len(frame.parents) == 1:  # type: ignore[union-attr]
                        # the common read, inline: one parent, new to the shape
                        ((parent, config),) = frame.parents  # type: ignore[union-attr]
                        found = read(
                            (state, mapping, frame.own, ((len(objects), config),)))  # type: ignore[union-attr]
                        if found is not None and parent not in objects:
                            objects.append(parent)
                            state = found
                            continue
                    state = self._read(state, objects, mapping)
                    continue
                if mapping.__class__ is _Remap:
                    if following == state and history is None:
                        # the same step for each repeat of this byte (``[[[[``): in one loop
                        objects, index = self._repeated(state, mapping, objects, data, index,
                                                        stop, position)
                        continue
                    for j in mapping.builds:
                        self._build(state, objects, j)
                    mapping = mapping.mapping
                at = position + index
                objects = [objects[j] if j >= 0 else at for j in mapping]  # type: ignore[union-attr]
                if sizes[following] > _SHAPE_NODES:
                    groups = self._groups(following, objects)
                    if len(groups) > _SHAPE_NODES // 2:
                        return at, groups, _WIDENED
                    following = self._intern(tuple((config, _UNREAD, ())
                                                   for config in groups.values()))
                    objects = list(groups)
            state = following
            skip = skips[state]
            if skip is not None and index < stop:
                if skip.__class__ is _CountedSkip:
                    state, objects, index = self._counted(state, objects, skip, data, index,
                                                          stop, position)
                else:
                    match = skip.match(data, index)  # type: ignore[union-attr]
                    if match is not None:
                        if history is not None:
                            history.append((position + index, self.merged(state)))
                        index = match.end()
        if history is not None:
            history.append((position + index, self.merged(state)))
        return position + index, self._groups(state, objects), _SCANNED

    def _pops(self, state: int, node: int, objects: list[Frame | int],
              data: bytes | memoryview, index: int, stop: int, position: int
              ) -> tuple[list[Frame | int], int]:
        """While the byte at ``index`` repeats, and reading ``node`` (with one parent) then
        stepping leads back to ``state`` (``]]]]``): do so. ``(objects, index)`` after them."""
        byte = data[index]
        read, get = self.reads.get, self.steps.get
        while index < stop and data[index] == byte:
            frame = objects[node]
            parents = frame.parents  # type: ignore[union-attr]
            if len(parents) != 1:
                break
            ((parent, config),) = parents
            found = read((state, node, frame.own, ((len(objects), config),)))  # type: ignore[union-attr]
            if found is None or parent in objects:
                break
            step = get(found << 8 | byte)
            if step is None or step[0] != state or step[1].__class__ is not tuple:
                break
            objects.append(parent)
            index += 1
            objects = [objects[j] if j >= 0 else position + index
                       for j in step[1]]
        return objects, index

    def _repeated(self, state: int, remap: _Remap, objects: list[Frame | int],
                  data: bytes | memoryview, index: int, stop: int, position: int
                  ) -> tuple[list[Frame | int], int]:
        """Apply ``remap``, a step from ``state`` back to itself on the byte before ``index``,
        for that byte and each repeat of it: ``(objects, index)`` after them."""
        byte = data[index - 1]
        end = index
        while end < stop and data[end] == byte:
            end += 1
        builds, mapping = remap.builds, remap.mapping
        build = self._build
        for at in range(position + index, position + end + 1):
            for j in builds:
                build(state, objects, j)
            objects = [objects[j] if j >= 0 else at for j in mapping]
        return objects, end

    def _counted(self, state: int, objects: list[Frame | int], skip: _CountedSkip,
                 data: bytes | memoryview, index: int, stop: int, position: int
                 ) -> tuple[int, list[Frame | int], int]:
        """Many iterations of a counted repetition at once (see :meth:`_skip`): ``(state,
        objects, index)`` after them."""
        done, end = skip.run.scan(data, index, stop)
        if not done:
            return state, objects, index
        config = self.tables.shifted(skip.core, skip.run.state, done)
        while True:  # the group alone, in its shifted configuration, completed
            key = (state, skip.node, config)
            step = self.jumps.get(key)
            if step is None:
                self.misses += 1
                step = self.jumps[key] = self._closed(self.shapes[state], {skip.node: config})
            following, mapping = step
            if mapping.__class__ is not int:
                break
            state = self._read(state, objects, mapping)
        if mapping is not None:
            if mapping.__class__ is _Remap:
                for j in mapping.builds:
                    self._build(state, objects, j)
                mapping = mapping.mapping
            at = position + end
            objects = [objects[j] if j >= 0 else at for j in mapping]  # type: ignore[union-attr]
        return following, objects, end

    def merged(self, state: int) -> int:
        """The configuration of all item states of ``state``."""
        found = self.merged_configs[state]
        if found < 0:
            found = self.merged_configs[state] = self.tables.merged(
                config for config, _, _ in self.shapes[state] if config >= 0)
        return found

    def _intern(self, shape: tuple[_Node, ...]) -> int:
        found = self.ids.get(shape)
        if found is None:
            found = self.ids[shape] = len(self.shapes)
            self.shapes.append(shape)
            self.sizes.append(len(shape))
            self.merged_configs.append(-1)
            self.skips.append(self._skip(shape))
        return found

    def _skip(self, shape: tuple[_Node, ...]) -> re.Pattern[bytes] | _CountedSkip | None:
        """How runs of bytes are scanned at once in ``shape``: when its groups are all inert, a
        regex for runs leading each back to itself; else, as ``Recognizer._run`` does, the
        iterations of a counted repetition in one group that no other group can start to scan.
        """
        tables = self.tables
        live = [(i, config) for i, (config, _, _) in enumerate(shape) if config >= 0]
        if not live:
            return None
        if len(live) > 1 and all(tables.inert[config] for _, config in live):
            return tables.loop_pattern(tuple(sorted(config for _, config in live)))
        if len(live) == 1 and tables.inert[live[0][1]]:
            pattern = tables.loop_pattern(live[0][1])
            if pattern is not None:
                return pattern
        counted = [(i, core, run) for i, config in live for core in tables.cores(config)
                   if (run := tables.counted_run(core)) is not None]
        if len(counted) != 1:
            return None
        ((node, core, run),) = counted
        others = 0  # what else could scan: other groups, and the rest of the run's group
        for i, config in live:
            others |= tables.first_bits(tables.difference(config, core) if i == node else config)
        return None if run.first & others else _CountedSkip(node, core, run)

    def _groups(self, state: int, objects: list[Frame | int]) -> dict[Frame, int]:
        """The groups of ``state``, with the frames it predicted built."""
        return {self._build(state, objects, i): config
                for i, (config, _, _) in enumerate(self.shapes[state]) if config >= 0}

    def _build(self, state: int, objects: list[Frame | int], node: int) -> Frame:
        """The frame of ``node`` in ``state``, built (in ``objects``) if it was predicted
        during the scan (its parents are in the shape, and built first)."""
        found = objects[node]
        if found.__class__ is Frame:
            return found
        _, own, parents = self.shapes[state][node]
        built = []
        for j, config in parents:
            parent = objects[j]
            if parent.__class__ is not Frame:
                parent = self._build(state, objects, j)
            built.append((parent, config))
        made = objects[node] = Frame(found, tuple(built), own)  # type: ignore[arg-type]
        return made

    def _read(self, state: int, objects: list[Frame | int], node: int) -> int:
        """``state`` with the frame of ``node`` read; ``objects`` gains its new parents."""
        frame = objects[node]
        assert frame.__class__ is Frame
        parents = []
        for parent, config in frame.parents:
            if parent in objects:  # frames compare by identity
                j = objects.index(parent)
            else:
                j = len(objects)
                objects.append(parent)
            parents.append((j, config))
        key = (state, node, frame.own, tuple(parents))
        found = self.reads.get(key)
        if found is None:
            self.misses += 1
            shape = list(self.shapes[state])
            shape[node] = (shape[node][0], key[2], key[3])
            shape += [(-1, _UNREAD, ())] * (len(objects) - len(shape))
            found = self.reads[key] = self._intern(tuple(shape))
        return found

    def _step(self, state: int, byte: int) -> _Step:
        """Scan ``byte`` in ``state``, complete and predict (see ``_Tables.complete``)."""
        self.misses += 1
        tables = self.tables
        shape = self.shapes[state]
        kernel: dict[int, int] = {}
        for i, (config, _, _) in enumerate(shape):
            if config >= 0:
                target = tables._row(config)[byte]
                if target >= 0:
                    kernel[i] = target
        step: _Step
        if not kernel:
            step = (-1, _NO_MATCH)
        else:
            step = self._closed(shape, kernel)
        self.steps[state << 8 | byte] = step
        return step

    def _closed(self, shape: tuple[_Node, ...], kernel: dict[int, int]) -> _Step:
        tables = self.tables
        completes, union = tables.completes, tables.union
        groups: dict[int, int] = {}
        pending = list(kernel.items())
        predicted = -1
        while pending:
            i, config = pending.pop()
            old = groups.get(i)
            if old is not None:
                merged = union(old, config)
                if merged == old:
                    continue
                groups[i] = merged
                config = tables.difference(config, old)
            else:
                groups[i] = config
            p = tables.predicted(config)
            if p >= 0:
                predicted = p if predicted < 0 else union(predicted, p)
            for rule in completes[config]:
                _, own, parents = shape[i]
                if own == _UNREAD:
                    return (-1, i)
                entries = [(j, tables.returns(c).get(rule)) for j, c in parents]
                entries.append((i, tables.returns(own).get(rule)))
                for j, target in entries:
                    if target is None:
                        continue
                    present = groups.get(j)
                    if present is None or union(present, target) != present:
                        pending.append((j, target))
        live = {i: c for i, c in groups.items() if not tables.dead(c)}
        callers = tuple((i, c) for i, c in live.items() if tables.predicted(c) != -1)
        # the groups' frames, and their parents unread (frames predicted here are built)
        kept = set(live)
        for i in live:
            kept.update(j for j, _ in shape[i][2])
        order = sorted(kept)
        number = {old: new for new, old in enumerate(order)}
        nodes: list[_Node] = []
        builds = []
        for i in order:
            config = live.get(i, -1)
            _, own, parents = shape[i]
            if config >= 0:
                nodes.append((config, own, tuple((number[j], c) for j, c in parents)))
            else:
                nodes.append((-1, _UNREAD, ()))
                if own != _UNREAD:
                    builds.append(i)
        mapping: tuple[int, ...] | _Remap | None = tuple(order)
        if predicted >= 0:
            nodes.append((predicted, predicted, tuple((number[i], c) for i, c in callers)))
            mapping = (*order, -1)
        elif len(order) == len(shape) and not builds:
            mapping = None
        if builds:
            mapping = _Remap(mapping, tuple(builds))  # type: ignore[arg-type]
        return self._intern(tuple(nodes)), mapping


class _WideScan:
    """The rest of a whole-input scan where many origins are live: one bitset of them per state.

    With an ambiguous grammar (``x ::= x x | "a"``) nearly every earlier position is the origin
    of some item, and the main engine's per-origin groups complete the same rules once per
    origin, in Python. Here the items of a position are ``{state: origins}``, the origins an
    ``int`` used as a bitset over origin numbers. Completing a rule for a set of origins ORs,
    per origin, the bitsets of the items waiting there; each item ``(state, origin)`` enters a
    set once, only origins new to a final state are completed (so each ``(rule, origin)`` is
    completed once per set), and calls of nullable rules are stepped over at once (Aycock &
    Horspool), so an origin never completes where it starts. Time is cubic in the input length
    at worst, as for Earley's algorithm, with a small constant.

    The scan starts from the main engine's groups: their frames become origins, whose waiting
    items are read from their ``parents`` and ``own`` configurations.
    """

    def __init__(self, tables: _Tables, groups: dict[Frame, int]):
        self.tables = tables
        self.frame_ids: dict[Frame, int] = {}
        # per origin number: a frame of the main engine, or the items of a position scanned
        # here, until its waiting items are loaded into ``waiting`` (then None)
        self.origins: list[Frame | dict[int, int] | None] = []
        self.unloaded = 0  # bitset of the origins whose waiting items are not loaded yet
        # per called rule and state after the call: origin number -> origins of those items
        self.waiting: dict[int, dict[int, dict[int, int]]] = {}
        self.rows: dict[int, list[int]] = {}
        self.items: dict[int, int] = {}
        self.compact_at = _COMPACT_AT  # renumber the live origins once there are this many
        for frame, config in groups.items():
            bit = 1 << self._frame_id(frame)
            for state in tables.configs[config]:
                self.items[state] = self.items.get(state, 0) | bit

    def config(self) -> int:
        """The configuration of the current items' states."""
        return self.tables.closed_config(self.items)

    def run(self, data: bytes, start: int, history: History | None,
            deadline: float | None) -> tuple[int, bool]:
        """Scan ``data`` from ``start`` to its end: ``(position, failed)``.

        On failure, ``position`` is that of the byte that could not be scanned and ``items``
        those before it. Raises :class:`_Expired` once past ``deadline``.
        """
        for position in range(start, len(data)):
            if history is not None:
                history.append((position, self.config()))
            if deadline is not None and time.perf_counter() > deadline:
                expired = _Expired()
                expired.position = position
                raise expired
            kernel: dict[int, int] = {}
            byte = data[position]
            for state, origins in self.items.items():
                target = self._row(state)[byte]
                if target >= 0:
                    kernel[target] = kernel.get(target, 0) | origins
            if not kernel:
                return position, True
            own = len(self.origins)
            self.origins.append(None)
            self.unloaded |= 1 << own
            try:
                self.items = self._close(kernel, own, deadline)
            except _Expired as expired:
                expired.position = position + 1
                raise
            self.origins[own] = self.items
            if len(self.origins) >= self.compact_at:
                self._compact()
        if history is not None:
            history.append((len(data), self.config()))
        return len(data), False

    def _close(self, kernel: dict[int, int], own: int, deadline: float | None
               ) -> dict[int, int]:
        """The items of the position numbered ``own``, from the items just scanned there."""
        tables = self.tables
        g = tables.g
        closure_of, predict_of = tables._closure_of, tables._predict_of
        finals, state_rule, call_edges = g.finals, g.state_rule, g.call_edges
        pseudo_rule = tables.pseudo_rule
        not_own = ~(1 << own)
        items: dict[int, int] = {}
        predicted: set[int] = set()
        predicting: set[int] = set()
        pending = list(kernel.items())
        countdown = _DEADLINE_EVERY
        while pending:
            start, origins = pending.pop()
            for state in closure_of(start):
                old = items.get(state, 0)
                new = origins & ~old
                if not new:
                    continue
                items[state] = old | new
                if state in finals and state_rule[state] != pseudo_rule:
                    new &= not_own  # completions at their origin: nullable calls, stepped over
                    if new:
                        countdown -= new.bit_count()
                        if countdown <= 0:
                            countdown = _DEADLINE_EVERY
                            if deadline is not None and time.perf_counter() > deadline:
                                raise _Expired
                        pending.extend(self._completed(state_rule[state], new).items())
                if state not in predicting and call_edges[state]:
                    predicting.add(state)
                    predicted |= predict_of(state)
        bit = 1 << own
        for state in predicted:
            items[state] = items.get(state, 0) | bit
        return items

    def _completed(self, rule: int, bits: int) -> dict[int, int]:
        """Where items continue once ``rule`` completes for each of the origins in ``bits``."""
        if self.unloaded & bits:
            for origin in _bit_indices(self.unloaded & bits):
                self._load(origin)
        origins = _bit_indices(bits)
        found = {}
        for target, column in self.waiting.get(rule, {}).items():
            targets = reduce(or_, map(column.get, origins, repeat(0)), 0)
            if targets:
                found[target] = targets
        return found

    def _load(self, origin: int) -> None:
        """Enter the items calling a rule at ``origin`` into ``waiting``."""
        source = self.origins[origin]
        self.origins[origin] = None
        self.unloaded &= ~(1 << origin)
        configs = self.tables.configs
        call_edges = self.tables.g.call_edges
        waiting = self.waiting
        calling: list[tuple[Iterable[int], int]]
        if isinstance(source, Frame):
            calling = [(configs[config], 1 << self._frame_id(parent))
                       for parent, config in source.parents]
            calling.append((configs[source.own], 1 << origin))
        else:
            assert source is not None
            calling = [((state,), bits) for state, bits in source.items()]
        for states, bits in calling:
            for state in states:
                for rule, target in call_edges[state]:
                    column = waiting.setdefault(rule, {}).setdefault(target, {})
                    column[origin] = column.get(origin, 0) | bits

    def _compact(self) -> None:
        """Forget the origins no item can reach any more and number the others from 0.

        An origin stays reachable while some item has it, or waits at a reachable origin.
        Without this, a long input after an ambiguous stretch would keep every position's
        items, and bitsets as wide as the input (quadratic memory).
        """
        live = 0
        for bits in self.items.values():
            live |= bits
        columns = [column for per_rule in self.waiting.values() for column in per_rule.values()]
        fresh = live
        while fresh:
            reached = 0
            for origin in _bit_indices(fresh):
                source = self.origins[origin]
                if isinstance(source, dict):
                    for bits in source.values():
                        reached |= bits
                elif source is None:  # loaded
                    for column in columns:
                        reached |= column.get(origin, 0)
            fresh = reached & ~live
            live |= reached
        kept = _bit_indices(live)
        number = {old: new for new, old in enumerate(kept)}

        def renumbered(bits: int) -> int:
            result = 0
            for old in _bit_indices(bits):
                result |= 1 << number[old]
            return result

        self.items = {state: renumbered(bits) for state, bits in self.items.items()}
        origins = [self.origins[old] for old in kept]
        self.origins = [{state: renumbered(bits) for state, bits in source.items()}
                        if isinstance(source, dict) else source for source in origins]
        self.unloaded = renumbered(self.unloaded & live)
        for per_rule in self.waiting.values():
            for target, column in per_rule.items():
                per_rule[target] = {number[old]: renumbered(bits)
                                    for old, bits in column.items() if old in number}
        self.frame_ids = {frame: number[old] for frame, old in self.frame_ids.items()
                          if old in number}
        self.compact_at = max(2 * len(kept), len(kept) + _COMPACT_AT)

    def _frame_id(self, frame: Frame) -> int:
        found = self.frame_ids.get(frame)
        if found is None:
            found = self.frame_ids[frame] = len(self.origins)
            self.origins.append(frame)
            self.unloaded |= 1 << found
        return found

    def _row(self, state: int) -> list[int]:
        """The state each byte leads ``state`` to (``-1``: none)."""
        row = self.rows.get(state)
        if row is None:
            row = self.rows[state] = [-1] * 256
            for lo, hi, target in self.tables.g.byte_edges[state]:
                row[lo:hi + 1] = [target] * (hi + 1 - lo)
        return row


def _bit_indices(bits: int) -> list[int]:
    """The indices of the set bits of ``bits`` (non-negative), in increasing order."""
    if not bits & (bits - 1):
        return [bits.bit_length() - 1] if bits else []
    import numpy as np  # lazily, as everywhere in the automata (a core dependency)

    packed = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8, "little"), np.uint8)
    indices: list[int] = np.flatnonzero(np.unpackbits(packed, bitorder="little")).tolist()
    return indices


class _Tables:
    """Per-grammar memo tables: interned configurations and their properties.

    A configuration number ``c`` indexes ``configs`` (its states), ``rows`` (byte steps, built by
    :meth:`build_row`), ``inert`` (no calls and no completions), ``accepting`` (contains the
    accept state) and ``completes`` (rules with a final state in it). Every list only grows, so
    numbers stay valid while the tables live; the token-mask decoder shares them.
    """

    def __init__(self, compiled: CompiledGrammar):
        self.g = compiled
        self.pseudo_rule = compiled.num_rules
        self.configs: list[frozenset[int]] = []
        self.index: dict[frozenset[int], int] = {}
        self.rows: list[list[int] | None] = []
        self._runs: list[list[tuple[int, int, int]] | None] = []
        self.inert: list[bool] = []
        self.accepting: list[bool] = []
        self.completes: list[tuple[int, ...]] = []
        self._predicted: list[int] = []  # -2: not computed yet, -1: nothing predicted
        self._returns: list[dict[int, int] | None] = []
        self._state_closure: dict[int, frozenset[int]] = {}
        self._state_predict: dict[int, frozenset[int]] = {}
        self._unions: dict[tuple[int, int], int] = {}
        self._differences: dict[tuple[int, int], int] = {}
        self._loops: dict[int | tuple[int, ...], re.Pattern[bytes] | None] = {}
        self._stable: dict[int, re.Pattern[bytes] | None] = {}
        self._pushes: dict[int, re.Pattern[bytes] | None] = {}
        self._counted: dict[int, _CountedRun | None] = {}
        self._first_bits: dict[int, int] = {}
        self._added_scans: dict[tuple[int, int], int | None] = {}
        self._shapes: dict[tuple[int, ...], _Template] = {}
        self._dead: dict[int, bool] = {}
        self._cores: dict[int, tuple[int, ...]] = {}
        self._shape_scan: _ShapeScan | None = None

    def shape_scan(self) -> _ShapeScan:
        """The shape memo of whole-input scans over these tables: made on first use, and made
        afresh once it remembers more than :data:`_SHAPE_STEPS` steps (a scan in progress
        keeps the one it started a chunk with)."""
        found = self._shape_scan
        if found is None or len(found.steps) + len(found.reads) + len(found.jumps) > _SHAPE_STEPS:
            found = self._shape_scan = _ShapeScan(self)
        return found

    def cores(self, config: int) -> tuple[int, ...]:
        """The configuration of each state of ``config`` that has edges, alone (closed)."""
        found = self._cores.get(config)
        if found is None:
            g = self.g
            found = self._cores[config] = tuple(
                self.closed_config((s,)) for s in sorted(self.configs[config])
                if g.byte_edges[s] or g.call_edges[s] or g.token_edges[s])
        return found

    def dead(self, config: int) -> bool:
        """Whether a group in ``config`` can neither scan, call nor accept (once completed)."""
        found = self._dead.get(config)
        if found is None:
            found = self._dead[config] = (not self.accepting[config]
                                          and self.predicted(config) == -1
                                          and not self.runs(config))
        return found

    # -- configurations --------------------------------------------------------------------------
    def closed_config(self, states: Iterable[int]) -> int:
        """The configuration of ``states`` closed under nullable steps (not predictions)."""
        closed: set[int] = set()
        for s in states:
            closed |= self._closure_of(s)
        return self._intern(frozenset(closed))

    def _intern(self, states: frozenset[int]) -> int:
        found = self.index.get(states)
        if found is not None:
            return found
        g = self.g
        number = len(self.configs)
        self.configs.append(states)
        self.index[states] = number
        self.rows.append(None)
        self._runs.append(None)
        completes = tuple(sorted({g.state_rule[s] for s in states if s in g.finals}
                                 - {self.pseudo_rule}))
        self.completes.append(completes)
        self.accepting.append(g.accept_state in states)
        has_calls = any(g.call_edges[s] for s in states)
        self.inert.append(not completes and not has_calls)
        self._predicted.append(-2 if has_calls else -1)
        self._returns.append(None if has_calls else {})
        return number

    def union(self, a: int, b: int) -> int:
        if a == b:
            return a
        key = (a, b) if a < b else (b, a)
        found = self._unions.get(key)
        if found is None:
            found = self._unions[key] = self._intern(self.configs[a] | self.configs[b])
        return found

    def difference(self, a: int, b: int) -> int:
        """The configuration of the states of ``a`` not in ``b`` (not closed in general)."""
        key = (a, b)
        found = self._differences.get(key)
        if found is None:
            found = self._differences[key] = self._intern(self.configs[a] - self.configs[b])
        return found

    def merged(self, configs: Iterable[int]) -> int:
        states: frozenset[int] = frozenset()
        for config in configs:
            states |= self.configs[config]
        return self._intern(states)

    def predicted(self, config: int) -> int:
        """The configuration of the rules ``config`` calls (at the current position)."""
        found = self._predicted[config]
        if found == -2:
            states: set[int] = set()
            for s in self.configs[config]:
                states |= self._predict_of(s)
            found = self._intern(frozenset(states)) if states else -1
            self._predicted[config] = found
        return found

    def callers(self, groups: dict[Frame, int]) -> tuple[tuple[Frame, int], ...]:
        """The groups that call rules: the parents of a frame predicted with them.

        The others can never continue a rule started there; leaving them out keeps the
        finished groups of a long run of closing brackets from chaining frames together.
        """
        predicted = self._predicted
        return tuple((frame, config) for frame, config in groups.items()
                     if predicted[config] != -1)

    def returns(self, config: int) -> dict[int, int]:
        """For each rule ``config`` calls: the configuration reached once it completes."""
        found = self._returns[config]
        if found is None:
            targets: dict[int, set[int]] = {}
            for s in self.configs[config]:
                for rule, target in self.g.call_edges[s]:
                    targets.setdefault(rule, set()).add(target)
            found = {rule: self.closed_config(states) for rule, states in targets.items()}
            self._returns[config] = found
        return found

    def waiting(self, frame: Frame, rule: int) -> tuple[tuple[Frame | None, int], ...]:
        """Where items continue when ``rule``, started at ``frame``, completes.

        ``None`` stands for ``frame`` itself (so frames hold no reference cycles). Memoized on
        frames with many parents only: the frames of a deep document's stack keep no tables.
        """
        memo = frame.waiting
        if memo is None:
            memo = {}
            if len(frame.parents) > _SHAPED_PARENTS:
                frame.waiting = memo
        found = memo.get(rule)
        if found is None:
            entries: list[tuple[Frame | None, int]] = []
            for parent, config in frame.parents:
                target = self.returns(config).get(rule)
                if target is not None:
                    entries.append((parent, target))
            target = self.returns(frame.own).get(rule)
            if target is not None:
                entries.append((None, target))
            found = memo[rule] = tuple(entries)
        return found

    def completed(self, frame: Frame, config: int, deadline: float | None = None
                  ) -> tuple[int, dict[Frame, int], int]:
        """The group ``(frame, config)`` after completions.

        Returns ``(frame's configuration, other groups, predicted configuration or -1)``.
        Memoized per *shape* (``config`` and the configurations of a frame with few parents,
        and of their parents where completions reach that far) where the result is the same
        for every frame of that shape, else on the frame.
        """
        shape = None
        if len(frame.parents) <= _SHAPED_PARENTS:
            shape = (config, frame.own, *[c for _, c in frame.parents])
            template = self._shapes.get(shape)
            if template is _DEEPER:
                shape = _deep_shape(frame, shape)
                template = self._shapes.get(shape) if shape is not None else None
            if template is not None and template is not _DEEPER:
                found = _placed(frame, template)
                if found is not None:
                    return found
        memo = frame.completed
        if memo is None:
            memo = frame.completed = {}
        found = memo.get(config)
        if found is None:
            complete, predicted = self.complete({frame: config}, deadline)
            own = complete.pop(frame)  # kept apart: frames hold no reference cycles
            found = memo[config] = (own, complete, predicted)
            if (shape is not None and shape not in self._shapes
                    and self._remember_shape(shape, frame, found)):
                frame.completed = None
        return found

    def _remember_shape(self, shape: tuple[int, ...], frame: Frame,
                        found: tuple[int, dict[Frame, int], int]) -> bool:
        """Keep a completion of ``frame`` for every frame of the same ``shape``.

        Valid when it reached only ``frame``'s parents and completed nothing there, or, for a
        shape that covers the parents' parents (see :func:`_deep_shape`), reached no further
        than those and completed nothing there: then it read no more than the configurations in
        ``shape`` (a deep document's closing brackets each pop frames of a few shapes).
        Returns whether it was kept.
        """
        own, others, predicted = found
        deep = len(shape) > 2 + len(frame.parents)
        placed: list[tuple[int, int, int]] = []
        for index, (parent, _) in enumerate(frame.parents):
            config = others.get(parent)
            if config is not None:
                if self.completes[config] and not deep:
                    placed = []
                    break
                placed.append((index, -1, config))
        if deep:
            seen = set(others) & {parent for parent, _ in frame.parents}
            for index, (parent, _) in enumerate(frame.parents):
                for inner, (grand, _) in enumerate(parent.parents):
                    config = others.get(grand)
                    if config is None:
                        continue
                    if grand in seen or self.completes[config]:
                        self._shapes[shape] = _DEEPER  # never kept: reaches further
                        return False
                    seen.add(grand)
                    placed.append((index, inner, config))
        if len(placed) != len(others):
            if not deep:
                self._shapes[shape] = _DEEPER
                deeper = _deep_shape(frame, shape)
                if deeper is not None and deeper not in self._shapes:
                    return self._remember_shape(deeper, frame, found)
            else:
                self._shapes[shape] = _DEEPER
            return False
        self._shapes[shape] = (own, tuple(placed), predicted)
        return True

    def added_scans(self, own: int, config: int) -> int | None:
        """The bytes the states ``own`` adds to ``config`` can scan (a 256-bit int), or
        ``None`` if ``own`` does not hold all of ``config``."""
        if own == config:
            return 0
        key = (own, config)
        found = self._added_scans.get(key, -1)
        if found == -1:
            found = self._added_scans[key] = (
                self.first_bits(self.difference(own, config))
                if self.configs[config] <= self.configs[own] else None)
        return found

    def scannable(self, groups: dict[Frame, int], predicted: int) -> int:
        """The bytes some of ``groups`` or ``predicted`` can scan, as a 256-bit int."""
        bits = self.first_bits(predicted) if predicted >= 0 else 0
        for config in groups.values():
            bits |= self.first_bits(config)
        return bits

    def first_bits(self, config: int) -> int:
        """The bytes ``config`` can scan, as a 256-bit int."""
        found = self._first_bits.get(config)
        if found is None:
            found = 0
            for lo, hi, _ in self.runs(config):
                found |= ((1 << (hi + 1 - lo)) - 1) << lo
            self._first_bits[config] = found
        return found

    def close(self, kernel: dict[Frame, int], position: int, deadline: float | None = None
              ) -> dict[Frame, int]:
        """Complete and predict from ``kernel`` (the groups after scanning a byte).

        Raises :class:`_Expired` once past ``deadline`` (a ``time.perf_counter()`` value).
        """
        if len(kernel) == 1:
            ((frame, config),) = kernel.items()
            if not self.completes[config]:
                predicted = self.predicted(config)
                if predicted < 0:
                    return kernel
                return {frame: config,
                        Frame(position, ((frame, config),), predicted): predicted}
        groups, predicted = self.complete(kernel, deadline)
        if predicted >= 0:
            groups[Frame(position, self.callers(groups), predicted)] = predicted
        return groups

    def complete(self, kernel: dict[Frame, int], deadline: float | None = None
                 ) -> tuple[dict[Frame, int], int]:
        """``kernel`` with every completion done, and the configuration it predicts (or -1).

        The result does not depend on the position, only on the kernel and its frames. Raises
        :class:`_Expired` once past ``deadline`` (checked every few thousand items).
        """
        completes = self.completes
        groups: dict[Frame, int] = {}
        pending: list[tuple[Frame, int]] = list(kernel.items())
        predicted = -1
        countdown = _DEADLINE_EVERY
        while pending:
            countdown -= 1
            if countdown <= 0:
                countdown = _DEADLINE_EVERY
                if deadline is not None and time.perf_counter() > deadline:
                    raise _Expired
            frame, config = pending.pop()
            old = groups.get(frame)
            if old is not None:
                merged = self.union(old, config)
                if merged == old:
                    continue
                groups[frame] = merged
                config = self.difference(config, old)  # only new states complete or predict
            else:
                groups[frame] = config
            p = self.predicted(config)
            if p >= 0:
                predicted = p if predicted < 0 else self.union(predicted, p)
            for rule in completes[config]:
                entries = self.waiting(frame, rule)
                countdown -= len(entries)
                for parent, target in entries:
                    parent = parent or frame
                    present = groups.get(parent)
                    if present is None or self.union(present, target) != present:
                        pending.append((parent, target))
        return groups, predicted

    # -- byte steps --------------------------------------------------------------------------
    def build_row(self, config: int) -> list[int]:
        """The configurations reached from ``config`` by each byte (``-1``: rejected)."""
        states = self.configs[config]
        row = [-1] * 256
        runs: list[tuple[int, int, int]] = []
        if len(states) == 1:  # one deterministic automaton: its ranges are disjoint
            (state,) = states
            parts: Sequence[tuple[int, int, Iterable[int]]] = [
                (lo, hi, (t,)) for lo, hi, t in self.g.byte_edges[state]]
        else:
            parts = split_ranges([e for s in states for e in self.g.byte_edges[s]])
        for lo, hi, targets in parts:
            target = self.closed_config(targets)
            row[lo:hi + 1] = [target] * (hi + 1 - lo)
            if runs and runs[-1][2] == target and runs[-1][1] + 1 == lo:
                runs[-1] = (runs[-1][0], hi, target)
            else:
                runs.append((lo, hi, target))
        self.rows[config] = row
        self._runs[config] = runs
        return row

    def runs(self, config: int, lo: int = 0, hi: int = 0xFF) -> list[tuple[int, int, int]]:
        """Maximal byte ranges within ``lo..hi`` leading ``config`` to one configuration each."""
        found = self._runs[config]
        if found is None:
            self.build_row(config)
            found = self._runs[config]
            assert found is not None
        if lo == 0 and hi == 0xFF:
            return found
        return [(max(a, lo), min(b, hi), t) for a, b, t in found if a <= hi and b >= lo]

    def _row(self, config: int) -> list[int]:
        row = self.rows[config]
        return row if row is not None else self.build_row(config)

    def loop_pattern(self, key: int | tuple[int, ...]) -> re.Pattern[bytes] | None:
        """A regex for runs of input leading each inert configuration of ``key`` to itself.

        For a single configuration the runs may pass through other inert configurations, so
        the multi-byte characters of a string body are skipped as well as ASCII. ``None`` when
        there is nothing to skip.
        """
        if key in self._loops:
            return self._loops[key]
        if isinstance(key, int):
            pattern = self._cycles(key)
        else:
            allowed = set(range(256))
            for c in key:
                row = self._row(c)
                allowed &= {b for b in range(256) if row[b] == c}
            pattern = re.compile(_byte_class(allowed) + b"+") if allowed else None
        self._loops[key] = pattern
        return pattern

    def stable_pattern(self, config: int) -> re.Pattern[bytes] | None:
        """Bytes that keep ``config`` and that none of the rules it predicts can start with.

        Over such a run (whitespace before a value, say) the state keeps its shape: ``config``
        in its group plus the same predictions, made afresh at the run's end.
        """
        if config in self._stable:
            return self._stable[config]
        row, predicted_row = self._row(config), self._row(self.predicted(config))
        allowed = {b for b in range(256) if row[b] == config and predicted_row[b] < 0}
        pattern = re.compile(_byte_class(allowed) + b"+") if allowed else None
        self._stable[config] = pattern
        return pattern

    def push_pattern(self, config: int) -> re.Pattern[bytes] | None:
        """Bytes that only the rules ``config`` predicts can scan, and that lead them back to
        ``config``: each starts the same rules one level deeper (``[`` in ``[[[[``)."""
        if config in self._pushes:
            return self._pushes[config]
        predicted = self.predicted(config)
        pattern = None
        if predicted >= 0:
            row, predicted_row = self._row(config), self._row(predicted)
            allowed = {b for b in range(256) if row[b] < 0 and predicted_row[b] == config}
            pattern = re.compile(_byte_class(allowed) + b"+") if allowed else None
        self._pushes[config] = pattern
        return pattern

    def _cycles(self, config: int) -> re.Pattern[bytes] | None:
        """Byte paths of at most 4 bytes from ``config`` back to it through inert configs."""
        single, paths = self._paths(config, config, utf8_only=True)
        branches = [_path_regex(path) for path in paths]
        if single:
            branches.insert(0, _byte_class(single))
        if not branches:
            return None
        return re.compile(b"(?:" + b"|".join(branches) + b")+")

    def counted_run(self, config: int) -> _CountedRun | None:
        """How to scan many iterations of a counted repetition from inert ``config`` at once.

        ``None`` unless ``config`` has one state with edges, lazily built, whose next
        iterations all behave alike (:meth:`CompiledGrammar.run_limit`) and return to it, count
        raised by one, through inert configurations.
        """
        if config in self._counted:
            return self._counted[config]
        found = None
        g = self.g
        active = [s for s in self.configs[config]
                  if g.byte_edges[s] or g.call_edges[s] or g.token_edges[s]]
        if len(active) == 1:
            (state,) = active
            limit = g.run_limit(state)
            if limit is not None:
                single, paths = self._paths(config, self.shifted(config, state, 1))
                first = sum(1 << b for b in single) | sum(
                    ((1 << (hi + 1 - lo)) - 1) << lo for (lo, hi), *_ in paths)
                if single and not paths:
                    found = _CountedRun(state, limit, re.compile(_byte_class(single) + b"+"),
                                        True, first)
                elif single or paths:
                    branches = [_path_regex(path) for path in paths]
                    if single:
                        branches.insert(0, _byte_class(single))
                    found = _CountedRun(state, limit, re.compile(b"|".join(branches)), False,
                                        first)
        self._counted[config] = found
        return found

    def shifted(self, config: int, state: int, iterations: int) -> int:
        """``config`` with ``state`` shifted by ``iterations`` (see ``CompiledGrammar.shifted``)."""
        return self.closed_config([self.g.shifted(state, iterations)]
                                  + [s for s in self.configs[config] if s != state])

    def _paths(self, source: int, target: int, utf8_only: bool = False
               ) -> tuple[set[int], list[_Path]]:
        """Byte paths from ``source`` to ``target`` through inert configs: single bytes, and
        paths of 2 to 4 byte ranges (none when there are more than :data:`_MAX_CYCLES`).

        With ``utf8_only``, longer paths are only those of multi-byte UTF-8 characters (which
        keeps the search small where every byte leads to a new configuration).
        """
        single: set[int] = set()
        paths: list[_Path] = []
        stack: list[tuple[int, _Path]] = [(source, ())]
        while stack and len(paths) <= _MAX_CYCLES:
            current, prefix = stack.pop()
            for lo, hi, reached in self.runs(current, 0x80 if prefix and utf8_only else 0,
                                             0xBF if prefix and utf8_only else 0xFF):
                if reached == target:
                    if prefix:
                        paths.append((*prefix, (lo, hi)))
                    else:
                        single.update(range(lo, hi + 1))
                    continue
                if utf8_only and not prefix:
                    lo = max(lo, 0xC0)
                if lo <= hi and len(prefix) < 3 and self.inert[reached]:
                    stack.append((reached, (*prefix, (lo, hi))))
        if len(paths) > _MAX_CYCLES:
            paths = []
        return single, paths

    # -- closures of single states -----------------------------------------------------------
    def _closure_of(self, state: int) -> frozenset[int]:
        """``state`` and what follows it through calls of nullable rules."""
        found = self._state_closure.get(state)
        if found is None:
            g = self.g
            seen = {state}
            stack = [state]
            while stack:
                for rule, target in g.call_edges[stack.pop()]:
                    if rule in g.nullable and target not in seen:
                        seen.add(target)
                        stack.append(target)
            found = self._state_closure[state] = frozenset(seen)
        return found

    def _predict_of(self, state: int) -> frozenset[int]:
        """The items (all starting here) that calls from ``state`` predict, transitively."""
        found = self._state_predict.get(state)
        if found is None:
            g = self.g
            seen: set[int] = set()
            stack: list[int] = []
            for s in self._closure_of(state):
                for rule, _ in g.call_edges[s]:
                    start = g.rule_start[rule]
                    if start not in seen:
                        seen.add(start)
                        stack.append(start)
            while stack:
                for rule, target in g.call_edges[stack.pop()]:
                    start = g.rule_start[rule]
                    if start not in seen:
                        seen.add(start)
                        stack.append(start)
                    if rule in g.nullable and target not in seen:
                        seen.add(target)
                        stack.append(target)
            found = self._state_predict[state] = frozenset(seen)
        return found

    # -- explanations ------------------------------------------------------------------------
    def describe_expected(self, config: int) -> tuple[str, ...]:
        """What may follow in ``config``, as short human-readable strings."""
        codepoints, any_byte = self._expected_codepoints(config)
        items = _describe_codepoints(codepoints) if not any_byte else ["any byte"]
        if self.accepting[config]:
            items.append("end of input")
        return tuple(items)

    def _expected_codepoints(self, config: int) -> tuple[utf8.CodepointRanges, bool]:
        """Code points whose whole encoding can be scanned from ``config``; any raw byte?"""
        memo: dict[tuple[int, int], list[tuple[int, int]]] = {}
        ranges: list[tuple[int, int]] = []
        any_byte = False
        for lo, hi, target in self.runs(config):
            for first in range(lo, hi + 1):
                lead = utf8.decode_lead(first)
                if lead is None:
                    any_byte = True
                    continue
                payload, length = lead
                scale = 64 ** length
                for a, b in self._continuations(target, length, memo):
                    ranges.append((payload * scale + a, payload * scale + b))
        return utf8.normalize(ranges), any_byte

    def _continuations(self, config: int, depth: int,
                       memo: dict[tuple[int, int], list[tuple[int, int]]]
                       ) -> list[tuple[int, int]]:
        """Values of ``depth`` continuation bytes scannable from ``config`` (as 6-bit digits)."""
        if depth == 0:
            return [(0, 0)]
        key = (config, depth)
        if key in memo:
            return memo[key]
        result: list[tuple[int, int]] = []
        scale = 64 ** (depth - 1)
        for lo, hi, target in self.runs(config, 0x80, 0xBF):
            inner = self._continuations(target, depth - 1, memo)
            if inner == [(0, scale - 1)]:
                result.append(((lo - 0x80) * scale, (hi - 0x80 + 1) * scale - 1))
                continue
            for byte in range(lo, hi + 1):
                base = (byte - 0x80) * scale
                result.extend((base + a, base + b) for a, b in inner)
        memo[key] = result = list(utf8.normalize(result))
        return result


@dataclass(frozen=True)
class _CountedRun:
    """Iterations of a counted repetition scanned by a regex (see :meth:`_Tables.counted_run`).

    ``pattern`` matches one iteration, or, when ``single_bytes``, a run of one-byte iterations;
    ``first`` holds the bytes an iteration can start with (a 256-bit int).
    """

    state: int
    limit: int
    pattern: re.Pattern[bytes]
    single_bytes: bool
    first: int

    def scan(self, data: bytes | memoryview, start: int, stop: int) -> tuple[int, int]:
        """``(iterations, end index)`` of the longest run of whole iterations at ``start``."""
        if self.single_bytes:
            match = self.pattern.match(data, start, stop)
            if match is None:
                return 0, start
            done = min(match.end() - start, self.limit)
            return done, start + done
        done, index = 0, start
        match_at = self.pattern.match
        while done < self.limit:
            match = match_at(data, index, stop)
            if match is None:
                break
            done += 1
            index = match.end()
        return done, index


_TABLES: weakref.WeakKeyDictionary[CompiledGrammar, _Tables] = weakref.WeakKeyDictionary()


def _tables_for(compiled: CompiledGrammar) -> _Tables:
    tables = _TABLES.get(compiled)
    if tables is None:
        tables = _TABLES[compiled] = _Tables(compiled)
    return tables


def _chunk_end(data: bytes, end: int) -> int:
    """``end``, moved forward to a character boundary (at most 3 bytes), within ``data``."""
    end = min(end, len(data))
    for _ in range(3):
        if end < len(data) and 0x80 <= data[end] <= 0xBF:
            end += 1
    return end


def _rebuilt(old: _Tables, groups: dict[Frame, int]) -> tuple[_Tables, dict[Frame, int]]:
    """Fresh tables, and ``groups`` with every live frame translated into them.

    Frames' memoized ``waiting`` and ``completed`` entries are dropped (they refill lazily).
    """
    new = _Tables(old.g)
    numbers: dict[int, int] = {}

    def config(c: int) -> int:
        found = numbers.get(c)
        if found is None:
            found = numbers[c] = new.closed_config(old.configs[c])
        return found

    frames: dict[Frame, Frame] = {}
    for frame in parents_first(groups, frames):
        parents = tuple((frames[parent], config(c)) for parent, c in frame.parents)
        frames[frame] = Frame(frame.position, parents, config(frame.own))
    return new, {frames[frame]: config(c) for frame, c in groups.items()}


def _runs(row: list[int], lo: int, hi: int) -> list[tuple[int, int, int]]:
    """Maximal byte ranges within ``lo..hi`` of ``row`` with one non-negative target each."""
    result: list[tuple[int, int, int]] = []
    for byte in range(lo, hi + 1):
        target = row[byte]
        if target < 0:
            continue
        if result and result[-1][2] == target and result[-1][1] == byte - 1:
            result[-1] = (result[-1][0], byte, target)
        else:
            result.append((byte, byte, target))
    return result


_Path = tuple[tuple[int, int], ...]
"""Byte ranges, one per byte of a path."""


def _path_regex(path: _Path) -> bytes:
    return b"".join(_byte_class(set(range(lo, hi + 1))) for lo, hi in path)


def _byte_class(allowed: set[int]) -> bytes:
    parts = []
    for lo, hi, _ in _runs([0 if b in allowed else -1 for b in range(256)], 0, 255):
        parts.append(b"\\x%02x" % lo if lo == hi else b"\\x%02x-\\x%02x" % (lo, hi))
    return b"[" + b"".join(parts) + b"]"


def _describe_codepoints(ranges: utf8.CodepointRanges) -> list[str]:
    """Short descriptions: single characters quoted, else character classes."""
    if not ranges:
        return []
    if ranges == ((0, utf8.MAX_CODEPOINT),):
        return ["any character"]
    if sum(hi - lo + 1 for lo, hi in ranges) <= _MAX_LISTED:
        return [quote_string(chr(cp)) for lo, hi in ranges for cp in range(lo, hi + 1)]
    inverse = utf8.complement(ranges)
    if len(inverse) < len(ranges):
        return [_char_class(inverse, negated=True)]
    if len(ranges) <= _MAX_LISTED // 2:
        return [quote_string(chr(lo)) if lo == hi else _char_class(((lo, hi),), negated=False)
                for lo, hi in ranges]
    return [_char_class(ranges, negated=False)]


def _char_class(ranges: utf8.CodepointRanges, negated: bool) -> str:
    parts = []
    for lo, hi in ranges:
        if hi - lo < 2:
            parts += [class_char(cp) for cp in range(lo, hi + 1)]
        else:
            parts.append(f"{class_char(lo)}-{class_char(hi)}")
    return f"[{'^' if negated else ''}{''.join(parts)}]"


def _explanation(data: bytes, offset: int, expected: tuple[str, ...]) -> Explanation:
    line_start = data.rfind(b"\n", 0, offset) + 1
    line = data.count(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", "replace")) + 1
    if offset >= len(data):
        found = "end of input"
    else:
        lead = utf8.decode_lead(data[offset])
        piece = data[offset:offset + 1 + (lead[1] if lead else 0)]
        try:
            found = quote_string(piece.decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            length = 1
            while length < len(piece) and 0x80 <= piece[length] <= 0xBF:
                length += 1
            found = "invalid UTF-8 " + " ".join(f"0x{b:02X}" for b in piece[:length])
    return Explanation(offset, line, column, expected, found)
