"""Malformed tokenizer files: every failure is a `VocabularyError` naming the file and why.

Each case is an input a hostile-input run found leaking another exception type (issue 8), or
costing seconds and gigabytes for a few bytes of file.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from vocab_docs import added, byte_level_doc, metaspace_doc, write_json

from grammarkit.vocab import MAX_TOKEN_ID, Vocabulary, VocabularyError


def _load_error(path: Path, **options: Any) -> str:
    with pytest.raises(VocabularyError) as info:
        Vocabulary.from_file(path, **options)
    message = str(info.value)
    assert str(path) in message
    return message


def test_unigram_unk_id_beyond_the_vocabulary(tmp_path: Path) -> None:
    doc = metaspace_doc()
    doc["model"]["unk_id"] = len(doc["model"]["vocab"]) + 5
    message = _load_error(write_json(tmp_path / "tokenizer.json", doc))
    assert "unk_id" in message


@pytest.mark.parametrize("where", ["tokenizer.json", "tokenizer_config.json"])
def test_deeply_nested_json(tmp_path: Path, where: str) -> None:
    write_json(tmp_path / "tokenizer.json", byte_level_doc())
    deep = b"[" * 100_000 + b"]" * 100_000
    if where == "tokenizer.json":
        (tmp_path / where).write_bytes(b'{"model": ' + deep + b"}")
    else:
        (tmp_path / where).write_bytes(b'{"eos_token": ' + deep + b"}")
    message = _load_error(tmp_path / "tokenizer.json") if where == "tokenizer.json" else ""
    if where != "tokenizer.json":
        with pytest.raises(VocabularyError, match="nested too deeply") as info:
            Vocabulary.from_file(tmp_path)
        assert str(tmp_path / where) in str(info.value)
    else:
        assert "nested too deeply" in message


def test_huge_tiktoken_rank(tmp_path: Path) -> None:
    path = tmp_path / "big.tiktoken"
    path.write_bytes(b"YQ== " + b"9" * 5000 + b"\n")
    assert "rank 99999999999999999999... (5000 digits) is out of range" in _load_error(path)


def test_sparse_tiktoken_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "sparse.tiktoken"
    path.write_bytes(b"aGVsbG8= 16777215")  # 18 bytes; used to take 10 s and 2.5 GB
    start = time.process_time()
    message = _load_error(path)
    assert time.process_time() - start < 10  # refused before allocating, not after 10 s
    assert f"rank 16777215 is out of range (ranks are token ids, which must be below " \
        f"{MAX_TOKEN_ID:,})" in message


@pytest.mark.parametrize(
    "doc_ids",
    [{"a": MAX_TOKEN_ID}, {"a": 0, "b": 2**40}],
)
def test_sparse_tokenizer_json_is_refused(tmp_path: Path, doc_ids: dict[str, int]) -> None:
    doc = {"model": {"type": "BPE", "vocab": doc_ids, "merges": []}}
    assert "out of range" in _load_error(write_json(tmp_path / "tokenizer.json", doc))


def test_vocab_size_beyond_the_limit() -> None:
    with pytest.raises(VocabularyError, match="vocab_size"):
        Vocabulary([b"a"], vocab_size=MAX_TOKEN_ID + 1)


@pytest.mark.parametrize(
    "special_tokens",
    [{"\ud800": 3}, {7: 3}, {"<|x|>": "3"}, {"<|x|>": 2.5}, {"<|x|>": True}],
)
def test_bad_special_token_maps(tmp_path: Path, special_tokens: Any) -> None:
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(b"YQ== 0\nYg== 1\n")
    assert "special token" in _load_error(path, special_tokens=special_tokens)


@pytest.mark.parametrize(
    "config",
    [
        {"added_tokens_decoder": {"300": {"content": "\ud800", "special": True}}},
        {"added_tokens_decoder": {"\ud800": {"content": "x"}}},
        {"eos_token": "\ud800"},
        {"eos_token": {"content": ["not", "text"]}},
        {"added_tokens_decoder": ["not", "a", "map"]},
    ],
)
def test_bad_sibling_configs(tmp_path: Path, config: dict[str, Any]) -> None:
    write_json(tmp_path / "tokenizer.json", byte_level_doc())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), "utf-8")
    try:
        vocab = Vocabulary.from_file(tmp_path)
    except VocabularyError as exc:
        assert "tokenizer_config.json" in str(exc)
    else:  # ignoring a malformed optional entry is fine too; it must not change the tokens
        assert vocab.tokens == Vocabulary.from_file(tmp_path / "tokenizer.json").tokens


def test_lone_surrogate_added_token(tmp_path: Path) -> None:
    doc = byte_level_doc()
    doc["added_tokens"].append(added(len(doc["model"]["vocab"]) + 10, "\ud800", True))
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), "utf-8")  # ensure_ascii: the file holds "\ud800"
    assert "surrogate" in _load_error(path)
