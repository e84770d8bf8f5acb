"""Whole-document recognition throughput: ``Grammar.matches`` beside xgrammar, in one process.

The grammar is xgrammar's builtin JSON grammar (``str(xgrammar.Grammar.builtin_json_grammar())``
parsed by grammarkit, so both engines recognize the same language). Documents are deterministic
pseudo-random JSON: a ~1 MB array of nested values and a few small ones. For each document it
prints the best of ``--repeat`` runs of

* ``grammarkit``: ``Grammar.matches(document)``, after one warm-up call on the same grammar (the
  per-grammar configuration tables are built lazily and then shared);
* ``first call``: the first ``matches`` on a freshly compiled grammar (compile excluded);
* ``xgrammar``: ``xgrammar.testing._is_grammar_accept_string(grammar, document)``, which builds
  a matcher and accepts the string;

and the ratio of the two steady-state throughputs.

Run: ``python benchmarks/match_vs_xgrammar.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import xgrammar as xgr
from xgrammar.testing import _is_grammar_accept_string

from grammarkit.grammar import Grammar


def json_value(rng: random.Random, depth: int) -> Any:
    """A random JSON value, nested at most ``depth`` levels."""
    roll = rng.random()
    if depth == 0 or roll < 0.35:
        return rng.choice([
            rng.randint(-10**6, 10**6),
            round(rng.uniform(-1e4, 1e4), rng.randint(0, 6)),
            rng.choice([True, False, None]),
            "".join(rng.choice("abcdefghij klmnopé\"\\\n€😀") for _ in range(rng.randint(0, 40))),
        ])
    if roll < 0.65:
        return [json_value(rng, depth - 1) for _ in range(rng.randint(0, 8))]
    return {f"key_{rng.randint(0, 999)}": json_value(rng, depth - 1)
            for _ in range(rng.randint(0, 8))}


def json_document(size: int, seed: int = 0) -> bytes:
    """A JSON array of random values, about ``size`` bytes long (indented)."""
    rng = random.Random(seed)
    items: list[Any] = []
    length = 2
    while length < size:
        item = json_value(rng, 5)
        item_length = len(json.dumps(item, indent=1, ensure_ascii=False).encode()) + 3
        if length + item_length <= size * 1.1:
            items.append(item)
            length += item_length
    return json.dumps(items, indent=1, ensure_ascii=False).encode()


def best_of(repeat: int, run: Callable[[], bool]) -> float:
    """The shortest wall time of ``repeat`` runs; every run must accept."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        accepted = run()
        times.append(time.perf_counter() - started)
        assert accepted, "the document must be accepted"
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best)")
    args = parser.parse_args()

    reference = xgr.Grammar.builtin_json_grammar()
    ebnf = str(reference)
    documents = [("1 MB array", json_document(1_000_000)), ("100 KB array", json_document(100_000)),
                 ("10 KB array", json_document(10_000)), ("1 KB array", json_document(1_000)),
                 ("small object", b'{"name": "grammarkit", "ok": true, "n": [1, 2.5e-3]}')]

    print(f"{'document':<14} {'bytes':>9} {'grammarkit':>12} {'first call':>12} "
          f"{'xgrammar':>12} {'ratio':>7}")
    for name, document in documents:
        fresh = Grammar.from_ebnf(ebnf)
        fresh.compiled  # noqa: B018 - compile outside the timing
        started = time.perf_counter()
        assert fresh.matches(document)
        first = time.perf_counter() - started
        ours = best_of(args.repeat, partial(fresh.matches, document))
        text = document.decode()
        theirs = best_of(args.repeat, partial(_is_grammar_accept_string, reference, text))
        size = len(document)
        print(f"{name:<14} {size:>9,} {size / ours / 1e6:>8.2f} MB/s {size / first / 1e6:>7.2f} "
              f"MB/s {size / theirs / 1e6:>7.2f} MB/s {theirs / ours:>6.2f}x")
    print("ratio = grammarkit throughput / xgrammar throughput (higher is better for grammarkit)")


if __name__ == "__main__":
    main()
