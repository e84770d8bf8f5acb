"""Adaptive token classes: which tokens one parser configuration accepts on its own.

An Earley state is a few *groups*, each a configuration (a set of rule-automaton states sharing
one origin). For a group, every ordinary token falls in one of three classes, computed once per
configuration by walking all tokens through the configuration parsed on its own (with the rules
it calls, but nothing below it; see :class:`~grammarkit.decode.state_automaton.StateAutomaton`),
like xgrammar's adaptive token mask cache:

accepted
    Every byte of the token is parsed without leaving the group: the token is allowed, whatever
    the rest of the state holds.
uncertain
    Parsing fails, but only after a rule of the group completed (after the first byte): the
    frames below might continue the token, so only the full parser can tell.
rejected
    Everything else: this group cannot continue the token at all.

The decoder allows the union of the accepted sets of a state's groups and runs the full parser
only on the union of their uncertain sets. :meth:`TokenClassifier.precompute` classifies the
configurations reachable from a state ahead of time (at compile time, within a budget), so
decoding rarely pays for a first classification.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, set_bits
from grammarkit.decode.earley_core import ParseState
from grammarkit.decode.state_automaton import StateAutomaton
from grammarkit.decode.token_index import TokenIndex


@dataclass(frozen=True, eq=False)
class TokenClasses:
    """One configuration's classification of the ordinary tokens.

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


class TokenClassifier:
    """Computes and caches :class:`TokenClasses` per configuration."""

    def __init__(self, automaton: StateAutomaton, index: TokenIndex):
        self._automaton = automaton
        self._index = index
        self._cache: dict[int, TokenClasses] = {}

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._cache.values())

    @property
    def num_classified(self) -> int:
        return len(self._cache)

    def classes(self, config: int) -> TokenClasses:
        """The classification of every ordinary token from ``config``."""
        found = self._cache.get(config)
        if found is None:
            local = self._automaton.local(config)
            ranks = self._index.starting_with(self._automaton.first_bytes(local))
            walk = self._automaton.walk(local, ranks)
            words = np.zeros_like(self._index.ordinary_words)
            set_bits(words, self._index.ids[walk.accepted])
            words.setflags(write=False)
            uncertain = np.sort(walk.open_failed)
            uncertain.setflags(write=False)
            found = self._cache[config] = TokenClasses(words, uncertain)
        return found

    def precompute(self, start: ParseState, deadline: float) -> bool:
        """Classify the configurations reachable from ``start``, breadth first.

        A configuration is reachable when it is a group of some state met by a walk so far
        (classification walks meet the states any token can lead to) or where a group's config
        continues after a rule it calls completes; the other configurations
        the parser has interned meanwhile come last. Stops at ``deadline`` (a
        ``time.perf_counter()`` value).

        Returns
        -------
        bool
            Whether every reachable configuration was classified before the deadline.
        """
        automaton = self._automaton
        queue = deque(config for _, config in start.groups)
        seen = set(queue)
        scanned = interned = 0
        while True:
            if not queue:
                queue.extend(c for c in range(interned, automaton.core.num_configs())
                             if c not in seen)
                seen.update(queue)
                interned = automaton.core.num_configs()
                if not queue:
                    return True
            if time.perf_counter() >= deadline:
                return False
            config = queue.popleft()
            self.classes(config)
            for after in automaton.core.return_configs(config):
                if after not in seen:
                    seen.add(after)
                    queue.append(after)
            for number in range(scanned, automaton.num_states):
                for _, config in automaton.state(number).groups:
                    if config not in seen:
                        seen.add(config)
                        queue.append(config)
            scanned = automaton.num_states


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
