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

A third table (unless ``--quick``) times nested documents as real JSON nests, about 10 MB each:
5 million nested arrays, 1.25 million nested objects, a pretty-printed package-lock.json-like
document and a GeoJSON-like feature collection, under two grammars: xgrammar's builtin JSON
grammar, and the grammar ``Grammar.from_json_schema`` writes for a schema of that document's
nested objects (xgrammar gets the same EBNF). Each engine runs in a child process of its own
(best of ``--repeat`` runs, CPU time, after a warm-up on a small document); ``peak RSS`` is
that child's peak resident memory and ``+match`` its growth while matching.

Run: ``python benchmarks/match_vs_xgrammar.py [--repeat N] [--quick | --nested-only]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from functools import partial
from typing import Any

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


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB: ``VmHWM`` where Linux has it (``ru_maxrss``
    would include the parent's peak, which Linux carries across ``exec``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1e3
    except OSError:
        pass
    return maxrss_mb()


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
    parser.add_argument("--nested-only", action="store_true",
                        help="only the table of nested 10 MB documents")
    parser.add_argument("--ambiguous-xgrammar-max", type=int, default=400,
                        help="longest input xgrammar gets in the ambiguous table")
    args = parser.parse_args()
    if args.nested_only:
        nested(args.repeat)
        return
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string

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
    if not args.quick:
        print()
        nested(args.repeat)


def ambiguous(xgrammar_max: int) -> None:
    """Seconds to match runs of ``a`` with the ambiguous grammars of issue 8, both engines."""
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string

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


LOCK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"}, "version": {"type": "string"},
        "lockfileVersion": {"type": "integer"}, "requires": {"type": "boolean"},
        "packages": {"type": "object", "additionalProperties": {
            "type": "object",
            "properties": {
                "name": {"type": "string"}, "version": {"type": "string"},
                "resolved": {"type": "string"}, "integrity": {"type": "string"},
                "dev": {"type": "boolean"},
                "dependencies": {"type": "object", "additionalProperties": {"type": "string"}},
                "engines": {"type": "object", "additionalProperties": {"type": "string"}},
                "funding": {"type": "object", "properties": {
                    "type": {"type": "string"}, "url": {"type": "string"}}},
            }}},
    },
    "required": ["name", "lockfileVersion", "packages"],
}
"""The package-lock-like documents' shape: objects in objects in objects."""

GEO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "type": {"const": "FeatureCollection"},
        "features": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "type": {"const": "Feature"}, "id": {"type": "integer"},
                "geometry": {"type": "object", "properties": {
                    "type": {"type": "string"}, "coordinates": {"type": "array"}}},
                "properties": {"type": "object"},
            }}},
    },
    "required": ["type", "features"],
}
"""The GeoJSON-like documents' shape: coordinates nest arrays up to four deep."""


def package_lock(size: int, seed: int = 0) -> bytes:
    """A pretty-printed package-lock.json-like document of about ``size`` bytes."""
    rng = random.Random(seed)
    words = ["react", "lodash", "core", "utils", "babel", "types", "plugin", "loader",
             "webpack", "eslint", "parser", "runtime"]
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def name() -> str:
        return "-".join(rng.choice(words) for _ in range(rng.randint(1, 3)))

    def version() -> str:
        return f"{rng.randint(0, 20)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"

    packages: dict[str, Any] = {}
    length = 0
    while length < size:
        package = name()
        path = f"node_modules/{package}" + (f"/node_modules/{name()}" if rng.random() < 0.3
                                            else "")
        if path in packages:
            continue
        entry: dict[str, Any] = {
            "version": version(),
            "resolved": f"https://registry.npmjs.org/{package}/-/{package}-{version()}.tgz",
            "integrity": "sha512-" + "".join(rng.choice(letters) for _ in range(86)) + "==",
            "dev": rng.random() < 0.5}
        if rng.random() < 0.6:
            entry["dependencies"] = {name(): "^" + version() for _ in range(rng.randint(1, 6))}
        if rng.random() < 0.2:
            entry["engines"] = {"node": ">=" + version()}
        if rng.random() < 0.1:
            entry["funding"] = {"type": "github", "url": "https://github.com/sponsors/" + name()}
        packages[path] = entry
        length += len(json.dumps({path: entry}, indent=2))
    return json.dumps({"name": "app", "version": "1.0.0", "lockfileVersion": 3,
                       "requires": True, "packages": packages}, indent=2).encode()


