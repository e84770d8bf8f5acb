"""`LocalBackend`: generation in this process over a `LanguageModel`, for any grammar matcher.

Subclasses say how to build a matcher session for a grammar (`native`, `xgrammar`); this class
resolves prompts, runs the decoding loop for each of the ``n`` choices, and assembles
`Completion` or streamed `Chunk` objects.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from grammarkit.generate.completion import Choice, Chunk, Completion, Timing, TokenLogprob
from grammarkit.generate.constraint import Constraint, as_grammar
from grammarkit.generate.decoding import Counters, Decoder, GrammarSession
from grammarkit.generate.errors import GenerationError
from grammarkit.generate.lm import LanguageModel, RandomLM, fit_vocabulary
from grammarkit.generate.params import SamplingParams
from grammarkit.generate.tokenize import greedy_tokenizer

if TYPE_CHECKING:
    from grammarkit.grammar import Grammar
    from grammarkit.vocab import Vocabulary


class LocalBackend:
    """Runs a `LanguageModel` under a grammar matcher in this process.

    Parameters
    ----------
    lm
        The model; ``None`` means ``RandomLM(vocab)``.
    vocab
        The model's vocabulary; ``None`` means the model's own (``lm.vocabulary()``, as
        `TransformersLM` has). It is padded to the model's size when the lm head is larger.

    Raises
    ------
    GenerationError
        GK354 when neither is given; GK353 when the sizes cannot be reconciled.
    """

    name = "local"

    def __init__(self, lm: LanguageModel | None = None, vocab: Vocabulary | None = None):
        if vocab is None:
            vocabulary = getattr(lm, "vocabulary", None)
            if vocabulary is None:
                raise GenerationError(
                    "GK354", f"the {self.name} backend needs a vocabulary or a model with a "
                    "tokenizer", "pass vocab=gk.Vocabulary.from_file(...) (a RandomLM is used) "
                    "or lm=TransformersLM(model, tokenizer)")
            vocab = vocabulary()
        if lm is None:
            lm = RandomLM(vocab)
        self.lm: LanguageModel = lm
        self.vocab: Vocabulary = fit_vocabulary(vocab, lm.vocab_size)

    # -- what subclasses provide ---------------------------------------------------------------
    def session(self, grammar: Grammar, stop_token_ids: Sequence[int]) -> GrammarSession:
        """A fresh matcher for one sequence of ``grammar`` with these stop tokens."""
        raise NotImplementedError

    def blocked_ids(self, grammar: Grammar) -> npt.NDArray[np.int64] | None:
        """Ids to forbid on top of the matcher's mask (``None``: none)."""
        return None

    # -- Backend protocol ----------------------------------------------------------------------
    def generate(self, constraint: Constraint, prompt: Sequence[int] | str,
                 params: SamplingParams | None = None) -> Completion:
        """Complete ``prompt`` under ``constraint``; ``params.n`` choices."""
        started = time.perf_counter()
        params = params or SamplingParams()
        choices: list[Choice] = []
        counters: list[Counters] = []
        completion_tokens = 0
        ids, runs = self._runs(constraint, prompt, params)
        for index, decoder in enumerate(runs):
            tokens: list[int] = []
            logprobs: list[TokenLogprob] = []
            for step in decoder.steps():
                if step.token_id is not None:
                    tokens.append(step.token_id)
                    if step.logprob is not None:
                        logprobs.append(step.logprob)
                if step.finish_reason is None:
                    continue
                data = b"".join(self.vocab.tokens[t] for t in tokens)
                if step.stop_at is not None:
                    data = data[: step.stop_at]
                choices.append(Choice(index, data.decode("utf-8", "replace"), tokens,
                                      step.finish_reason, step.matched_stop,
                                      logprobs if params.logprobs is not None else None))
                completion_tokens += len(tokens) + isinstance(step.matched_stop, int)
            counters.append(decoder.counters)
        return Completion(choices, len(ids), completion_tokens,
                          _timing(counters, time.perf_counter() - started))

    def stream(self, constraint: Constraint, prompt: Sequence[int] | str,
               params: SamplingParams | None = None) -> Iterator[Chunk]:
        """Like `generate`, as chunks of complete characters; each choice ends with a chunk
        holding its ``finish_reason`` (choices follow one another)."""
        params = params or SamplingParams()
        _, runs = self._runs(constraint, prompt, params)
        hold = max((len(s.encode("utf-8")) for s in params.stop), default=1) - 1
        for index, decoder in enumerate(runs):
            text = bytearray()
            sent = 0
            for step in decoder.steps():
                if step.token_id is not None:
                    text += self.vocab.tokens[step.token_id]
                if step.finish_reason is None:
                    end = _complete_prefix(text, len(text) - hold)
                elif step.stop_at is not None:
                    end = step.stop_at
                else:
                    end = len(text)
                chunk = bytes(text[sent:max(sent, end)]).decode("utf-8", "replace")
                sent = max(sent, end)
                yield Chunk(index, chunk, [] if step.token_id is None else [step.token_id],
                            step.finish_reason, step.matched_stop,
                            None if step.logprob is None else [step.logprob])

    # -- helpers -------------------------------------------------------------------------------
    def _runs(self, constraint: Constraint, prompt: Sequence[int] | str,
              params: SamplingParams) -> tuple[list[int], Iterator[Decoder]]:
        """The prompt's ids and a decoder per choice (made lazily, one after another)."""
        grammar = as_grammar(constraint)
        ids = self.prompt_ids(prompt)
        size = self.lm.vocab_size
        bad = sorted({i for i in params.stop_token_ids if i >= size}
                     | {i for i in (params.logit_bias or {}) if i >= size})
        if bad:
            raise GenerationError("GK352", f"token ids {bad[:5]} in the sampling parameters are "
                                  f"out of range for a vocabulary of {size}",
                                  f"token ids go from 0 to {size - 1}")
        stops = sorted(set(self.vocab.stop_ids) | set(params.stop_token_ids))
        rng = np.random.default_rng(params.seed)
        blocked = self.blocked_ids(grammar)

        def decoders() -> Iterator[Decoder]:
            for _ in range(params.n):
                yield Decoder(self.session(grammar, stops), self.lm, self.vocab, ids, params,
                              rng, blocked)

        return ids, decoders()

    def prompt_ids(self, prompt: Sequence[int] | str) -> list[int]:
        """The prompt as token ids: text through the model's tokenizer (or greedy longest
        match over the vocabulary when the model has none).

        Raises
        ------
        GenerationError
            GK352 when an id is out of range.
        """
        if isinstance(prompt, str):
            encode = getattr(self.lm, "encode", None)
            if encode is not None and getattr(self.lm, "tokenizer", None) is not None:
                return list(encode(prompt))
            return greedy_tokenizer(self.vocab).encode(prompt.encode("utf-8"))
        ids = []
        for position, token in enumerate(prompt):
            if (isinstance(token, bool) or not isinstance(token, (int, np.integer))
                    or not 0 <= token < self.lm.vocab_size):
                raise GenerationError(
                    "GK352", f"prompt token {token!r} at position {position} is out of range "
                    f"for a vocabulary of {self.lm.vocab_size}",
                    f"token ids go from 0 to {self.lm.vocab_size - 1}")
            ids.append(int(token))
        return ids

    def __repr__(self) -> str:
        return f"{type(self).__name__}(lm={self.lm!r}, vocab={self.vocab!r})"


def _complete_prefix(data: bytearray, limit: int) -> int:
    """The longest prefix of ``data[:limit]`` that does not end inside a UTF-8 character."""
    end = max(0, min(limit, len(data)))
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte < 0x80:
            return end
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end if back >= need else end - back
    return end


def _timing(counters: list[Counters], total: float) -> Timing:
    return Timing(sum(c.mask_seconds for c in counters), sum(c.model_seconds for c in counters),
                  total, sum(c.model_calls for c in counters),
                  sum(c.jump_forward_tokens for c in counters))

