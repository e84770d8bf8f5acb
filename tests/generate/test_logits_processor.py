"""The transformers LogitsProcessor constrains `model.generate` (tiny GPT-2, Qwen3.6 vocab)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import grammarkit as gk
from grammarkit.integrations.transformers import GrammarLogitsProcessor
from grammarkit.vocab import Vocabulary

GRAMMAR = gk.Grammar.from_ebnf('root ::= "[" [0-9]{1,3} ("," [0-9]{1,3}){0,3} "]"')


def _decode(vocab: Vocabulary, ids: list[int]) -> str:
    return b"".join(vocab.tokens[i] for i in ids).decode("utf-8")


@pytest.mark.parametrize("sample", [False, True])
def test_generate_follows_the_grammar(tiny_gpt2: Any, qwen36: Vocabulary, sample: bool) -> None:
    stops = sorted(qwen36.stop_ids)
    processor = GrammarLogitsProcessor(GRAMMAR, qwen36)
    prompt = torch.tensor([[9707, 25], [16, 17]])
    torch.manual_seed(0)
    out = tiny_gpt2.generate(prompt, attention_mask=torch.ones_like(prompt),
                             logits_processor=[processor], max_new_tokens=24, do_sample=sample,
                             eos_token_id=stops, pad_token_id=stops[0])
    for row in out[:, prompt.shape[1]:].tolist():
        ended = next((k for k, t in enumerate(row) if t in stops), None)
        assert ended is not None, "the grammar ends within 24 tokens"
        assert all(t in stops for t in row[ended:])
        assert GRAMMAR.matches(_decode(qwen36, row[:ended]))


def test_a_second_generate_call_starts_afresh(tiny_gpt2: Any, qwen36: Vocabulary) -> None:
    eos = min(qwen36.stop_ids)
    processor = GrammarLogitsProcessor('root ::= "ab" [c-e]', qwen36)
    for prompt in ([[1, 2, 3]], [[4, 5]]):
        ids = torch.tensor(prompt)
        out = tiny_gpt2.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=6,
                                 logits_processor=[processor], do_sample=False,
                                 eos_token_id=eos, pad_token_id=eos)
        row = out[0, ids.shape[1]:].tolist()
        assert _decode(qwen36, row[: row.index(eos)]) in {"abc", "abd", "abe"}
