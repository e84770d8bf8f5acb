"""`MaskEngine`: next-token masks of Earley states, for one grammar and one vocabulary.

Shared by every :class:`~grammarkit.decode.matcher.TokenMatcher` of the same compiled grammar
and vocabulary. A mask is computed in three layers:

1. **Mask cache.** States are keyed canonically (:meth:`StateAutomaton.state_key`), so a state
   seen before costs one dict look-up.
2. **Token classes.** Each group's configuration classifies every token once
   (:mod:`grammarkit.decode.token_classes`); the union of the accepted sets is allowed outright.
3. **Exact walk.** The remaining uncertain tokens run through the full parse state
   (:class:`~grammarkit.decode.state_automaton.StateAutomaton`), sharing parser steps between
   tokens with a common prefix and between masks.

``Token``/``ExcludeToken`` edges of the current groups add whole token ids on top.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.earley import Frame, ParseState, Recognizer
from grammarkit.automata.nfa import TokenEdge
from grammarkit.decode.bitmask import Words, clear_bits, set_bits
from grammarkit.decode.state_automaton import StateAutomaton, StateKey
from grammarkit.decode.token_classes import TokenClassifier, union_of
from grammarkit.decode.token_index import TokenIndex, token_index
from grammarkit.vocab import Vocabulary

MASK_CACHE_SIZE = 4096
"""Masks kept per engine (each ``vocab_size / 8`` bytes: 124 MB for 248k tokens at most)."""

class MaskEngine:
    """Computes next-token masks (without stop tokens) for states of one grammar."""

    def __init__(self, compiled: CompiledGrammar, vocab: Vocabulary):
        self.compiled = compiled
        self.index: TokenIndex = token_index(vocab)
        self.recognizer = Recognizer(compiled)
        self._tables = self.recognizer._tables  # shared configuration tables (steps, closure)
        self.automaton = StateAutomaton(self.recognizer, self.index)
        self._classifier = TokenClassifier(self.automaton, self.index)
        self._masks: OrderedDict[StateKey, Words] = OrderedDict()
        self._token_edges: dict[int, tuple[tuple[TokenEdge, int], ...]] = {}

    @property
    def nbytes(self) -> int:
        """Memory held by cached classes and masks (the shared token index not included)."""
        masks = sum(m.nbytes for m in self._masks.values())
        return self._classifier.nbytes + self.automaton.nbytes + masks

    # -- masks -----------------------------------------------------------------------------------
    def mask(self, state: ParseState, key: StateKey) -> Words:
        """Bitmask words of the tokens allowed after ``state`` (read-only; stop tokens unset)."""
        found = self._masks.get(key)
        if found is not None:
            self._masks.move_to_end(key)
            return found
        words = self._compute(state)
        words.setflags(write=False)
        self._masks[key] = words
        if len(self._masks) > MASK_CACHE_SIZE:
            self._masks.popitem(last=False)
        return words

    def _compute(self, state: ParseState) -> Words:
        classes = union_of([self._classifier.classes(config) for _, config in state.groups],
                           self.index)
        words = classes.accepted.copy()
        if len(classes.uncertain):
            ranks = classes.uncertain
            set_bits(words, self.index.ids[ranks[self._exact(state, ranks)]])
        for _, config in state.groups:
            for edge, _ in self.token_edges(config):
                if edge.exclude:
                    others = self.index.ordinary_words.copy()
                    clear_bits(others, self._in_range(edge.ids))
                    np.bitwise_or(words, others, out=words)
                else:
                    set_bits(words, self._in_range(edge.ids))
        return words

    def _exact(self, state: ParseState, ranks: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
        """Which tokens of ``ranks`` (ascending) the recognizer accepts after ``state``."""
        accepted = self.automaton.walk(self.automaton.number(state), ranks).accepted
        return np.isin(ranks, accepted, assume_unique=True)

    def _in_range(self, ids: tuple[int, ...]) -> npt.NDArray[np.int64]:
        array = np.array(ids, dtype=np.int64)
        return array[(array >= 0) & (array < self.index.vocab_size)]

    # -- token edges -----------------------------------------------------------------------------
    def token_edges(self, config: int) -> tuple[tuple[TokenEdge, int], ...]:
        """The ``Token``/``ExcludeToken`` edges leaving the states of ``config``."""
        found = self._token_edges.get(config)
        if found is None:
            edges = self.compiled.token_edges
            found = tuple(e for s in sorted(self._tables.configs[config]) for e in edges[s])
            self._token_edges[config] = found
        return found

    def token_step(self, state: ParseState, token_id: int, ordinary: bool,
                   width: int) -> ParseState | None:
        """The state after token ``token_id`` taken through token edges, or ``None``."""
        tables = self._tables
        kernel: dict[Frame, int] = {}
        for frame, config in state.groups:
            targets = [target for edge, target in self.token_edges(config)
                       if (token_id not in edge.ids if edge.exclude and ordinary
                           else not edge.exclude and token_id in edge.ids)]
            if targets:
                kernel[frame] = tables.closed_config(targets)
        if not kernel:
            return None
        position = state.position + width
        return ParseState(position, tuple(tables.close(kernel, position).items()))

    def next_bytes(self, state: ParseState) -> bytes:
        """The bytes that can follow ``state``, ascending."""
        tables = self._tables
        possible: set[int] = set()
        for _, config in state.groups:
            row = tables.rows[config]
            if row is None:
                row = tables.build_row(config)
            possible.update(b for b in range(256) if row[b] >= 0)
        return bytes(sorted(possible))

    def merge(self, a: ParseState, b: ParseState) -> ParseState:
        """The items of both states (a token that is both text and a ``Token`` edge)."""
        groups = dict(a.groups)
        for frame, config in b.groups:
            old = groups.get(frame)
            groups[frame] = config if old is None else self._tables.union(old, config)
        return ParseState(max(a.position, b.position), tuple(groups.items()))

    def state_key(self, state: ParseState, frame_keys: dict[Frame, int]) -> StateKey:
        """The canonical key of ``state`` (see :meth:`StateAutomaton.state_key`)."""
        return self.automaton.state_key(state, frame_keys)


_ENGINES: weakref.WeakKeyDictionary[CompiledGrammar, dict[Vocabulary, MaskEngine]] = (
    weakref.WeakKeyDictionary())


def mask_engine(compiled: CompiledGrammar, vocab: Vocabulary) -> MaskEngine:
    """The shared engine of ``compiled`` and ``vocab`` (built on first use)."""
    per_vocab = _ENGINES.setdefault(compiled, {})
    engine = per_vocab.get(vocab)
    if engine is None:
        engine = per_vocab[vocab] = MaskEngine(compiled, vocab)
    return engine
