"""`Vocabulary.from_tokenizer` on tokenizer objects built in-process, and `from_pretrained`
(local files only: no hub)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from vocab_docs import byte_fallback_doc, byte_level_doc, write_json

from grammarkit.vocab import Vocabulary, VocabularyError
from grammarkit.vocab.decoding import BYTE_TO_UNICODE

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _fast_tokenizer(path: Path, **kwargs: Any) -> Any:
    transformers = importlib.import_module("transformers")
    return transformers.PreTrainedTokenizerFast(tokenizer_file=str(path), **kwargs)


def test_fast_tokenizer_equals_file(deepseek_path: Path) -> None:
    tokenizer = _fast_tokenizer(deepseek_path)
    vocab = Vocabulary.from_tokenizer(tokenizer)
    assert vocab == Vocabulary.from_file(deepseek_path)
    ids = [i for i in range(0, len(vocab), 997) if not vocab.is_special(i)]
    strings = tokenizer.convert_ids_to_tokens(ids)
    byte_map = {c: b for b, c in BYTE_TO_UNICODE.items()}
    for i, string in zip(ids, strings):
        assert vocab.tokens[i] == bytes(byte_map[c] for c in string)


def test_fast_tokenizer_added_tokens_and_eos(tmp_path: Path) -> None:
    path = write_json(tmp_path / "tokenizer.json", byte_fallback_doc())
    tokenizer = _fast_tokenizer(path, eos_token="</s>", bos_token="<s>", unk_token="<unk>")
    tokenizer.add_special_tokens({"additional_special_tokens": ["[CTRL]"]})
    tokenizer.add_tokens(["two words"])
    vocab = Vocabulary.from_tokenizer(tokenizer)
    assert len(vocab) == len(tokenizer)
    ctrl, words = vocab.token_id("[CTRL]"), vocab.token_id("two words")
    assert vocab.is_special(ctrl) and not vocab.is_special(words)
    assert vocab.stop_ids == {2}
    assert vocab.tokens[260] == b" hello"
    assert Vocabulary.from_tokenizer(tokenizer, stop_ids=[ctrl]).stop_ids == {ctrl}


def test_tokenizers_object(tmp_path: Path) -> None:
    tokenizers = importlib.import_module("tokenizers")
    path = write_json(tmp_path / "tokenizer.json", byte_level_doc())
    vocab = Vocabulary.from_tokenizer(tokenizers.Tokenizer.from_file(str(path)))
    assert vocab == Vocabulary.from_file(path)
    assert "tokenizers.Tokenizer" in vocab.source


class _SlowSentencePiece:
    """The parts of a slow (sentencepiece) transformers tokenizer that the loader reads."""

    name_or_path = "toy/slow"
    eos_token_id = 2

    def __init__(self) -> None:
        self.all_special_ids = [0, 1, 2]
        self._vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
        self._vocab.update({f"<0x{b:02X}>": 3 + b for b in range(256)})
        self._vocab.update({"▁the": 259, "▁": 260, "s": 261})
        self.added_tokens_decoder = {262: "<|im_end|>"}

    def get_vocab(self) -> dict[str, int]:
        return {**self._vocab, "<|im_end|>": 262}

    def __len__(self) -> int:
        return 264


def test_slow_tokenizer_duck_typed() -> None:
    vocab = Vocabulary.from_tokenizer(_SlowSentencePiece())
    assert len(vocab) == 264
    assert vocab.tokens[3 + 0x41] == b"A" and vocab.tokens[259:262] == (b" the", b" ", b"s")
    assert vocab.special_ids == {0, 1, 2, 262, 263}
    assert vocab.stop_ids == {2, 262}
    assert vocab.source.startswith("toy/slow <")


def test_not_a_tokenizer() -> None:
    with pytest.raises(VocabularyError, match="not a tokenizer"):
        Vocabulary.from_tokenizer(object())


def test_from_pretrained_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    importlib.import_module("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(VocabularyError, match="model 'grammarkit-test/no-such-model'") as info:
        Vocabulary.from_pretrained("grammarkit-test/no-such-model")
    assert "local_files_only=True" in str(info.value)


def test_from_pretrained_local_directory(tmp_path: Path) -> None:
    importlib.import_module("transformers")
    write_json(tmp_path / "tokenizer.json", byte_level_doc())
    write_json(
        tmp_path / "tokenizer_config.json",
        {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|im_end|>"},
    )
    write_json(tmp_path / "config.json", {"model_type": "llama", "vocab_size": 320})
    (tmp_path / "generation_config.json").write_text(json.dumps({"eos_token_id": [2]}))
    vocab = Vocabulary.from_pretrained(tmp_path)
    assert len(vocab) == 320
    im_end = vocab.token_id("<|im_end|>")
    assert vocab.stop_ids == {2, im_end, vocab.token_id("<|endoftext|>")}
    assert vocab.source == str(tmp_path)
