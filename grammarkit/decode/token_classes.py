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
only on the union of their uncertain sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, set_bits
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
        self._all_ranks = np.arange(index.num_tokens, dtype=np.int64)
        self._cache: dict[int, TokenClasses] = {}

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._cache.values())

    def classes(self, config: int) -> TokenClasses:
        """The classification of every ordinary token from ``config``."""
        found = self._cache.get(config)
        if found is None:
            walk = self._automaton.walk(self._automaton.local(config), self._all_ranks)
            words = np.zeros_like(self._index.ordinary_words)
            set_bits(words, self._index.ids[walk.accepted])
            words.setflags(write=False)
            walk.open_failed.setflags(write=False)
            found = self._cache[config] = TokenClasses(words, walk.open_failed)
        return found


def union_of(classes: list[TokenClasses], index: TokenIndex) -> TokenClasses:
    """The classification of several groups together: accepted by any, else uncertain in any."""
    if len(classes) == 1:
        return classes[0]
    words = classes[0].accepted.copy()
    for c in classes[1:]:
        np.bitwise_or(words, c.accepted, out=words)
    unsure = np.unique(np.concatenate([c.uncertain for c in classes]))
    if len(unsure):
        ids = index.ids[unsure]
        settled = (words.view(np.uint32)[ids >> 5] >> (ids & 31).astype(np.uint32)) & 1
        unsure = unsure[settled == 0]
    return TokenClasses(words, unsure)
