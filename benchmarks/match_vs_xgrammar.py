"""Whole-document recognition throughput: ``Grammar.matches`` beside xgrammar, in one process.

The grammar is xgrammar's builtin JSON grammar (``str(xgrammar.Grammar.builtin_json_grammar())``
parsed by grammarkit, so both engines recognize the same language). Documents are deterministic
pseudo-random JSON (a ~1 MB array of nested values and a few small ones) and, unless ``--quick``,
the 10 MB documents of issue 8: a flat array of numbers, 5 million nested arrays, and 1.25
million nested objects. For each document it prints the best of ``--repeat`` runs of

* ``grammarkit``: ``Grammar.matches(document)``, after one warm-up call on the same grammar (the
  per-grammar configuration tables are built lazily and then shared);
* ``first call``: the first ``matches`` on a freshly compiled grammar (compile excluded);
* ``xgrammar``: ``xgrammar.testing._is_grammar_accept_string(grammar, document)``, which builds
  a matcher and accepts the string;

and the ratio of the two steady-state throughputs, and the peak memory a grammarkit call
allocates (one more run, traced by ``tracemalloc``; xgrammar's C++ heap is not visible to it, so
the process's peak ``maxrss`` so far is shown too).

A second table times the ambiguous grammars of issue 8 (``x ::= x x | "a" | ""`` and ``root ::=
root root | "a"``) on runs of ``a``: grammarkit up to 2,000 characters, xgrammar up to
``--ambiguous-xgrammar-max`` characters (it takes 20 s at 400 on the first grammar).

Run: ``python benchmarks/match_vs_xgrammar.py [--repeat N] [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
import tracemalloc
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


def flat_array(size: int) -> bytes:
    """``[0, 1, 2, ...]``, about ``size`` bytes long."""
    numbers = json.dumps(list(range(size // 8))).encode()[:size]
    return numbers[:numbers.rfind(b",")] + b"]"


def nested_arrays(size: int) -> bytes:
    """``[[[...]]]``: ``size // 2`` levels."""
    return b"[" * (size // 2) + b"]" * (size // 2)


def nested_objects(size: int) -> bytes:
    """``{"a": {"a": ... 1}}``: ``size // 8`` levels."""
    return b'{"a": ' * (size // 8) + b"1" + b"}" * (size // 8)


def maxrss_mb() -> float:
    """The process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


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
    parser.add_argument("--quick", action="store_true", help="skip the 10 MB documents")
    parser.add_argument("--ambiguous-xgrammar-max", type=int, default=400,
                        help="longest input xgrammar gets in the ambiguous table")
    args = parser.parse_args()

    reference = xgr.Grammar.builtin_json_grammar()
    ebnf = str(reference)
    documents = [("1 MB array", json_document(1_000_000)), ("100 KB array", json_document(100_000)),
                 ("10 KB array", json_document(10_000)), ("1 KB array", json_document(1_000)),
                 ("small object", b'{"name": "grammarkit", "ok": true, "n": [1, 2.5e-3]}')]
    if not args.quick:
        documents[:0] = [("10 MB flat", flat_array(10_000_000)),
                         ("10 MB [[[", nested_arrays(10_000_000)),
                         ("10 MB {{{", nested_objects(10_000_000))]

    print(f"{'document':<14} {'bytes':>10} {'grammarkit':>12} {'first call':>12} "
          f"{'xgrammar':>12} {'ratio':>7} {'peak alloc':>10} {'maxrss':>8}")
    for name, document in documents:
        fresh = Grammar.from_ebnf(ebnf)
        fresh.compiled  # noqa: B018 - compile outside the timing
        started = time.perf_counter()
        assert fresh.matches(document)
        first = time.perf_counter() - started
        ours = best_of(args.repeat, partial(fresh.matches, document, timeout=None))
        tracemalloc.start()  # one more run, traced (tracing slows it down)
        assert fresh.matches(document, timeout=None)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        text = document.decode()
        theirs = best_of(args.repeat, partial(_is_grammar_accept_string, reference, text))
        size = len(document)
        print(f"{name:<14} {size:>10,} {size / ours / 1e6:>8.2f} MB/s {size / first / 1e6:>7.2f} "
              f"MB/s {size / theirs / 1e6:>7.2f} MB/s {theirs / ours:>6.2f}x {peak:>7.1f} MB "
              f"{maxrss_mb():>5.0f} MB")
    print("ratio = grammarkit throughput / xgrammar throughput (higher is better for grammarkit);")
    print("peak alloc = grammarkit's peak Python allocation while matching (tracemalloc);")
    print("maxrss = the process's peak resident memory so far (both engines, cumulative)")
    print()
    ambiguous(args.ambiguous_xgrammar_max)


def ambiguous(xgrammar_max: int) -> None:
    """Seconds to match runs of ``a`` with the ambiguous grammars of issue 8, both engines."""
    print(f"{'grammar':<34} {'chars':>6} {'grammarkit':>11} {'xgrammar':>11}")
    for source in ('root ::= x\nx ::= x x | "a" | ""', 'root ::= root root | "a"'):
        ours, theirs = Grammar.from_ebnf(source), xgr.Grammar.from_ebnf(source)
        for length in (100, 200, 400, 1000, 2000):
            text = "a" * length
            started = time.perf_counter()
            assert ours.matches(text, timeout=None)
            mine = f"{time.perf_counter() - started:>9.2f} s"
            other = "(skipped)"
            if length <= xgrammar_max:
                started = time.perf_counter()
                assert _is_grammar_accept_string(theirs, text)
                other = f"{time.perf_counter() - started:>9.2f} s"
            print(f"{source!r:<34} {length:>6,} {mine:>11} {other:>11}")


if __name__ == "__main__":
    main()
