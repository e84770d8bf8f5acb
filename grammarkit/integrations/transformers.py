"""A transformers ``LogitsProcessor`` that constrains ``model.generate(...)`` to a grammar.

>>> from grammarkit.integrations.transformers import GrammarLogitsProcessor
>>> processor = GrammarLogitsProcessor(gk.JsonSchema(schema), tokenizer)
>>> model.generate(**inputs, logits_processor=[processor], max_new_tokens=64)

Needs the extra ``grammarkit[hf]`` (torch and transformers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from grammarkit.decode.bitmask import allocate_token_bitmask, apply_token_bitmask, words_from_bools
from grammarkit.decode.matcher import TokenMatcher
from grammarkit.generate.constraint import Constraint, as_grammar
from grammarkit.generate.errors import require
from grammarkit.generate.lm import fit_vocabulary

if TYPE_CHECKING:
    from grammarkit.vocab import Vocabulary

require("torch", "hf", "grammarkit.integrations.transformers")
require("transformers", "hf", "grammarkit.integrations.transformers")

from transformers import LogitsProcessor  # after the check that names the extra


class GrammarLogitsProcessor(LogitsProcessor):
    """Masks every token the grammar does not allow next, for each sequence of the batch.

    The first call sees the prompts; each later call accepts the token that ``generate`` chose
    for every sequence. A sequence whose grammar is complete may only end (its stop tokens);
    after it ended, only its stop tokens are allowed (``generate`` pads with them).

    Parameters
    ----------
    constraint
        A `Grammar`, EBNF text, `JsonSchema` or `Regex`.
    tokenizer
        The model's transformers tokenizer, or a `Vocabulary`.
    stop_token_ids
        End-of-sequence ids; by default the vocabulary's and the tokenizer's ``eos_token_id``.

    Raises
    ------
    MissingExtraError
        GK351 when torch or transformers is not installed.
    """

    def __init__(self, constraint: Constraint, tokenizer: Any,
                 stop_token_ids: list[int] | None = None):
        from grammarkit.vocab import Vocabulary

        self.grammar = as_grammar(constraint)
        if isinstance(tokenizer, Vocabulary):
            self.vocab = tokenizer
        else:
            self.vocab = Vocabulary.from_tokenizer(tokenizer)
        if stop_token_ids is None:
            eos = getattr(tokenizer, "eos_token_id", None)
            stop_token_ids = sorted(self.vocab.stop_ids | ({eos} if isinstance(eos, int) else set()))
        self.stop_token_ids = stop_token_ids
        self._matchers: list[TokenMatcher] = []
        self._expected_length = -1
        self._sized: Vocabulary | None = None

    def reset(self) -> None:
        """Forget the batch (done automatically when a new ``generate`` call starts)."""
        self._matchers = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        rows, length = input_ids.shape
        vocab_size = scores.shape[-1]
        if len(self._matchers) != rows or length != self._expected_length:
            self._start(rows, vocab_size)
        else:
            for row, token in enumerate(input_ids[:, -1].tolist()):
                matcher = self._matchers[row]
                if not matcher.is_terminated():
                    matcher.accept_token(token)
        self._expected_length = length + 1
        bitmask = allocate_token_bitmask(rows, vocab_size)
        for row, matcher in enumerate(self._matchers):
            if matcher.is_terminated():
                bitmask[row] = self._ended_row(vocab_size)
            else:
                matcher.fill_next_token_bitmask(bitmask, row)
        return apply_token_bitmask(scores, bitmask)

    def _ended_row(self, vocab_size: int) -> Any:
        allowed = np.zeros(vocab_size, dtype=np.bool_)
        allowed[[i for i in self.stop_token_ids if i < vocab_size]] = True
        return words_from_bools(allowed)

    def _start(self, rows: int, vocab_size: int) -> None:
        if self._sized is None or self._sized.vocab_size != vocab_size:
            self._sized = fit_vocabulary(self.vocab, vocab_size)
        self._matchers = [TokenMatcher(self.grammar, self._sized,
                                       stop_token_ids=self.stop_token_ids) for _ in range(rows)]
