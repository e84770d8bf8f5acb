"""Tiny tokenizer.json documents written by hand, one per decoding scheme."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from grammarkit.vocab.decoding import BYTE_TO_UNICODE


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def added(token_id: int, content: str, special: bool) -> dict[str, Any]:
    return {
        "id": token_id,
        "content": content,
        "single_word": False,
        "lstrip": False,
        "rstrip": False,
        "normalized": not special,
        "special": special,
    }


BYTE_LEVEL_WORDS = ["Ġhello", "Ġwor", "ld", "ĊĊ", "ĠÃ", "Ġâĸ", "ģ", "Ġ<div>"]


def byte_level_doc() -> dict[str, Any]:
    """GPT-2 style byte-level BPE: the 256 byte characters, a few merges, added tokens."""
    vocab = {BYTE_TO_UNICODE[b]: b for b in range(256)}
    for word in BYTE_LEVEL_WORDS:
        vocab.setdefault(word, len(vocab))
    n = len(vocab)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            added(n, "<|endoftext|>", True),
            added(n + 1, "<|im_end|>", True),
            added(n + 2, "<think>", False),
            added(n + 3, "｜DSML｜", False),
            added(n + 4, "two words", False),
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": None,
        "decoder": {
            "type": "ByteLevel",
            "add_prefix_space": True,
            "trim_offsets": True,
            "use_regex": True,
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": ["l d"],
        },
    }


def byte_fallback_doc() -> dict[str, Any]:
    """Llama-2 style SentencePiece BPE with ``<0xNN>`` byte pieces and ``▁`` for space."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
    for piece in ["▁", "▁hello", "▁wor", "ld", "é", "▁▁", "<0x4g>", "▁<s>"]:
        vocab[piece] = len(vocab)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [added(0, "<unk>", True), added(1, "<s>", True), added(2, "</s>", True)],
        "normalizer": {
            "type": "Sequence",
            "normalizers": [
                {"type": "Prepend", "prepend": "▁"},
                {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            ],
        },
        "pre_tokenizer": None,
        "post_processor": None,
        "decoder": {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ],
        },
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": "<unk>",
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": True,
            "byte_fallback": True,
            "vocab": vocab,
            "merges": [],
        },
    }


def metaspace_doc() -> dict[str, Any]:
    """T5 style Unigram with a Metaspace pre-tokenizer and decoder (no byte pieces)."""
    pieces = ["<pad>", "</s>", "<unk>", "▁", "▁the", "s", "▁über", "ö", "▁a▁b"]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            added(0, "<pad>", True),
            added(1, "</s>", True),
            added(2, "<unk>", True),
            added(len(pieces), "<extra_id_0>", True),
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Metaspace",
            "replacement": "▁",
            "prepend_scheme": "always",
            "split": True,
        },
        "post_processor": None,
        "decoder": {
            "type": "Metaspace",
            "replacement": "▁",
            "prepend_scheme": "always",
            "split": True,
        },
        "model": {
            "type": "Unigram",
            "unk_id": 2,
            "vocab": [[piece, -float(i)] for i, piece in enumerate(pieces)],
            "byte_fallback": False,
        },
    }
