"""`BatchTokenMatcher`: one call fills (or advances) the rows of many matchers.

The counterpart of ``xgrammar.BatchGrammarMatcher`` for a server decoding many sequences at
once: each matcher's mask lands in its own row of one bitmask. Matchers in the same state of
the same grammar share their mask, so the batch writes each distinct mask once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from grammarkit.decode.bitmask import Words, bitmask_width
from grammarkit.decode.matcher import TokenMatcher, check_bitmask


class BatchTokenMatcher:
    """Batch operations over :class:`TokenMatcher` objects (any grammars, one vocabulary size
    per bitmask)."""

    def batch_fill_next_token_bitmask(self, matchers: Sequence[TokenMatcher],
                                      bitmask: npt.NDArray[np.int32],
                                      indices: Sequence[int] | None = None) -> None:
        """Write each matcher's next-token mask into its row of ``bitmask``.

        Parameters
        ----------
        matchers
            The matchers, all over vocabularies of the same size.
        bitmask
            ``int32`` words as from :func:`~grammarkit.decode.allocate_token_bitmask`, at least
            as many rows as the largest index.
        indices
            The row of each matcher (``0..len(matchers) - 1`` by default).

        Raises
        ------
        ValueError
            If the vocabularies differ in size, ``indices`` does not give one distinct row per
            matcher, or ``bitmask`` cannot hold them.
        """
        rows = list(range(len(matchers))) if indices is None else [int(i) for i in indices]
        if len(rows) != len(matchers):
            raise ValueError(f"{len(matchers)} matchers but {len(rows)} indices")
        if len(set(rows)) != len(rows):
            raise ValueError("indices must be distinct rows")
        if not matchers:
            return
        sizes = {m.vocab_size for m in matchers}
        if len(sizes) != 1:
            raise ValueError(f"matchers have different vocabulary sizes: {sorted(sizes)}")
        vocab_size = sizes.pop()
        for row in rows:
            check_bitmask(bitmask, vocab_size, row)
        width = bitmask_width(vocab_size)
        bitmask[rows, width:] = 0
        shared: dict[int, tuple[Words | None, list[int]]] = {}
        stops: list[tuple[int, TokenMatcher]] = []
        for matcher, row in zip(matchers, rows, strict=True):
            words = matcher.next_token_words()
            shared.setdefault(id(words), (words, []))[1].append(row)
            if matcher.stop_allowed():
                stops.append((row, matcher))
        for words, same in shared.values():
            bitmask[same, :width] = 0 if words is None else words
        for row, matcher in stops:
            matcher.stop_bits.set_in(bitmask[row])

    @staticmethod
    def batch_accept_token(matchers: Sequence[TokenMatcher],
                           tokens: Sequence[int]) -> list[bool]:
        """Offer ``tokens[i]`` to ``matchers[i]``; whether each was accepted.

        Raises
        ------
        ValueError
            If the two sequences differ in length.
        """
        if len(matchers) != len(tokens):
            raise ValueError(f"{len(matchers)} matchers but {len(tokens)} tokens")
        return [m.accept_token(t) for m, t in zip(matchers, tokens, strict=True)]

    @staticmethod
    def batch_accept_string(matchers: Sequence[TokenMatcher],
                            strings: Sequence[str | bytes]) -> list[bool]:
        """Offer ``strings[i]`` to ``matchers[i]``; whether each was accepted.

        Raises
        ------
        ValueError
            If the two sequences differ in length.
        """
        if len(matchers) != len(strings):
            raise ValueError(f"{len(matchers)} matchers but {len(strings)} strings")
        return [m.accept_string(s) for m, s in zip(matchers, strings, strict=True)]

    @staticmethod
    def batch_rollback(matchers: Sequence[TokenMatcher],
                       num_tokens: Sequence[int] | int = 1) -> None:
        """Roll each matcher back by ``num_tokens`` (one count for all, or one each).

        Raises
        ------
        ValueError
            If the counts do not match the matchers, or a matcher keeps too few steps.
        """
        counts = [num_tokens] * len(matchers) if isinstance(num_tokens, int) else list(num_tokens)
        if len(counts) != len(matchers):
            raise ValueError(f"{len(matchers)} matchers but {len(counts)} counts")
        for matcher, count in zip(matchers, counts, strict=True):
            matcher.rollback(count)
