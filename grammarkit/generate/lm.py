"""Language models behind generation: the `LanguageModel` protocol, `RandomLM`, `TransformersLM`."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from grammarkit.generate.errors import GenerationError, require

if TYPE_CHECKING:
    from grammarkit.vocab import Vocabulary

Logits = npt.NDArray[np.float32]

_CLOSING = frozenset(c.encode() for c in ')]}"\'>;')


@runtime_checkable
class LanguageModel(Protocol):
    """Anything that scores the next token.

    ``logits(token_ids)`` returns float32 scores of shape ``[vocab_size]`` for the token after
    ``token_ids`` (the prompt followed by what was generated so far).
    """

    @property
    def vocab_size(self) -> int: ...

    def logits(self, token_ids: Sequence[int]) -> Logits: ...


class RandomLM:
    """Seeded random logits: a stand-in model for previews and tests.

    The scores are a function of ``seed`` and the whole context (two fixed random tables, each
    rotated by a hash of the context), so the same context always gets the same scores and two
    backends given the same model see the same distribution. Short printable tokens score
    higher, so previews read like text rather than a byte soup; with an ``ending_bias``, stop
    tokens and closing characters (``)]}"'>;``) gain that much per token of context, so that
    previews end (``grammarkit sample --tokenizer`` uses 0.25).

    Parameters
    ----------
    vocab
        The vocabulary whose ids are scored.
    seed
        Selects the random function.
    ending_bias
        Added to the scores of stop tokens and closing characters per token of context
        (default 0: the length of the context does not matter).
    """

    def __init__(self, vocab: Vocabulary, seed: int = 0, ending_bias: float = 0.0):
        self.vocab = vocab
        self.seed = seed
        self.ending_bias = ending_bias
        tables = np.random.default_rng(seed).standard_normal((2, vocab.vocab_size),
                                                              dtype=np.float32)
        self._tables = tables / np.float32(np.sqrt(2.0))
        self._prior = _readability_prior(vocab)
        endings = [i for i in range(vocab.vocab_size)
                   if i in vocab.stop_ids or vocab.tokens[i] in _CLOSING]
        self._endings = np.array(endings, dtype=np.int64)

    @property
    def vocab_size(self) -> int:
        return self.vocab.vocab_size

    def logits(self, token_ids: Sequence[int]) -> Logits:
        digest = hashlib.blake2b(np.asarray(token_ids, dtype=np.int64).tobytes(),
                                 digest_size=8).digest()
        size = self.vocab_size
        shift = int.from_bytes(digest, "little")
        first = np.roll(self._tables[0], shift % size)
        second = np.roll(self._tables[1], (shift // size) % size)
        scores = first + second + self._prior
        scores[self._endings] += np.float32(self.ending_bias * len(token_ids))
        return scores

    def __repr__(self) -> str:
        return f"RandomLM({self.vocab!r}, seed={self.seed})"


def _readability_prior(vocab: Vocabulary) -> Logits:
    """A per-token bonus: printable ASCII tokens of a few characters are likeliest; tokens with
    a backslash (escapes) and tokens of whitespace only are rare."""
    arrays = vocab.to_arrays()
    unprintable = (arrays.data < 32) | (arrays.data >= 127)
    counts = np.concatenate(([0], np.cumsum(unprintable, dtype=np.int64)))
    bad = counts[arrays.offsets[1:]] - counts[arrays.offsets[:-1]]
    lengths = arrays.lengths.astype(np.float32)
    blank = (arrays.data == 32) | (arrays.data == 9) | (arrays.data == 10) | (arrays.data == 13)
    blanks = np.concatenate(([0], np.cumsum(~blank, dtype=np.int64)))
    whitespace_only = (blanks[arrays.offsets[1:]] - blanks[arrays.offsets[:-1]]) == 0
    prior = np.where(bad == 0, np.float32(1.5), np.float32(-1.5))
    prior -= np.float32(0.15) * np.maximum(0, lengths - 3)
    escapes = np.concatenate(([0], np.cumsum(arrays.data == 0x5C, dtype=np.int64)))
    prior[(escapes[arrays.offsets[1:]] - escapes[arrays.offsets[:-1]]) > 0] -= 4.0
    prior[whitespace_only] = -7.0
    prior[lengths == 0] = 0
    return prior.astype(np.float32)


class TransformersLM:
    """A Hugging Face causal language model (any ``AutoModelForCausalLM``), CPU or GPU.

    The key/value cache of the last call is kept: a call whose tokens extend the previous call's
    only runs the new tokens through the model.

    Parameters
    ----------
    model
        A transformers causal LM (``model(input_ids, past_key_values=..., use_cache=True)``).
    tokenizer
        Its tokenizer, used for text prompts and for the vocabulary; may be ``None`` when
        prompts are token ids and a vocabulary is given separately.

    Raises
    ------
    MissingExtraError
        When torch or transformers is not installed (extra ``grammarkit[hf]``).
    """

    def __init__(self, model: Any, tokenizer: Any = None):
        require("torch", "hf", "TransformersLM")
        require("transformers", "hf", "TransformersLM")
        self.model = model
        self.tokenizer = tokenizer
        head = model.get_output_embeddings()
        self._vocab_size = int(head.weight.shape[0] if head is not None
                               else model.config.vocab_size)
        parameters = inspect.signature(model.forward).parameters
        self._cache_keyword = "cache" if "cache" in parameters else "past_key_values"
        self._cached: tuple[int, ...] = ()
        self._past: Any = None
        self._last: Logits | None = None

    @classmethod
    def from_pretrained(cls, name: str, **model_kwargs: Any) -> TransformersLM:
        """Load a model and its tokenizer by name or path (the local cache only, no download)."""
        require("torch", "hf", "TransformersLM")
        require("transformers", "hf", "TransformersLM")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(name, local_files_only=True, **model_kwargs)
        model.eval()
        return cls(model, tokenizer)

    @property
    def vocab_size(self) -> int:
        """Rows of the lm head (may exceed the tokenizer's vocabulary: padded heads)."""
        return self._vocab_size

    def vocabulary(self) -> Vocabulary:
        """The tokenizer's vocabulary, padded to the lm head's size.

        Raises
        ------
        GenerationError
            GK353 when there is no tokenizer, or the lm head has fewer rows than the tokenizer
            has ordinary tokens.
        """
        from grammarkit.vocab import Vocabulary

        if self.tokenizer is None:
            raise GenerationError("GK353", "TransformersLM has no tokenizer to read a "
                                  "vocabulary from", "pass tokenizer=... or vocab=...")
        return fit_vocabulary(Vocabulary.from_tokenizer(self.tokenizer), self.vocab_size)

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` by the tokenizer (with its special prefix tokens, if any)."""
        if self.tokenizer is None:
            raise GenerationError("GK353", "TransformersLM has no tokenizer to encode text",
                                  "pass token ids as the prompt")
        return list(self.tokenizer(text)["input_ids"])

    def logits(self, token_ids: Sequence[int]) -> Logits:
        import torch

        ids = tuple(int(i) for i in token_ids)
        if not ids:
            raise GenerationError("GK352", "the prompt is empty and the model has no "
                                  "context to predict from", "give at least one prompt token")
        common = _common_prefix(self._cached, ids)
        if common == len(ids) == len(self._cached) and self._last is not None:
            return self._last.copy()
        if common == len(ids):  # a prefix of what is cached: recompute its last position
            common -= 1
        past = self._past if common else None
        if past is not None and common < len(self._cached):
            if not hasattr(past, "crop"):
                past, common = None, 0
            else:
                past.crop(common - len(self._cached))  # negative: drop that many positions
        device = next(self.model.parameters()).device
        new = torch.tensor([ids[common:]], dtype=torch.long, device=device)
        with torch.no_grad():
            out = self.model(input_ids=new, use_cache=True, **{self._cache_keyword: past})
        self._past = getattr(out, "cache", None) or out.past_key_values
        self._cached = ids
        self._last = out.logits[0, -1].float().cpu().numpy()
        return self._last.copy()

    def __repr__(self) -> str:
        return f"TransformersLM({type(self.model).__name__}, vocab_size={self.vocab_size})"


def fit_vocabulary(vocab: Vocabulary, vocab_size: int) -> Vocabulary:
    """``vocab`` padded to a model's ``vocab_size``.

    Raises
    ------
    GenerationError
        GK353 when the model scores fewer ids than the vocabulary has ordinary tokens.
    """
    from grammarkit.vocab import VocabularyError

    if vocab.vocab_size == vocab_size:
        return vocab
    try:
        return vocab.with_vocab_size(vocab_size)
    except VocabularyError:
        raise GenerationError(
            "GK353", f"the model scores {vocab_size} token ids but the vocabulary "
            f"({vocab.source}) has {vocab.vocab_size}, with ordinary tokens beyond {vocab_size}",
            "use the tokenizer that belongs to the model") from None


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n
