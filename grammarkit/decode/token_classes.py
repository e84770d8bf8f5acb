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
it (or read back from the disk cache, :mod:`grammarkit.decode.engine_cache`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, set_bits
from grammarkit.decode.earley_core import Frame
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
        if found is None:
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
            else:
                walk = automaton.walk(local, index.starting_with(first))
                accepted, failed = walk.accepted, walk.open_failed
            words = np.zeros_like(index.ordinary_words)
            set_bits(words, index.ids[accepted])
            words.setflags(write=False)
            uncertain = np.sort(failed)
            uncertain.setflags(write=False)
            found = self._cache[group] = TokenClasses(words, uncertain)
        return found


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
