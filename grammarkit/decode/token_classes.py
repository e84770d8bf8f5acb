"""Adaptive token classes: which tokens one parser configuration accepts on its own.

An Earley state is a few *groups*, each a configuration (a set of rule-automaton states sharing
one origin frame). For a group, every ordinary token falls in one of three classes, computed once
per *context* (the group's configuration, the states of its frame's prediction it can complete
into, and the bytes that can follow each rule that can complete at the frame: the rest of the
prediction never acts on the group, so a group met under different predictions shares one
context) by walking all tokens through the group parsed on its own (with the rules it calls
and its frame's callers of them, but nothing below the frame; see
:class:`~grammarkit.decode.state_automaton.StateAutomaton`), like xgrammar's adaptive token mask
cache:

accepted
    Every byte of the token is parsed without leaving the group: the token is allowed, whatever
    the rest of the state holds.
uncertain
    Parsing fails, but only after a rule started at the group's frame completed (after the first
    byte) where the next byte can follow it: the frames below might continue the token, so only
    the full parser can tell.
rejected
    Everything else: this group cannot continue the token at all.

Including the frame's own callers matters: an identifier group classified alone would leave
every token like ``abc(`` uncertain (the identifier ends inside it), about 100k tokens.

The decoder allows the union of the accepted sets of a state's groups and runs the full parser
only on the union of their uncertain sets. A context is classified the first time a mask needs
it, or earlier when a random walk likely meets it (:meth:`TokenClassifier.classify_likely`), or
it is read back from the disk cache (:mod:`grammarkit.decode.engine_cache`).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, set_bits
from grammarkit.decode.earley_core import Frame, ParseState
from grammarkit.decode.state_automaton import Follow, StateAutomaton
from grammarkit.decode.token_index import TokenIndex
from grammarkit.decode.token_partition import DIRECT_RANKS


@dataclass(frozen=True, eq=False)
class TokenClasses:
    """One context's classification of the ordinary tokens.

    Attributes
    ----------
    accepted
        Bitmask words (indexed by token id) of the accepted tokens.
    uncertain : ndarray of int64
        Ranks (positions in `TokenIndex` order), ascending, of the uncertain tokens.
    """

    accepted: Words
    uncertain: npt.NDArray[np.int64]

    @property
    def nbytes(self) -> int:
        return self.accepted.nbytes + self.uncertain.nbytes


VISIT_DISCOUNT = 0.98
"""Weight of a visit one more token away (about 50 tokens ahead count)."""

Context = tuple[int, int, Follow]
"""A group's configuration, the states of its frame's prediction it can complete into
(:meth:`EarleyCore.completion_callers`), and what can follow the rules that can complete at the
frame."""


class TokenClassifier:
    """Computes and caches :class:`TokenClasses` per context."""

    def __init__(self, automaton: StateAutomaton, index: TokenIndex):
        self._automaton = automaton
        self._index = index
        self._cache: dict[Context, TokenClasses] = {}
        self._contexts: dict[tuple[int, int], Context] = {}
        self._successors: dict[Context, tuple[float, tuple[tuple[tuple[Context, ...], float],
                                                           ...]]] = {}
        self._transitions: dict[tuple[Context, ...],
                                tuple[tuple[tuple[Context, ...], float], ...]] = {}
        self._arrivals: dict[Context, tuple[int, npt.NDArray[np.int64],
                                            npt.NDArray[np.float64]]] = {}
        self.num_computed = 0
        """Contexts classified here (not added from elsewhere)."""

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._cache.values())

    def context(self, frame: Frame, config: int) -> Context:
        """The classification context of the group ``(frame, config)``."""
        key = (config, frame.own)
        found = self._contexts.get(key)
        if found is None:
            automaton = self._automaton
            group = automaton.canonical(config)
            callers, rules = automaton.core.completion_callers(group, automaton.canonical(frame.own))
            found = self._contexts[key] = (group, callers, automaton.core.follow_of(rules))
        return found

    @property
    def num_classified(self) -> int:
        return len(self._cache)

    def classified(self) -> list[tuple[Context, TokenClasses]]:
        """Every context classified so far, with its classes."""
        return list(self._cache.items())

    def add(self, group: Context, classes: TokenClasses) -> None:
        """Record the classes of ``group`` computed elsewhere (a cache file)."""
        self._cache[group] = classes

    def classes(self, group: Context) -> TokenClasses:
        """The classification of every ordinary token from the context ``group``."""
        found = self._cache.get(group)
        return found if found is not None else self._classify(group)

    def classify_likely(self, start: Iterable[Context], limit: int, min_visits: float,
                        deadline: float) -> int:
        """Classify the contexts a random walk from a state holding ``start`` is expected to
        meet most often; how many were classified now (``limit`` at most, none started after
        ``deadline``, a ``time.process_time()`` value).

        The walk goes from state to state, a state standing for the contexts of its groups
        (all met together), and takes one of the state's accepted tokens uniformly: its
        contexts' accepted tokens lead to the states they end in (tokens that leave a
        context's frame are followed from the frames below, whose own walks parse them), each
        with its share of all of them, a visit one token further counting
        :data:`VISIT_DISCOUNT` as much. Expected visits are estimated by pushing each state's
        unpushed visits on to its successors, the state holding most first (a state that
        loops, like an identifier going on, pushes again and again, so what follows it
        outranks a keyword met once); a state's contexts are classified when it is first
        pushed, down to ``min_visits``. Contexts read from a cache file have no recorded
        successors and end the search there.
        """
        first = tuple(sorted(set(start)))
        waiting = {first: 1.0}  # visits not yet pushed on, per state (its contexts)
        heap = [(-1.0, 0, first)]
        pushes = 0
        classified = 0
        while heap:
            negative, _, state = heapq.heappop(heap)
            visits = waiting[state]
            if visits != -negative:
                continue  # an older entry: the state has gained visits or pushed them on
            if visits < min_visits:
                break
            waiting[state] = 0.0
            for context in state:
                if context not in self._cache:
                    if classified >= limit or time.process_time() >= deadline:
                        return classified
                    self._classify(context)
                    classified += 1
            for successor, share in self._state_successors(state):
                more = waiting.get(successor, 0.0) + visits * share * VISIT_DISCOUNT
                waiting[successor] = more
                pushes += 1
                heapq.heappush(heap, (-more, pushes, successor))
        return classified

    def _state_successors(self, state: tuple[Context, ...]
                          ) -> tuple[tuple[tuple[Context, ...], float], ...]:
        """The states a token accepted in a state holding the contexts ``state`` ends in,
        with the share of the accepted tokens ending in each."""
        found = self._transitions.get(state)
        if found is None:
            tokens = 0.0
            ending: dict[tuple[Context, ...], float] = {}
            for context in state:
                accepted, arrivals = self._successors_of(context)
                tokens += accepted
                for successor, count in arrivals:
                    ending[successor] = ending.get(successor, 0.0) + count
            found = self._transitions[state] = tuple(
                (successor, count / tokens) for successor, count in ending.items())
        return found

    def _arrivals_after(self, arrived: npt.NDArray[np.int64], weights: npt.NDArray[np.int64]
                        ) -> tuple[int, npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The distinct states numbered in ``arrived`` (by ``weights`` tokens each) with the
        tokens ending in each, and the automaton's numbering they refer to."""
        if not len(arrived):
            return self._automaton.epoch, arrived, np.zeros(0)
        counts = np.bincount(arrived, weights=weights)
        numbers = np.flatnonzero(counts).astype(np.int64)
        return self._automaton.epoch, numbers, counts[numbers].astype(np.float64)

    def _successors_of(self, group: Context
                       ) -> tuple[float, tuple[tuple[tuple[Context, ...], float], ...]]:
        """How many tokens ``group`` accepts, and the states (by their contexts) they end in,
        with the tokens ending in each (computed when first asked: a context classified on
        first use seldom is)."""
        found = self._successors.get(group)
        if found is not None:
            return found
        epoch, numbers, counts = self._arrivals.pop(group, (-1, None, None))
        ending: dict[tuple[Context, ...], float] = {}
        if numbers is not None and counts is not None and epoch == self._automaton.epoch:
            for number, count in zip(numbers.tolist(), counts.tolist(), strict=True):
                state = tuple(sorted({self.context(frame, config) for frame, config
                                      in classified_groups(self._automaton.state(number))}))
                ending[state] = ending.get(state, 0.0) + count
        found = self._successors[group] = (sum(ending.values()), tuple(ending.items()))
        return found

    def _classify(self, group: Context) -> TokenClasses:
        automaton, index = self._automaton, self._index
        local = automaton.local(*group)
        first = automaton.first_bytes(local)
        partition = automaton.partition
        if partition.is_grouped or automaton.tokens_starting_with(first) > DIRECT_RANKS:
            # whole groups, found by their first byte class: no pass over their tokens
            walk = automaton.walk_representatives(
                local, partition.representative[automaton.candidate_groups(local)])
            accepted = partition.member_ranks(partition.group_of[walk.accepted])
            failed = partition.member_ranks(partition.group_of[walk.open_failed])
            weights = partition.group_sizes(partition.group_of[walk.accepted])
        else:
            walk = automaton.walk(local, index.starting_with(first))
            accepted, failed = walk.accepted, walk.open_failed
            weights = np.ones(len(walk.arrived), dtype=np.int64)
        words = np.zeros_like(index.ordinary_words)
        set_bits(words, index.ids[accepted])
        words.setflags(write=False)
        uncertain = np.sort(failed)
        uncertain.setflags(write=False)
        self._arrivals[group] = self._arrivals_after(walk.arrived, weights)
        self.num_computed += 1
        found = self._cache[group] = TokenClasses(words, uncertain)
        return found


