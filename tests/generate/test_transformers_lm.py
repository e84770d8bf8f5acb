"""Generation with a tiny randomly initialised GPT-2 over the real Qwen3.6 vocabulary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import grammarkit as gk
from grammarkit.decode import TokenMatcher
from grammarkit.generate import JsonSchema, Regex, TransformersLM, as_grammar
from grammarkit.vocab import Vocabulary

GRAMMARS = sorted((Path(__file__).resolve().parents[2] / "grammars").glob("*.ebnf"))

SCHEMAS: dict[str, Any] = {
    "person": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                                "age": {"type": "integer", "minimum": 0}},
               "required": ["name", "age"], "additionalProperties": False},
    "enum": {"enum": ["red", "green", "blue", 7, None]},
    "numbers": {"type": "array", "items": {"type": "number"}, "maxItems": 4},
    "nested": {"type": "object", "properties": {
        "id": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]{1,5}$"}},
        "point": {"type": "object", "properties": {"x": {"type": "number"},
                                                    "y": {"type": "number"}},
                  "required": ["x", "y"]}},
        "required": ["id", "point"]},
    "boolean-or-null": {"type": ["boolean", "null"]},
}

CONSTRAINTS: dict[str, Any] = {
    **{path.stem: gk.Grammar.from_ebnf(path.read_text()) for path in GRAMMARS},
    **{f"schema-{name}": JsonSchema(schema, whitespace="compact") for name, schema in
       SCHEMAS.items()},
    "regex-date": Regex(r"\d{4}-\d{2}-\d{2}"),
}
GRAMMAR_OF = {name: as_grammar(constraint) for name, constraint in CONSTRAINTS.items()}
"""Built once, so that the matchers' mask engines are built once per grammar."""


@pytest.fixture(scope="module")
def lm(tiny_gpt2: Any) -> TransformersLM:
    return TransformersLM(tiny_gpt2)


def _is_prefix(grammar: gk.Grammar, text: str, vocab: Vocabulary) -> bool:
    return TokenMatcher(grammar, vocab).accept_string(text)


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_every_completion_follows_its_grammar(name: str, lm: TransformersLM,
                                              qwen36: Vocabulary) -> None:
    grammar = GRAMMAR_OF[name]
    out = gk.generate(grammar, [9707, 25], lm=lm, vocab=qwen36, max_tokens=24, seed=1, n=2,
                      temperature=1.5)
    for choice in out.choices:
        if choice.finish_reason == "stop":
            assert grammar.matches(choice.text), choice.text
        else:
            assert len(choice.token_ids) == 24
            assert _is_prefix(grammar, choice.text, qwen36), choice.text


@pytest.mark.xgrammar
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_native_and_xgrammar_give_the_same_tokens(name: str, lm: TransformersLM,
                                                  qwen36: Vocabulary) -> None:
    runs = [gk.generate(GRAMMAR_OF[name], [9707, 25], backend=backend, lm=lm, vocab=qwen36,
                        max_tokens=24, temperature=0) for backend in ("native", "xgrammar")]
    assert runs[0].token_ids == runs[1].token_ids
    assert runs[0].finish_reason == runs[1].finish_reason
    assert runs[0].matched_stop == runs[1].matched_stop


def test_kv_cache_gives_the_logits_of_a_full_pass(lm: TransformersLM, tiny_gpt2: Any) -> None:
    prompt = [9707, 25, 220]
    lm.logits(prompt)
    extended = lm.logits([*prompt, 314, 315])
    shorter = lm.logits(prompt[:2])
    branched = lm.logits([*prompt[:2], 999])
    with torch.no_grad():
        for ids, cached in (([*prompt, 314, 315], extended), (prompt[:2], shorter),
                            ([*prompt[:2], 999], branched)):
            full = tiny_gpt2(torch.tensor([ids])).logits[0, -1].numpy()
            np.testing.assert_allclose(cached, full, atol=1e-5)


def test_jump_forward_saves_model_calls_on_fixed_keys(lm: TransformersLM,
                                                      qwen36: Vocabulary) -> None:
    schema = GRAMMAR_OF["schema-person"]
    fast = gk.generate(schema, [9707], lm=lm, vocab=qwen36, max_tokens=60, temperature=0)
    slow = gk.generate(schema, [9707], lm=lm, vocab=qwen36, max_tokens=60, temperature=0,
                       jump_forward=False)
    assert fast.timing.jump_forward_tokens > 0
    assert fast.timing.model_calls < slow.timing.model_calls
    for out in (fast, slow):
        assert out.text.startswith('{"name":"')


def test_padded_lm_head_and_mismatched_tokenizer(qwen36: Vocabulary) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    small = GPT2LMHeadModel(GPT2Config(vocab_size=1000, n_positions=64, n_embd=8, n_layer=1,
                                       n_head=1))
    with pytest.raises(gk.GenerationError, match="1000 token ids") as info:
        gk.generate('root ::= "a"', [1], lm=TransformersLM(small), vocab=qwen36)
    assert info.value.diagnostic.code == "GK353"


def _byte_level_tokenizer() -> Any:
    """A transformers tokenizer built in-process: byte-level BPE with a few merges."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = [("y", "e"), ("ye", "s"), ("n", "o"), ("\u0120", "y")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab, merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>")


def test_text_prompts_go_through_the_tokenizer() -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _byte_level_tokenizer()
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer) + 3, n_positions=64, n_embd=8,
                                       n_layer=1, n_head=1)).eval()
    lm = TransformersLM(model, tokenizer)
    out = gk.generate(Regex("(yes|no)!"), "yes or no:", lm=lm, max_tokens=8)
    assert out.prompt_tokens == len(tokenizer("yes or no:")["input_ids"]) == 7
    assert out.text in {"yes!", "no!"} and out.finish_reason == "stop"
    assert out.matched_stop == tokenizer.eos_token_id
    assert lm.vocabulary().vocab_size == len(tokenizer) + 3
