"""Constrained generation: `generate` and `stream` through pluggable backends.

>>> import grammarkit as gk
>>> vocab = gk.Vocabulary.from_file("tokenizer.json")
>>> gk.generate(gk.JsonSchema({"type": "integer"}), "n = ", vocab=vocab).text  # RandomLM
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from grammarkit.generate.backend import Backend, backend_names, get_backend
from grammarkit.generate.completion import Choice, Chunk, Completion, Timing, TokenLogprob
from grammarkit.generate.constraint import Constraint, JsonSchema, Regex, as_grammar, request_field
from grammarkit.generate.errors import GenerationError, MissingExtraError
from grammarkit.generate.lm import LanguageModel, RandomLM, TransformersLM
from grammarkit.generate.params import SamplingParams

if TYPE_CHECKING:
    from grammarkit.vocab import Vocabulary


def generate(constraint: Constraint, prompt: Sequence[int] | str, *,
             backend: str | Backend = "native", lm: LanguageModel | None = None,
             vocab: Vocabulary | None = None, **sampling: Any) -> Completion:
    """Complete ``prompt`` under ``constraint``.

    Parameters
    ----------
    constraint
        A `Grammar`, EBNF text, `JsonSchema` or `Regex`.
    prompt
        Token ids, or text (tokenized by the model's tokenizer).
    backend
        ``"native"``, ``"xgrammar"``, ``"remote"``, a registered name or a backend object.
    lm, vocab
        The model and its vocabulary for local backends (``lm=None``: ``RandomLM(vocab)``).
    sampling
        `SamplingParams` fields (``max_tokens=64, temperature=0, stop=("\\n",)``, ...), or
        ``params=SamplingParams(...)``.

    Raises
    ------
    GenerationError
        For an unknown backend, prompt ids out of range, a vocabulary the model cannot use.
    ValueError
        Naming the sampling parameter that is out of range.
    """
    chosen = _backend(backend, lm, vocab)
    return chosen.generate(constraint, prompt, _params(sampling))


def stream(constraint: Constraint, prompt: Sequence[int] | str, *,
           backend: str | Backend = "native", lm: LanguageModel | None = None,
           vocab: Vocabulary | None = None, **sampling: Any) -> Iterator[Chunk]:
    """Like `generate`, yielding `Chunk` objects as tokens are generated."""
    chosen = _backend(backend, lm, vocab)
    return chosen.stream(constraint, prompt, _params(sampling))


def _backend(backend: str | Backend, lm: LanguageModel | None,
             vocab: Vocabulary | None) -> Backend:
    if not isinstance(backend, str):
        return get_backend(backend)
    options = {k: v for k, v in (("lm", lm), ("vocab", vocab)) if v is not None}
    return get_backend(backend, **options)


def _params(sampling: dict[str, Any]) -> SamplingParams:
    given = sampling.pop("params", None)
    if given is not None:
        if sampling:
            raise ValueError("pass either params=SamplingParams(...) or sampling keywords, "
                             "not both")
        if not isinstance(given, SamplingParams):
            raise TypeError(f"params must be SamplingParams, not {type(given).__name__}")
        return given
    return SamplingParams.from_mapping(sampling)


__all__ = [
    "Backend",
    "Choice",
    "Chunk",
    "Completion",
    "Constraint",
    "GenerationError",
    "JsonSchema",
    "LanguageModel",
    "MissingExtraError",
    "RandomLM",
    "Regex",
    "SamplingParams",
    "Timing",
    "TokenLogprob",
    "TransformersLM",
    "as_grammar",
    "backend_names",
    "generate",
    "get_backend",
    "request_field",
    "stream",
]
