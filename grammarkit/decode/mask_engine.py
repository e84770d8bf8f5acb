"""`MaskEngine`: next-token masks of Earley states, for one grammar and one vocabulary.

Shared by every :class:`~grammarkit.decode.matcher.TokenMatcher` of the same grammar and
vocabulary (see :mod:`grammarkit.decode.engine_cache`). Nothing is precomputed: building an
engine costs the grammar's byte classes, and each layer below (and the token partition) is
filled on first use, so the first mask is ready as soon as the start state's groups are
classified (under ``max_chars`` budgets, the first mask runs the survey below). The second
state's mask surveys small grammars (:meth:`MaskEngine._survey`), or else classifies, for as
long as the first mask took or
:data:`LIKELY_MIN_SECONDS`, the contexts a random walk is expected to meet most often
(:meth:`MaskEngine._classify_likely`), so that later masks rarely stop to classify one; a
later mask that stops anyway for long (:data:`STALL_SECONDS`) classifies the contexts likely
next too (:meth:`MaskEngine._classify_ahead`: the counts of a string body with a counted
repetition, one context each, cost one stop instead of several). A mask is computed in three
layers:

1. **Mask cache.** States are keyed canonically (:meth:`StateAutomaton.state_key`), so a state
   seen before costs one dict look-up.
2. **Token classes.** Each group's context classifies every token once (groups just predicted
   by parents that are still present are covered by the parents' classes and skipped)
   (:mod:`grammarkit.decode.token_classes`); the union of the accepted sets is allowed outright.
3. **Exact walk.** The remaining uncertain tokens run through the full parse state
   (:class:`~grammarkit.decode.state_automaton.StateAutomaton`), sharing parser steps between
   tokens with a common prefix and between masks.

``Token``/``ExcludeToken`` edges of the current groups add whole token ids on top.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.decode.bitmask import Words, clear_bits, set_bits
from grammarkit.decode.char_budget import allowed_ranks, most_code_points
from grammarkit.decode.earley_core import EarleyCore, Frame, ParseState
from grammarkit.decode.state_automaton import StateAutomaton, StateKey
from grammarkit.decode.token_classes import Context, TokenClassifier, classified_groups, union_of
from grammarkit.decode.token_index import TokenIndex
from grammarkit.decode.token_partition import TokenPartition, token_partition

MASK_CACHE_SIZE = 4096
"""Masks kept per engine (each ``vocab_size / 8`` bytes: 124 MB for 248k tokens at most)."""

LIKELY_CONTEXTS = 64
"""Contexts classified at most at once when the second state is met (see
:meth:`MaskEngine.mask`)."""

LIKELY_VISITS = 1e-3
"""Contexts a random walk is expected to meet fewer times than this are left to their first
use."""

LIKELY_MIN_SECONDS = 0.04
"""The least CPU time the second state's mask may spend classifying likely contexts (else as
long as the first mask took)."""

STALL_SECONDS = 0.004
"""A mask that classified new contexts for at least this much CPU time classifies the next
likely ones too (:meth:`MaskEngine._classify_ahead`)."""

AHEAD_FACTOR = 3.0
"""How much longer than its own classifications such a mask spends classifying ahead."""

MAX_ROUTES = 4 * MASK_CACHE_SIZE
"""Routes kept at most (new states beyond them are not stored on disk)."""

SURVEY_STATES = 256
"""Grammars reaching at most this many states by ordinary tokens have every state's mask
computed when the second state is met (see :meth:`MaskEngine._survey`)."""

SURVEY_SECONDS = 0.25
"""The survey gives up after this much CPU time, the token partition's grouping aside (the
masks it computed are kept)."""

SURVEY_FRONTIER = 64
"""The survey gives up when this many states wait to be walked (the state count grows too
fast to stay small)."""


Route = tuple[StateKey | None, bytes]
"""A state's parent (by key; ``None``: the start state) and the bytes leading from it."""


