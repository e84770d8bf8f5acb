"""Rules that decide which tokens are control (special) tokens and which end generation.

Two name rules, applied to a token's UTF-8 text:

* the *strict* rule, safe on every token of any vocabulary: ``<|...|>`` and the DeepSeek
  fullwidth-bar form ``<｜...｜>`` with no whitespace inside;
* the *broad* rule, applied only to out-of-band tokens (added tokens, tiktoken special
  tokens): also ``<...>`` tags without whitespace (``<s>``, ``</s>``, ``<unk>``, ``<pad>``,
  ``<think>``, ``<tool_call>``), anything starting with ``<|``/``<｜`` or ending with
  ``|>``/``｜>``, and bracketed upper-case markers such as ``[INST]``.

Ordinary vocabulary entries such as ``<div>`` are never special by name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_STRICT = re.compile(r"<[|｜]\S*[|｜]>")
_BROAD = re.compile(r"<[^\s<>]+>|<[|｜].*|.*[|｜]>|\[/?[A-Z][A-Z0-9_]*\]", re.DOTALL)

#: Texts of tokens that end a generation when they are special tokens of the vocabulary.
STOP_NAMES = frozenset(
    {
        "<|endoftext|>",
        "<|im_end|>",
        "<|eot_id|>",
        "<|eom_id|>",
        "<|end_of_text|>",
        "</s>",
        "<｜end▁of▁sentence｜>",
        "<eos>",
        "<end_of_turn>",
        "<|return|>",
        "<|call|>",
    }
)
_STOP_BYTES = frozenset(name.encode() for name in STOP_NAMES)


def _text(token: bytes) -> str | None:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return None


def is_strict_control(token: bytes) -> bool:
    """Whether ``token`` is a control token by the strict rule (safe on any token)."""
    if not (token.startswith(b"<") and token.endswith(b">")):
        return False
    text = _text(token)
    return text is not None and _STRICT.fullmatch(text) is not None


def is_control_name(token: bytes) -> bool:
    """Whether an out-of-band token's text looks like a control token (the broad rule)."""
    text = _text(token)
    return text is not None and _BROAD.fullmatch(text) is not None


def detect_special(
    tokens: Sequence[bytes], *, flagged: Iterable[int] = (), added: Iterable[int] = ()
) -> set[int]:
    """Ids of special tokens: ``flagged`` ones, ``added`` ones named like control tokens,
    any token matching the strict rule, and every empty (unused) id."""
    special = set(flagged)
    special.update(i for i in added if is_control_name(tokens[i]))
    special.update(
        i for i, tok in enumerate(tokens) if not tok or (tok[:1] == b"<" and is_strict_control(tok))
    )
    return special


def detect_stop(tokens: Sequence[bytes], special: Iterable[int]) -> set[int]:
    """Ids among ``special`` whose text is a known end-of-sequence name (`STOP_NAMES`)."""
    return {i for i in special if tokens[i] in _STOP_BYTES}