def classified_groups(state: ParseState) -> list[tuple[Frame, int]]:
    """The groups of ``state`` whose classes a mask needs: all but those holding only what
    their parents, all still in ``state`` as they were, predicted here (the parents' own
    classes cover them: their local parses predict the same items)."""
    present = dict(state.groups)
    return [(frame, config) for frame, config in state.groups
            if not (frame.position == state.position and config == frame.own
                    and bool(frame.parents)
                    and all(present.get(parent) == c for parent, c in frame.parents))]


def union_of(classes: list[TokenClasses], index: TokenIndex) -> TokenClasses:
    """The classification of several groups together: accepted by any, else uncertain in any."""
    if len(classes) == 1:
        return classes[0]
    words = classes[0].accepted.copy()
    for c in classes[1:]:
        np.bitwise_or(words, c.accepted, out=words)
    parts = [c.uncertain for c in classes if len(c.uncertain)]
    if not parts:
        return TokenClasses(words, np.zeros(0, dtype=np.int64))
    if len(parts) == 1:
        unsure = parts[0]
    else:
        marked = np.zeros(index.num_tokens, dtype=np.bool_)
        for part in parts:
            marked[part] = True
        unsure = np.flatnonzero(marked)
    ids = index.ids[unsure]
    settled = (words.view(np.uint32)[ids >> 5] >> (ids & 31).astype(np.uint32)) & 1
    return TokenClasses(words, unsure[settled == 0])
