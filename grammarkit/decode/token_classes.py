"""Adaptive token classes: which tokens one parser configuration accepts on its own.

An Earley state is a few *groups*, each a configuration (a set of rule-automaton states sharing
one origin). For a group, every ordinary token falls in one of three classes, computed once per
configuration with numpy over all tokens at once (like xgrammar's adaptive token mask cache):

accepted
    The token's bytes run through the configuration's own byte transitions to the end: the
    group survives the token, so the token is allowed, whatever the other groups do.
uncertain
    The run fails, but only after passing a configuration that completes a rule or calls one
    (after the first byte): the rest of the parse stack might continue it, so only the full
    parser can tell.
rejected
    Everything else: this group cannot continue the token at all.

The decoder allows the union of the accepted sets of a state's groups and runs the exact parser
only on the union of their uncertain sets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit.automata.earley import Recognizer
from grammarkit.decode.bitmask import Words, words_from_bools
from grammarkit.decode.token_index import TokenIndex

MAX_LOCAL_CONFIGS = 20_000
"""Configurations one classification may visit; past it, tokens still live become uncertain."""


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
    """Computes and caches :class:`TokenClasses` per configuration of one recognizer."""

    def __init__(self, recognizer: Recognizer, index: TokenIndex):
        self._tables = recognizer._tables  # the recognizer's lazily built configuration rows
        self._index = index
        self._cache: dict[int, TokenClasses] = {}

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for c in self._cache.values())

    def classes(self, config: int) -> TokenClasses:
        """The classification of every ordinary token from ``config``."""
        found = self._cache.get(config)
        if found is None:
            found = self._cache[config] = self._classify(config)
        return found

    def _classify(self, config: int) -> TokenClasses:
        table, open_ended = self._local_automaton(config)
        index = self._index
        columns, lengths = index.columns, index.lengths
        ranks = np.arange(index.num_tokens, dtype=np.int64)
        current = np.zeros(len(ranks), dtype=np.int32)
        passed = np.zeros(len(ranks), dtype=np.bool_)
        accepted: list[npt.NDArray[np.int64]] = []
        uncertain: list[npt.NDArray[np.int64]] = []
        for k in range(columns.shape[0] + 1):
            ends = lengths[ranks] == k
            if ends.any():
                accepted.append(ranks[ends])
                keep = ~ends
                ranks, current, passed = ranks[keep], current[keep], passed[keep]
            if not len(ranks):
                break
            current = table[current, columns[k, ranks]]
            dead = current < 0
            if dead.any():
                uncertain.append(ranks[dead & passed])
                live = ~dead
                ranks, current, passed = ranks[live], current[live], passed[live]
            passed |= open_ended[current]
        allowed = np.zeros(index.vocab_size, dtype=np.bool_)
        if accepted:
            allowed[index.ids[np.concatenate(accepted)]] = True
        words = words_from_bools(allowed)
        words.setflags(write=False)
        unsure = np.sort(np.concatenate(uncertain)) if uncertain else np.zeros(0, np.int64)
        unsure.setflags(write=False)
        return TokenClasses(words, unsure)

    def _local_automaton(self, config: int) -> tuple[npt.NDArray[np.int32],
                                                     npt.NDArray[np.bool_]]:
        """Byte transitions among the configurations reachable from ``config``, renumbered.

        Returns the table (``[n, 256]``, ``-1`` for none; row 0 is ``config``) and which local
        configurations complete or call a rule (where the rest of the stack may take over).
        """
        tables = self._tables
        local = {config: 0}
        order = [config]
        rows: list[list[int]] = []
        truncated = False
        for c in order:
            row = tables.rows[c]
            if row is None:
                row = tables.build_row(c)
            mapped = []
            for target in row:
                number = local.get(target, -1) if target >= 0 else -1
                if number < 0 <= target and not truncated:
                    number = local[target] = len(order)
                    order.append(target)
                    truncated = len(order) >= MAX_LOCAL_CONFIGS
                mapped.append(number)
            rows.append(mapped)
        table = np.array(rows, dtype=np.int32)
        open_ended = np.array([truncated or not tables.inert[c] for c in order], dtype=np.bool_)
        return table, open_ended


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