def feature_collection(size: int, seed: int = 0) -> bytes:
    """A GeoJSON-like feature collection of about ``size`` bytes (one line)."""
    rng = random.Random(seed)

    def point() -> list[float]:
        return [round(rng.uniform(-180, 180), 6), round(rng.uniform(-90, 90), 6)]

    def ring() -> list[list[float]]:
        return [point() for _ in range(rng.randint(4, 12))]

    features: list[dict[str, Any]] = []
    length = 0
    while length < size:
        kind = rng.choice(["Point", "LineString", "Polygon", "MultiPolygon"])
        coordinates: Any = {
            "Point": point, "LineString": ring,
            "Polygon": lambda: [ring() for _ in range(rng.randint(1, 3))],
            "MultiPolygon": lambda: [[ring() for _ in range(rng.randint(1, 2))]
                                     for _ in range(rng.randint(1, 3))]}[kind]()
        feature = {"type": "Feature", "id": len(features),
                   "geometry": {"type": kind, "coordinates": coordinates},
                   "properties": {"name": f"feature {len(features)}",
                                  "population": rng.randint(0, 10**6),
                                  "tags": ["a", "b"][:rng.randint(0, 2)]}}
        features.append(feature)
        length += len(json.dumps(feature)) + 2
    return json.dumps({"type": "FeatureCollection", "features": features}).encode()


def child(engine: str, grammar_file: str, document_file: str, repeat: int) -> None:
    """Time one engine on one document in this (child) process; print a JSON line."""
    with open(grammar_file, encoding="utf-8") as file:
        ebnf = file.read()
    with open(document_file, "rb") as file:
        document = file.read()
    run: Callable[[], bool]
    if engine == "grammarkit":
        grammar = Grammar.from_ebnf(ebnf)
        assert grammar.matches(b"[1]") is not None  # builds the lazily made tables
        run = partial(grammar.matches, document, timeout=None)
    else:  # imported only here: xgrammar's own start-up memory is not grammarkit's
        import xgrammar as xgr
        from xgrammar.testing import _is_grammar_accept_string

        reference = xgr.Grammar.from_ebnf(ebnf)
        text = document.decode()
        _is_grammar_accept_string(reference, "[1]")
        run = partial(_is_grammar_accept_string, reference, text)
    before = peak_rss_mb()
    seconds = []
    for _ in range(repeat):
        started = time.process_time()
        accepted = run()
        seconds.append(time.process_time() - started)
        assert accepted, "the document must be accepted"
    print(json.dumps({"seconds": min(seconds), "before": before, "peak": peak_rss_mb()}))


def nested_row(size: int, ours: dict[str, float] | int, theirs: dict[str, float] | int) -> str:
    """Throughputs, ratio and memory of one document; a child that failed (an int: its exit
    status, negative for a signal such as the kernel's out-of-memory kill) is named."""
    def speed(result: dict[str, float] | int) -> str:
        return (f"{size / result['seconds'] / 1e6:>6.2f} MB/s" if isinstance(result, dict)
                else f"{'exit ' + str(result):>11}")

    def memory(result: dict[str, float] | int) -> str:
        return (f"{result['peak']:>6.0f} MB (+{result['peak'] - result['before']:>5.0f} MB)"
                if isinstance(result, dict) else f"{'-':>21}")

    ratio = (f"{theirs['seconds'] / ours['seconds']:>5.2f}x"
             if isinstance(ours, dict) and isinstance(theirs, dict) else f"{'-':>6}")
    return f"{speed(ours)} {speed(theirs)} {ratio}  {memory(ours)} {memory(theirs)}"


def nested(repeat: int) -> None:
    """The nested documents of issue 8 item 13, each engine in a child process."""
    import xgrammar as xgr

    grammars = {"builtin JSON": str(xgr.Grammar.builtin_json_grammar())}
    documents = [("[[[ 10 MB", nested_arrays(10_000_000), None),
                 ("{{{ 10 MB", nested_objects(10_000_000), None),
                 ("package-lock", package_lock(10_000_000), LOCK_SCHEMA),
                 ("GeoJSON", feature_collection(10_000_000), GEO_SCHEMA)]
    print(f"{'document':<13} {'grammar':<12} {'bytes':>10} {'grammarkit':>11} {'xgrammar':>11} "
          f"{'ratio':>6}  {'peak RSS (+match) gk':>21} {'xg':>21}")
    with tempfile.TemporaryDirectory() as folder:
        for name, document, schema in documents:
            document_file = os.path.join(folder, "document.json")
            with open(document_file, "wb") as file:
                file.write(document)
            cases = dict(grammars)
            if schema is not None:
                cases["from schema"] = Grammar.from_json_schema(schema).to_ebnf()
            for grammar_name, ebnf in cases.items():
                grammar_file = os.path.join(folder, "grammar.ebnf")
                with open(grammar_file, "w", encoding="utf-8") as file:
                    file.write(ebnf)
                results = {}
                for engine in ("grammarkit", "xgrammar"):
                    done = subprocess.run(
                        [sys.executable, __file__, "--child", engine, grammar_file,
                         document_file, "--repeat", str(repeat)],
                        capture_output=True, text=True, check=False)
                    results[engine] = (json.loads(done.stdout.splitlines()[-1])
                                       if done.returncode == 0 else done.returncode)
                print(f"{name:<13} {grammar_name:<12} {len(document):>10,} "
                      + nested_row(len(document), results["grammarkit"], results["xgrammar"]))
    print("MB/s from CPU time (best of --repeat); ratio = grammarkit / xgrammar throughput;")
    print("peak RSS = the child process's peak resident memory, +match its growth while matching")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[6]))
    else:
        main()
