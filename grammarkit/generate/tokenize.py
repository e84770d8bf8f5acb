"""Greedy longest-match tokenization over a vocabulary's ordinary tokens.

Used for text that no model tokenizer handles: jump-forward text the grammar forces, and text
prompts for models without a tokenizer (`RandomLM`).
"""

from __future__ import annotations

from functools import lru_cache

from grammarkit.generate.errors import GenerationError
from grammarkit.vocab import Vocabulary


class GreedyTokenizer:
    """Splits bytes into the longest ordinary tokens of ``vocab``, left to right."""

    def __init__(self, vocab: Vocabulary):
        index: dict[bytes, int] = {}
        special = vocab.special_ids
        for i in range(vocab.vocab_size - 1, -1, -1):
            data = vocab.tokens[i]
            if data and i not in special:
                index[data] = i
        self._index = index
        self._longest = max(map(len, index), default=0)

    def prefix_tokens(self, data: bytes, limit: int) -> list[int]:
        """At most ``limit`` tokens spelling a prefix of ``data`` (stops where none fits)."""
        ids: list[int] = []
        pos = 0
        while pos < len(data) and len(ids) < limit:
            found = self._longest_at(data, pos)
            if found is None:
                break
            token, size = found
            ids.append(token)
            pos += size
        return ids

    def encode(self, data: bytes) -> list[int]:
        """Tokens spelling exactly ``data``.

        Raises
        ------
        GenerationError
            GK352 when some byte is in no token of the vocabulary.
        """
        ids: list[int] = []
        pos = 0
        while pos < len(data):
            found = self._longest_at(data, pos)
            if found is None:
                raise GenerationError(
                    "GK352", f"no token of the vocabulary spells byte {data[pos]:#04x} "
                    f"at offset {pos} of the prompt",
                    "pass the prompt as token ids (`--prompt-ids` on the command line)")
            ids.append(found[0])
            pos += found[1]
        return ids

    def _longest_at(self, data: bytes, pos: int) -> tuple[int, int] | None:
        for size in range(min(self._longest, len(data) - pos), 0, -1):
            token = self._index.get(data[pos:pos + size])
            if token is not None:
                return token, size
        return None


@lru_cache(maxsize=4)
def greedy_tokenizer(vocab: Vocabulary) -> GreedyTokenizer:
    """The (cached) greedy tokenizer of ``vocab``."""
    return GreedyTokenizer(vocab)