class MaskEngine:
    """Computes next-token masks (without stop tokens) for states of one grammar."""

    def __init__(self, compiled: CompiledGrammar, index: TokenIndex,
                 partition: TokenPartition | None = None):
        self.core = EarleyCore(compiled)
        self.index = index
        self.partition = partition if partition is not None else token_partition(compiled, index)
        self.automaton = StateAutomaton(self.core, self.index, self.partition)
        self.classifier = TokenClassifier(self.automaton, self.index)
        self._masks: OrderedDict[StateKey, Words] = OrderedDict()
        self._computed = 0
        self._first_seconds = 0.0
        self.routes: dict[StateKey, Route] = {}
        """How states whose masks were computed are reached: from the state keyed by the
        first item (``None``: the start) by the bytes of the second (what the disk cache
        stores, see :mod:`grammarkit.decode.engine_cache`)."""
        self.context_states: dict[Context, tuple[StateKey, int]] = {}
        """Per classified context, a routed state holding it and its index among the state's
        :func:`classified_groups`."""
        self.surveyed = False
        """Whether every state's mask was computed (:meth:`_survey`)."""
        self._longest: dict[StateKey, int] | None = {} if compiled.char_deadlines else None
        """Under character budgets, per cached mask the most code points of a token it allows
        (see :meth:`longest_token`)."""
        self._survey_at = 1 if compiled.char_deadlines else 2
        """The computed mask that runs the survey: the first under character budgets, else
        the second (see :meth:`_survey`)."""
        self._pending: Callable[[MaskEngine], None] | None = None

    @property
    def revision(self) -> int:
        """Grows whenever a mask or a context's classes are computed (not read from elsewhere)."""
        return self._computed + self.classifier.num_computed

    def defer(self, restore: Callable[[MaskEngine], None]) -> None:
        """Run ``restore(self)`` (adding stored tables) just before the first mask that is not
        cached, the start state's excepted (taking the engine as an argument, it need not
        refer to it: no reference cycle keeps a dropped engine alive)."""
        self._pending = restore

    @property
    def first_seconds(self) -> float:
        """How long computing the first mask took (0 if it was read from elsewhere)."""
        return self._first_seconds

    def cached_mask(self, key: StateKey) -> Words | None:
        """The cached mask of the state keyed ``key``, if any."""
        return self._masks.get(key)

    def add_mask(self, key: StateKey, words: Words, route: Route) -> None:
        """Record the mask of the state keyed ``key`` computed elsewhere (a cache file)."""
        self._keep(key, words)
        self.routes[key] = route

    def masks(self) -> list[tuple[StateKey, Words]]:
        """The cached masks, least recently used first."""
        return list(self._masks.items())

    @property
    def nbytes(self) -> int:
        """Memory held by cached classes and masks (the shared token index not included)."""
        masks = sum(m.nbytes for m in self._masks.values())
        return self.classifier.nbytes + self.automaton.nbytes + self.partition.nbytes + masks

    # -- masks -----------------------------------------------------------------------------------
    def mask(self, state: ParseState, key: StateKey,
             route: Callable[[], Route | None] | None = None) -> Words:
        """Bitmask words of the tokens allowed after ``state`` (read-only; stop tokens unset).

        ``route`` tells, when the mask is computed, how ``state`` is reached (recorded if its
        first state's route is).
        """
        found = self._masks.get(key)
        if found is None and self._pending is not None and self._masks:
            pending, self._pending = self._pending, None
            pending(self)
            found = self._masks.get(key)
        if found is not None:
            self._masks.move_to_end(key)
            return found
        self._computed += 1
        if route is not None:
            way = route()
            if (way is not None and len(self.routes) < MAX_ROUTES
                    and (way[0] is None or way[0] in self.routes)):
                self.routes[key] = way
        start = time.perf_counter()
        if self._computed == self._survey_at and not self.surveyed:
            if self._survey():
                found = self._masks.get(key)
                if found is not None:
                    if self._computed == 1:
                        self._first_seconds = time.perf_counter() - start
                    return found
            elif self._computed == 2:
                self._classify_likely(state)
            start = time.perf_counter()
        elif self._computed == 2 and not self.surveyed:
            self._classify_likely(state)  # the survey with the first mask gave up
        spent, classified = time.process_time(), self.classifier.num_computed
        words = self._compute(state, key)
        if self._computed == 1:
            self._first_seconds = time.perf_counter() - start
        else:
            spent = time.process_time() - spent
            if self.classifier.num_computed > classified and spent >= STALL_SECONDS:
                self._classify_ahead(state, spent)
        self._keep(key, words)
        return words

    def longest_token(self, key: StateKey) -> int | None:
        """The most code points of an ordinary token the cached mask of the state keyed
        ``key`` allows by its bytes (kept under character budgets only, else ``None``)."""
        return None if self._longest is None else self._longest.get(key)

    def _keep(self, key: StateKey, words: Words,
              accepted: npt.NDArray[np.int64] | None = None) -> None:
        """Cache ``words``, the mask of the state keyed ``key``; ``accepted``: the ranks it
        allows by their bytes, if known."""
        words.setflags(write=False)
        self._masks[key] = words
        if self._longest is not None:
            if accepted is None:
                accepted = allowed_ranks(words, self.index)
            self._longest[key] = most_code_points(self.index, accepted)
        if len(self._masks) > MASK_CACHE_SIZE:
            evicted, _ = self._masks.popitem(last=False)
            if self._longest is not None:
                self._longest.pop(evicted, None)

    def _survey(self) -> bool:
        """Compute the mask of every state ordinary tokens reach from the start, breadth
        first, if there are at most :data:`SURVEY_STATES` of them; whether all were reached
        (within :data:`SURVEY_SECONDS`).

        Each state walks one token per partition group from its real parse state (exact, no
        classes needed); the states the accepted tokens end in are the next ones. Small
        grammars (an enum-and-boolean schema: 174 states, 60–90 ms) then never stop for a
        mask again, as after xgrammar's compilation; larger ones stop at the first bound, keeping
        the masks of the states nearest the start.

        Runs with the second computed mask (the first is ready without it), or with the first
        where rules have ``max_chars`` budgets: their masks still stop for deadline walks
        (1–10 ms) after a survey, and budgets keep generations short (15–33 tokens in
        ``benchmarks/decode_vs_xgrammar.py``), so a survey stall at the second mask would be
        their slowest mask by far (xgrammar compiles every mask before the first too).
        """
        automaton, partition, tokens = self.automaton, self.partition, self.index.tokens
        representative = partition.representative  # grouped first (classifications need it)
        deadline = time.process_time() + SURVEY_SECONDS
        order = [automaton.number(self.core.initial())]
        self.routes.setdefault(automaton.key_of(order[0]), (None, b""))
        seen = set(order)
        for walked, number in enumerate(order):
            if (len(seen) > SURVEY_STATES or len(seen) - walked > SURVEY_FRONTIER
                    or time.process_time() > deadline):
                return False
            walk = automaton.walk_representatives(
                number, representative[automaton.candidate_groups(number)])
            key = automaton.key_of(number)
            if key not in self._masks:
                words = np.zeros_like(self.index.ordinary_words)
                accepted = partition.member_ranks(partition.group_of[walk.accepted])
                set_bits(words, self.index.ids[accepted])
                self._add_token_edges(words, automaton.state(number))
                self._keep(key, words, accepted)
            arrived, first_of = np.unique(walk.arrived, return_index=True)
            for successor, at in zip(arrived.tolist(), first_of.tolist(), strict=True):
                if successor not in seen:
                    seen.add(successor)
                    order.append(successor)
                    self.routes.setdefault(automaton.key_of(successor),
                                           (key, tokens[int(walk.accepted[at])]))
        self.surveyed = True
        return True

    def _classify_likely(self, state: ParseState) -> None:
        """Classify the contexts a random walk from ``state`` is expected to meet most often
        (:meth:`TokenClassifier.classify_likely`), for as long as the first mask took or
        :data:`LIKELY_MIN_SECONDS` of CPU time, so later states rarely meet an unclassified
        one.

        Runs on the second state's mask, not the first: a matcher is ready (its first mask
        filled) as soon as the start state's own contexts are classified. The walk starts
        from the second state: the generation has left the start behind.
        """
        classifier = self.classifier
        start = [classifier.context(frame, config)
                 for frame, config in classified_groups(state)]
        deadline = time.process_time() + max(self._first_seconds, LIKELY_MIN_SECONDS)
        classifier.classify_likely(start, LIKELY_CONTEXTS, LIKELY_VISITS, deadline)

    def _classify_ahead(self, state: ParseState, spent: float) -> None:
        """Classify the contexts a walk from ``state`` likely meets next, for
        :data:`AHEAD_FACTOR` times the ``spent`` seconds of CPU its mask took to classify new
        contexts: a mask that stops anyway (a string with a counted body entered: one context
        per count) spares the next masks their own stops."""
        classifier = self.classifier
        start = [classifier.context(frame, config) for frame, config in classified_groups(state)]
        classifier.classify_likely(start, LIKELY_CONTEXTS, LIKELY_VISITS,
                                   time.process_time() + AHEAD_FACTOR * spent)

    def _compute(self, state: ParseState, key: StateKey) -> Words:
        classifier = self.classifier
        contexts = [classifier.context(frame, config) for frame, config in classified_groups(state)]
        if key in self.routes:
            for at, context in enumerate(contexts):
                self.context_states.setdefault(context, (key, at))
        classes = union_of([classifier.classes(context) for context in contexts], self.index)
        words = classes.accepted.copy()
        if len(classes.uncertain):
            walk = self.automaton.walk(self.automaton.number(state), classes.uncertain)
            set_bits(words, self.index.ids[walk.accepted])
        self._add_token_edges(words, state)
        return words

    def token_edge_words(self, state: ParseState) -> Words:
        """Bitmask words of the ids the ``Token``/``ExcludeToken`` edges of ``state`` allow."""
        words = np.zeros_like(self.index.ordinary_words)
        self._add_token_edges(words, state)
        return words

    def _add_token_edges(self, words: Words, state: ParseState) -> None:
        """Allow the ids of the ``Token``/``ExcludeToken`` edges of ``state``'s groups."""
        for _, config in state.groups:
            for edge, _ in self.core.token_edges(config):
                if edge.exclude:
                    others = self.index.ordinary_words.copy()
                    clear_bits(others, self._in_range(edge.ids))
                    np.bitwise_or(words, others, out=words)
                else:
                    set_bits(words, self._in_range(edge.ids))

    def _in_range(self, ids: tuple[int, ...]) -> npt.NDArray[np.int64]:
        array = np.array(ids, dtype=np.int64)
        return array[(array >= 0) & (array < self.index.vocab_size)]

    # -- steps -----------------------------------------------------------------------------------
    def token_step(self, state: ParseState, token_id: int, ordinary: bool,
                   width: int) -> ParseState | None:
        """The state after token ``token_id`` taken through token edges, or ``None``."""
        core = self.core
        kernel: dict[Frame, int] = {}
        for frame, config in state.groups:
            targets = [target for edge, target in core.token_edges(config)
                       if (token_id not in edge.ids if edge.exclude and ordinary
                           else not edge.exclude and token_id in edge.ids)]
            if targets:
                kernel[frame] = core.config(targets)
        if not kernel:
            return None
        return core.close(kernel, state.position + width)

    def has_token_edges(self, state: ParseState) -> bool:
        """Whether some group of ``state`` can take a ``Token``/``ExcludeToken`` edge."""
        token_edges = self.core.token_edges
        for _, config in state.groups:
            if token_edges(config):
                return True
        return False

    def next_bytes(self, state: ParseState) -> bytes:
        """The bytes that can follow ``state``, ascending."""
        possible: set[int] = set()
        for _, config in state.groups:
            row = self.core.byte_row(config)
            possible.update(b for b in range(256) if row[b] >= 0)
        return bytes(sorted(possible))

    def merge(self, a: ParseState, b: ParseState) -> ParseState:
        """The items of both states (a token that is both text and a ``Token`` edge)."""
        groups = dict(a.groups)
        for frame, config in b.groups:
            old = groups.get(frame)
            groups[frame] = config if old is None else self.core.union(old, config)
        return ParseState(max(a.position, b.position), tuple(groups.items()))

    def state_key(self, state: ParseState, frame_keys: dict[Frame, int]) -> StateKey:
        """The canonical key of ``state`` (see :meth:`StateAutomaton.state_key`)."""
        return self.automaton.state_key(state, frame_keys)
