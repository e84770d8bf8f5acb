"""``.tiktoken`` and quicktok ``.vocab`` files: parsing, special tokens, truncation, junk."""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import pytest

from grammarkit.vocab import Vocabulary, VocabularyError

TOKENS = [b"a", b"b", b" hello", b"\xe2\x96", b"<|reserved_0|>"]


def _tiktoken_text(tokens: list[bytes], start: int = 0) -> bytes:
    return b"".join(
        base64.b64encode(t) + b" " + str(i).encode() + b"\n" for i, t in enumerate(tokens, start)
    )


def test_small_tiktoken_file(tmp_path: Path) -> None:
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(_tiktoken_text(TOKENS))
    vocab = Vocabulary.from_file(path, special_tokens={"<|endoftext|>": 7, "<|im_end|>": 5})
    assert vocab.tokens == (*TOKENS, b"<|im_end|>", b"", b"<|endoftext|>")
    assert vocab.special_ids == {4, 5, 6, 7}  # strict name rule, given specials, the hole
    assert vocab.stop_ids == {5, 7}


def test_tiktoken_without_suffix_and_sparse_ranks(tmp_path: Path) -> None:
    path = tmp_path / "ranks.txt"
    path.write_bytes(b"YQ== 0\r\n\r\nYg== 3\r\n")
    vocab = Vocabulary.from_file(path)
    assert vocab.tokens == (b"a", b"", b"", b"b") and vocab.special_ids == {1, 2}


def test_special_token_collision(tmp_path: Path) -> None:
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(_tiktoken_text(TOKENS))
    with pytest.raises(VocabularyError, match="would replace token 1"):
        Vocabulary.from_file(path, special_tokens={"<|endoftext|>": 1})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"YQ== 0\nYg==\n", "line 2 is not"),
        (b"YQ== 0\nYg== 1\nYw", "line 3 is not .*truncated"),
        (b"YQ== 0\nYg== 1\nYQ== 2\n", "line 3 repeats token b'a'"),
        (b"YQ== 0\nYg== 1\nYw== 1", "line 3 repeats rank 1 .*truncated"),
        (b"Y== 0\n", "bad base64"),
        (b"hello world\n", "not a .tiktoken file"),
    ],
)
def test_bad_tiktoken_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.tiktoken"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_file(path)
    assert str(path) in str(info.value)


def test_truncated_real_tiktoken(tmp_path: Path, qwen36_path: Path) -> None:
    data = qwen36_path.read_bytes()
    cut = data.index(b"\n", len(data) // 2)  # inside line ..., then at each byte of the next
    line_end = data.index(b"\n", cut + 1)
    for end in range(cut + 2, line_end):
        path = tmp_path / "qwen.tiktoken"
        path.write_bytes(data[:end])
        with pytest.raises(VocabularyError, match="truncated"):
            Vocabulary.from_file(path)


def test_quicktok_truncated_and_corrupt(tmp_path: Path, quicktok_dir: Path) -> None:
    data = (quicktok_dir / "cl100k.vocab").read_bytes()
    path = tmp_path / "cl100k.vocab"
    path.write_bytes(data[: len(data) // 3])
    with pytest.raises(VocabularyError, match="truncated quicktok vocab"):
        Vocabulary.from_file(path)
    path.write_bytes(data + b"junk")
    with pytest.raises(VocabularyError, match="stray bytes"):
        Vocabulary.from_file(path)
    path.write_bytes(data)
    (tmp_path / "cl100k.special").write_bytes(struct.pack("<IIH", 1, 100257, 40) + b"<|end")
    with pytest.raises(VocabularyError, match="cl100k.special: truncated"):
        Vocabulary.from_file(path)


def test_sentencepiece_vocab_text_is_not_quicktok(tmp_path: Path) -> None:
    path = tmp_path / "spm.vocab"
    path.write_text("<unk>\t0\n<s>\t0\n▁the\t-3.2\n", encoding="utf-8")
    with pytest.raises(VocabularyError, match="not a recognised tokenizer file"):
        Vocabulary.from_file(path)


@pytest.mark.parametrize(
    "content",
    [b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), b"just some prose, no ranks\n"],
)
def test_non_tokenizer_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "picture.png"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match="not a recognised tokenizer file") as info:
        Vocabulary.from_file(path)
    assert str(path) in str(info.value)


def test_missing_paths(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="no such file"):
        Vocabulary.from_file(tmp_path / "nope.json")
    with pytest.raises(VocabularyError, match="directory has no tokenizer.json"):
        Vocabulary.from_file(tmp_path)
