"""The front end on big grammar texts: parse, lint and format beside xgrammar's parser, in one run.

Grammars (generated deterministically by :mod:`benchmarks.grammar_texts`, or converted):

* ``generated-1MB``: ~12k rules of the shape JSON-Schema converters emit (literals, classes,
  groups, alternatives, ``{0,3}``, references), ~1 MB;
* ``varied-1MB``: every construct the linter and the printer treat specially, every lint rule
  firing in every block of rules, comments, suppressions and odd spacing, ~1 MB;
* ``alternatives-20k``: one rule of 20,000 literal alternatives;
* ``undefined-20k``: 20,000 misspelled references among 20,000 rules (errors and hints);
* ``schema:NAME``: what ``convert json-schema --lenient`` writes for ``benchmarks/schemas/NAME``
  (the biggest bundled one by default) and for each ``--schema FILE`` (e.g. SchemaStore's
  claude-code-settings.json, which converts to a ~1 MB grammar);
* ``file:NAME``: each ``--grammar FILE`` as it is;
* ``mixed-100k`` (~5.6 MB) and ``chain-100k`` (~3 MB): the 100k-rule grammars of
  ``benchmarks/compile_vs_xgrammar.py`` (four shapes; each rule an alternative of the one before);
* ``rules-250k`` (~10 MB), ``mixed-250k`` (~15 MB) and ``class-10MB`` (one huge class), with
  ``--big`` only.

Library columns: CPU seconds (``time.process_time``, best of ``--repeat``) of grammarkit's
``parse`` (text to AST with diagnostics), ``lint`` (parse plus every lint rule), ``fmt`` (parse
plus canonical printing, what ``fmt --check`` does), and xgrammar's ``Grammar.from_ebnf`` (its
parser and normalisation passes), with the ratio grammarkit parse / xgrammar, and grammarkit's
``Grammar.from_ebnf`` (parse plus the grammar's set-up: a text of plain rules whose root reaches
few of them is read lazily, each body when first used) with its ratio to xgrammar, and
``verdict``: ``Grammar.from_ebnf`` and a first ``matches``. Process columns: user+sys CPU seconds
of the whole ``grammarkit lint FILE`` and ``grammarkit fmt --check FILE`` commands (start-up
included; ``--version`` shows the start-up alone), run as an installed package runs, with the
bytecode of its modules cached (kept in a temporary folder; without it every command also
compiles every module it imports, ~0.08 s). ``parse MB``: how much the peak resident memory of
a fresh process grows while it parses the grammar. Sizes are UTF-8 bytes.

Run: ``python benchmarks/parse_vs_xgrammar.py [--repeat N] [--big] [--schema FILE ...]
[--grammar FILE ...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import xgrammar as xgr

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # compile_vs_xgrammar's own imports

from benchmarks.grammar_texts import (
    alternatives,
    big_class,
    chained_rules,
    generated,
    undefined,
    varied,
)
from grammarkit.analysis.lint import lint
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf.parser import parse
from grammarkit.ebnf.printer import print_grammar
from grammarkit.grammar import Grammar

SCHEMAS = Path(__file__).resolve().parent / "schemas"
DEFAULT_SCHEMA = SCHEMAS / "k8s_deployment.json"


def best(run: Callable[[], object], repeat: int) -> float:
    """The least CPU time of ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)


def _installed_environment(cache: str) -> dict[str, str]:
    """The environment of a grammarkit command run as an installed package runs: with its
    modules' bytecode cached (in ``cache``, not beside the sources), even where
    ``PYTHONDONTWRITEBYTECODE`` is set, since ``pip install`` compiles the bytecode."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPYCACHEPREFIX"] = cache
    return environment


def process_cpu(arguments: list[str], repeat: int, environment: dict[str, str]) -> float:
    """The least user+sys CPU time of ``repeat`` runs of ``grammarkit ARGUMENTS``."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "grammarkit", *arguments], env=environment,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times)


_PEAK_SCRIPT = """
import re, sys
from pathlib import Path
from grammarkit.ebnf.parser import parse

def peak_kib():  # VmHWM: this process's own peak (ru_maxrss keeps the forking parent's)
    return int(re.search(r"VmHWM:\\s*(\\d+)", Path("/proc/self/status").read_text()).group(1))

text = open(sys.argv[1], encoding="utf-8").read()
before = peak_kib()
parse(text)
print(peak_kib() - before)
"""


def parse_peak_mb(path: Path) -> float:
    """How much a fresh process's peak resident memory grows while parsing the file."""
    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(path)], capture_output=True,
                         text=True, check=True).stdout
    return int(out) / 1024


