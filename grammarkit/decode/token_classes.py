"""Adaptive token classes: which tokens one parser configuration accepts on its own.

An Earley state is a few *groups*, each a configuration (a set of rule-automaton states sharing
one origin frame). For a group, every ordinary token falls in one of three classes, computed once
per *context* (the group's configuration, the configuration its frame predicted and the bytes
that can follow each rule predicted there) by walking all tokens through the group parsed on its
own (with the rules it calls and its frame's callers of them, but nothing below
the frame; see
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


Context = tuple[int, int, Follow]
"""A group's configuration, the one its frame predicted, and what can follow its rules."""


class TokenClassifier:
    """Computes and caches :class:`TokenClasses` per context."""

    def __init__(self, automaton: StateAutomaton, index: TokenIndex):
        self._automaton = automaton
        self._index = index
        self._cache: dict[Context, TokenClasses] = {}
        self._successors: dict[Context, tuple[tuple[Context, float], ...]] = {}
        self.num_computed = 0
        """Contexts classified here (not added from elsewhere)."""

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._cache.values())

    def context(self, frame: Frame, config: int) -> Context:
        """The classification context of the group ``(frame, config)``."""
        automaton = self._automaton
        return (automaton.canonical(config), automaton.canonical(frame.own),
                automaton.core.follow(frame.own))

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

    def classify_likely(self, start: Iterable[Context], limit: int, min_probability: float,
                        deadline: float) -> int:
        """Classify the contexts a random walk from ``start`` most likely reaches; how many
        were classified now (``limit`` at most, none started after ``deadline``, a
        ``time.perf_counter()`` value).

        Each step takes one accepted token uniformly: a context's successors are those of the
        states its accepted tokens end in, each with the share of tokens ending there (tokens
        that leave its frame are followed from the frames below, whose own walks parse them).
        Contexts are taken most likely first, down to ``min_probability``. Contexts read from a
        cache file have no recorded successors and end the search there.
        """
        best = dict.fromkeys(start, 1.0)
        heap = [(-1.0, order, context) for order, context in enumerate(best)]
        classified = 0
        while heap and classified < limit and time.perf_counter() < deadline:
            negative, _, context = heapq.heappop(heap)
            probability = -negative
            if probability < best[context]:
                continue  # reached more likely since
            if probability < min_probability:
                break
            if context not in self._cache:
                self._classify(context)
                classified += 1
            for successor, share in self._successors.get(context, ()):
                likely = probability * share
                if likely > best.get(successor, 0.0):
                    best[successor] = likely
                    heapq.heappush(heap, (-likely, len(best), successor))
        return classified

    def _successors_after(self, arrived: npt.NDArray[np.int64], weights: npt.NDArray[np.int64]
                          ) -> tuple[tuple[Context, float], ...]:
        """The contexts of the states numbered ``arrived`` (by ``weights`` tokens each), with
        the share of the tokens that end in a state holding each."""
        if not len(arrived):
            return ()
        counts = np.bincount(arrived, weights=weights)
        numbers = np.flatnonzero(counts)
        shares = counts[numbers] / weights.sum()
        found: dict[Context, float] = {}
        for number, share in zip(numbers.tolist(), shares.tolist(), strict=True):
            for frame, config in classified_groups(self._automaton.state(number)):
                context = self.context(frame, config)
                found[context] = found.get(context, 0.0) + share
        return tuple(found.items())

    def _classify(self, group: Context) -> TokenClasses:
        automaton, index = self._automaton, self._index
        local = automaton.local(*group)
        first = automaton.first_bytes(local)
        partition = automaton.partition
        if partition.is_grouped or automaton.tokens_starting_with(first) > DIRECT_RANKS:
            # whole groups, found by their first byte class: no pass over their tokens
            walk = automaton.walk_representatives(
                local, partition.representative[partition.groups_starting_with(first)])
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
        self._successors[group] = self._successors_after(walk.arrived, weights)
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
