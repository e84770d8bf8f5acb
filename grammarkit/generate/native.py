"""The ``native`` backend: grammarkit's own `TokenMatcher` masks the model's logits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from grammarkit.decode.matcher import TokenMatcher
from grammarkit.generate.local import LocalBackend

if TYPE_CHECKING:
    from grammarkit.grammar import Grammar
    from grammarkit.vocab import Vocabulary


class NativeSession:
    """A `TokenMatcher` as a decoding session."""

    def __init__(self, grammar: Grammar, vocab: Vocabulary, stop_token_ids: Sequence[int]):
        self.matcher = TokenMatcher(grammar, vocab, stop_token_ids=stop_token_ids)

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        self.matcher.fill_next_token_bitmask(bitmask)

    def accept_token(self, token_id: int) -> bool:
        return self.matcher.accept_token(token_id)

    def forced_bytes(self) -> bytes:
        return self.matcher.find_jump_forward_bytes()


class NativeBackend(LocalBackend):
    """Generation in this process with grammarkit's `TokenMatcher`.

    Parameters
    ----------
    lm
        The model (``None``: ``RandomLM(vocab)``).
    vocab
        Its vocabulary (``None``: the model's own).
    """

    name = "native"

    def session(self, grammar: Grammar, stop_token_ids: Sequence[int]) -> NativeSession:
        return NativeSession(grammar, self.vocab, stop_token_ids)