def from_ebnf(text: str) -> None:
    """``Grammar.from_ebnf``: parsing plus the grammar's set-up (a grammar with errors raises)."""
    try:
        Grammar.from_ebnf(text)
    except GrammarError:
        pass


def first_verdict(text: str) -> None:
    """``Grammar.from_ebnf`` and a first verdict (on a text no grammar here accepts)."""
    try:
        Grammar.from_ebnf(text).matches("\x00")
    except GrammarError:
        pass


def fmt(text: str) -> str:
    return print_grammar(parse(text).ast, text)


def xgrammar_parse(text: str) -> None:
    try:
        xgr.Grammar.from_ebnf(text)
    except RuntimeError:
        pass  # the undefined-reference case: xgrammar stops at the first error


def converted(schema: Path) -> str:
    """The grammar ``grammarkit convert json-schema SCHEMA --lenient`` writes."""
    return Grammar.from_json_schema(json.loads(schema.read_text()), lenient=True).to_ebnf()


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=3)
    options.add_argument("--big", action="store_true", help="also the 10 MB grammars")
    options.add_argument("--schema", type=Path, action="append", default=[],
                         help="also the grammar converted from this JSON Schema file")
    options.add_argument("--grammar", type=Path, action="append", default=[],
                         help="also this grammar file (e.g. one converted earlier)")
    args = options.parse_args()
    cases = [
        ("generated-1MB", generated(1_000_000)),
        ("varied-1MB", varied(1_000_000)),
        ("alternatives-20k", alternatives(20_000)),
        ("undefined-20k", undefined(20_000)),
    ]
    cases += [(f"schema:{path.stem}", converted(path)) for path in [DEFAULT_SCHEMA, *args.schema]]
    cases += [(f"file:{path.stem}", path.read_text(encoding="utf-8")) for path in args.grammar]
    from benchmarks.compile_vs_xgrammar import _mixed_rules, _words

    chain = "\n".join(f'r{i} ::= "{w}" | r{i + 1}' for i, w in enumerate(_words(100_000)))
    cases += [("mixed-100k", _mixed_rules(100_000)[0]),
              ("chain-100k", f'root ::= r0\n{chain}\nr100000 ::= "end"\n')]
    if args.big:
        cases += [("rules-250k", chained_rules(250_000)), ("mixed-250k", _mixed_rules(250_000)[0]),
                  ("class-10MB", big_class(10_000_000))]
    with tempfile.TemporaryDirectory() as folder:
        environment = _installed_environment(str(Path(folder) / "bytecode"))
        warm_up = Path(folder) / "warm-up.ebnf"  # compiles the bytecode of lint and fmt
        warm_up.write_text('root ::= "a"\n', encoding="utf-8")
        process_cpu(["lint", str(warm_up)], 1, environment)
        process_cpu(["fmt", "--check", str(warm_up)], 1, environment)
        startup = process_cpu(["--version"], args.repeat, environment)
        header = (f"{'grammar':<22}{'size':>9}{'parse':>8}{'lint':>8}{'fmt':>8}{'xgrammar':>10}"
                  f"{'ratio':>7}{'from_ebnf':>10}{'ratio':>7}{'verdict':>9}{'| lint cmd':>11}"
                  f"{'fmt --check':>12}{'parse MB':>10}")
        print("CPU seconds, best of", args.repeat, f"(library | whole command, bytecode cached; "
              f"start-up alone {startup:.2f}s)")
        print(header)
        print("-" * len(header))
        for name, text in cases:
            repeat = 1 if len(text) > 5_000_000 else args.repeat
            ours = best(partial(parse, text), repeat)
            linted = best(partial(lint, text), repeat)
            formatted = best(partial(fmt, text), repeat)
            theirs = best(partial(xgrammar_parse, text), repeat)
            built = best(partial(from_ebnf, text), repeat)
            verdict = best(partial(first_verdict, text), repeat)
            path = Path(folder) / f"{name.replace(':', '-')}.ebnf"
            path.write_text(text, encoding="utf-8")
            lint_command = process_cpu(["lint", str(path)], repeat, environment)
            fmt_command = process_cpu(["fmt", "--check", str(path)], repeat, environment)
            print(
                f"{name:<22}{len(text.encode()) / 1e6:>7.2f}MB{ours:>7.2f}s{linted:>7.2f}s"
                f"{formatted:>7.2f}s{theirs:>9.3f}s{ours / theirs:>6.1f}x{built:>9.2f}s"
                f"{built / theirs:>6.1f}x{verdict:>8.2f}s"
                f"{lint_command:>10.2f}s{fmt_command:>11.2f}s{parse_peak_mb(path):>10.0f}"
            )


if __name__ == "__main__":
    main()
