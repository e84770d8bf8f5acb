"""HuggingFace tokenizer.json loading: decoding schemes, added tokens, metadata, bad files."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from vocab_docs import (
    added,
    byte_fallback_doc,
    byte_level_doc,
    metaspace_doc,
    write_json,
)

from grammarkit.vocab import Vocabulary, VocabularyError


def _reference_decode(path: Path, after: int | None = None) -> list[str]:
    """What the `tokenizers` library itself decodes for each id alone, or for each id in the
    middle of a text: after the token ``after``, whose own text is then removed."""
    tokenizers = importlib.import_module("tokenizers")
    tok = tokenizers.Tokenizer.from_file(str(path))
    size = tok.get_vocab_size(with_added_tokens=True)
    if after is None:
        return list(tok.decode_batch([[i] for i in range(size)], skip_special_tokens=False))
    prefix = tok.decode([after])
    texts = tok.decode_batch([[after, i] for i in range(size)], skip_special_tokens=False)
    assert all(text.startswith(prefix) for text in texts)
    return [text[len(prefix) :] for text in texts]


def test_byte_level(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer.json", byte_level_doc())
    vocab = Vocabulary.from_file(path)
    assert [vocab.token_bytes(b) for b in range(256)] == [bytes([b]) for b in range(256)]
    words = {vocab.token_id(t) for t in (b" hello", b" wor", b"ld", b"\n\n", b" <div>")}
    assert len(words) == 5 and not words & vocab.special_ids
    assert vocab.token_id(b" \xc3") > 255  # a partial UTF-8 sequence survives exactly
    assert vocab.token_id(b" \xe2\x96") > 255
    for text in ("<|endoftext|>", "<|im_end|>", "<think>"):
        assert vocab.is_special(vocab.token_id(text))
    assert {vocab.tokens[i] for i in vocab.stop_ids} == {b"<|endoftext|>", b"<|im_end|>"}
    assert not vocab.is_special(vocab.token_id("｜DSML｜"))  # non-special, not bracketed
    assert not vocab.is_special(vocab.token_id(b"two words"))


def test_byte_level_matches_tokenizers_decode(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer.json", byte_level_doc())
    vocab = Vocabulary.from_file(path)
    for token, text in zip(vocab.tokens, _reference_decode(path)):
        if "\ufffd" not in text:  # decode() of a partial UTF-8 token is lossy
            assert token.decode("utf-8") == text


def test_byte_fallback(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer.json", byte_fallback_doc())
    vocab = Vocabulary.from_file(path)
    assert [vocab.token_bytes(3 + b) for b in range(256)] == [bytes([b]) for b in range(256)]
    assert vocab.tokens[259:] == (
        b" ",
        b" hello",
        b" wor",
        b"ld",
        "é".encode(),
        b"  ",
        b"<0x4g>",
        b" <s>",
    )
    assert {vocab.tokens[i] for i in vocab.special_ids} == {b"<unk>", b"<s>", b"</s>"}
    assert vocab.stop_ids == {2}
    anchor = vocab.token_id(b"ld")
    reference = _reference_decode(path, after=anchor)
    assert [t.decode() for t in vocab.tokens[259:]] == reference[259:]


def test_metaspace_unigram(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer.json", metaspace_doc())
    vocab = Vocabulary.from_file(path)
    assert vocab.tokens[3:9] == (b" ", b" the", b"s", " über".encode(), "ö".encode(), b" a b")
    assert {vocab.tokens[i] for i in vocab.special_ids} == {
        b"<pad>",
        b"</s>",
        b"<unk>",
        b"<extra_id_0>",
    }
    assert vocab.stop_ids == {1}
    reference = _reference_decode(path, after=vocab.token_id(b"s"))
    assert [t.decode() for t in vocab.tokens[3:9]] == reference[3:9]


def test_decoding_inferred_without_decoder(tmp_path: Path) -> None:
    doc = byte_fallback_doc()
    doc["decoder"] = None
    vocab = Vocabulary.from_file(write_json(tmp_path / "tokenizer.json", doc))
    assert vocab.tokens[260] == b" hello"  # from the normalizer's Replace(" " -> "▁")
    doc = byte_level_doc()
    doc["decoder"] = None
    vocab = Vocabulary.from_file(write_json(tmp_path / "tokenizer.json", doc))
    assert vocab.token_id(b" hello") > 255  # from the ByteLevel pre-tokenizer


def test_directory_and_sibling_configs(tmp_path: Path) -> None:
    doc = byte_level_doc()
    write_json(tmp_path / "tokenizer.json", doc)
    n = len(doc["model"]["vocab"])
    write_json(
        tmp_path / "tokenizer_config.json",
        {
            "eos_token": {"content": "<|im_end|>", "__type": "AddedToken"},
            "added_tokens_decoder": {str(n + 3): {"content": "｜DSML｜", "special": True}},
        },
    )
    write_json(tmp_path / "generation_config.json", {"eos_token_id": [n, n + 1]})
    vocab = Vocabulary.from_file(tmp_path)
    assert vocab.is_special(n + 3)
    assert vocab.stop_ids == {n, n + 1}
    assert Vocabulary.from_file(tmp_path, stop_ids=[n + 1]).stop_ids == {n + 1}


def test_unsupported_schemes(tmp_path: Path) -> None:
    doc = byte_level_doc()
    doc["decoder"] = {"type": "WordPiece", "prefix": "##", "cleanup": True}
    with pytest.raises(VocabularyError, match="decoder 'WordPiece' is not supported"):
        Vocabulary.from_file(write_json(tmp_path / "a.json", doc))
    doc = byte_level_doc()
    doc["model"] = {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"a": 0}}
    with pytest.raises(VocabularyError, match="model type 'WordPiece'"):
        Vocabulary.from_file(write_json(tmp_path / "b.json", doc))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b'{"version": "1.0", "model": {"type": "BPE", "vocab": {"a": 0}, "merg', "truncated"),
        (b'{"name": "not a tokenizer"}', "not a HuggingFace tokenizer.json"),
        (b"[1, 2, 3]\n", "not a HuggingFace tokenizer.json"),
        (b'{"model": {"type": "BPE", "vocab": {"a": "zero"}}}', "non-integer id"),
        (b'{"model": {"type": "BPE", "vocab": {"a": -4}}}', "out of range"),
        (b'{"model": {"type": "BPE", "vocab": {}}, "added_tokens": [{"id": 1}]}', "malformed"),
        (b'{"model": "\xff"}', "not UTF-8"),
    ],
)
def test_bad_json_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(content)
    with pytest.raises(VocabularyError, match=message) as info:
        Vocabulary.from_file(path)
    assert str(path) in str(info.value)


def test_truncated_real_tokenizer_json(tmp_path: Path, deepseek_path: Path) -> None:
    data = deepseek_path.read_bytes()
    for fraction in (0.001, 0.5, 0.999):
        path = tmp_path / "tokenizer.json"
        path.write_bytes(data[: int(len(data) * fraction)])
        with pytest.raises(VocabularyError, match="truncated") as info:
            Vocabulary.from_file(path)
        assert str(path) in str(info.value)


def test_added_token_outside_model_vocab(tmp_path: Path) -> None:
    doc = byte_level_doc()
    doc["added_tokens"].append(added(1000, "<|reserved_special_token_5|>", False))
    vocab = Vocabulary.from_file(write_json(tmp_path / "t.json", doc))
    assert len(vocab) == 1001
    assert vocab.is_special(1000) and vocab.is_special(999)  # 999 is an unused hole
    assert vocab.token_bytes(999) == b""


def test_json_suffix_not_required(tmp_path: Path) -> None:
    path = tmp_path / "tok"
    path.write_text(json.dumps(metaspace_doc()), encoding="utf-8")
    assert Vocabulary.from_file(path).tokens[4] == b" the"
