"""Cross-engine: our vocabularies against xgrammar 0.2.8's `TokenizerInfo`."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import numpy as np
import pytest

from grammarkit.vocab import Vocabulary

pytestmark = pytest.mark.xgrammar


def test_deepseek_bytes_match_and_specials_differ(deepseek_path: Path) -> None:
    xgr = importlib.import_module("xgrammar")
    transformers = importlib.import_module("transformers")
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_file=str(deepseek_path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "stop_token_ids ... will be automatically detected"
        info = xgr.TokenizerInfo.from_huggingface(tokenizer)
    vocab = Vocabulary.from_file(deepseek_path)
    assert info.vocab_size == len(vocab)
    assert list(info.decoded_vocab) == list(vocab.tokens)
    assert info.stop_token_ids == sorted(vocab.stop_ids)
    # xgrammar finds no special tokens at all; we find the 1,280 control tokens
    assert info.special_token_ids == []
    assert len(vocab.special_ids) == 1280

    # ... so its JSON grammar lets control tokens into a string
    matcher = xgr.GrammarMatcher(xgr.GrammarCompiler(info).compile_builtin_json_grammar())
    assert matcher.accept_string('{"a": "')
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    matcher.fill_next_token_bitmask(bitmask)
    words = bitmask.numpy()[0].view(np.uint32)
    allowed = {i for i in vocab.special_ids if words[i // 32] >> (i % 32) & 1}
    assert vocab.token_id("<｜User｜>") in allowed and vocab.token_id("<think>") in allowed
    assert allowed.isdisjoint(vocab.stop_ids)


def test_qwen36_xgrammar_finds_no_special_tokens(qwen36_path: Path) -> None:
    xgr = importlib.import_module("xgrammar")
    vocab = Vocabulary.from_file(qwen36_path, vocab_size=248320)
    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=len(vocab))
    # only the empty padding ids count as special there; <|im_end|> and friends do not
    assert set(info.special_token_ids) == {i for i in range(len(vocab)) if not vocab.tokens[i]}
    assert vocab.token_id("<|im_end|>") not in info.stop_token_ids
    assert len(vocab.special_ids) - len(info.special_token_ids) == 33
