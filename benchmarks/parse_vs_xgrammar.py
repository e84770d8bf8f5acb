"""The front end on big grammar texts: parse, lint and format beside xgrammar's parser, in one run.

Grammars (generated, deterministic):

* ``generated-1MB``: ~12k rules of the shape JSON-Schema converters emit (literals, classes,
  groups, alternatives, ``{0,3}``, references), ~1 MB;
* ``alternatives-20k``: one rule of 20,000 literal alternatives;
* ``rules-250k``: 250,000 small rules chained by references (~10 MB, ``--big`` only);
* ``class-10MB``: one character class of ~3.3 million CJK characters (``--big`` only);
* ``undefined-20k``: 20,000 misspelled references among 20,000 rules (errors and hints).

For each it prints the best of ``--repeat`` runs of grammarkit's ``parse`` (text to AST with
diagnostics), ``lint`` (parse plus every lint rule), ``fmt`` (parse plus canonical printing), and
xgrammar's ``Grammar.from_ebnf`` (its parser and normalisation passes), with the ratio
grammarkit / xgrammar for parsing.

Run: ``python benchmarks/parse_vs_xgrammar.py [--repeat N] [--big]``.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial

import xgrammar as xgr

from grammarkit.analysis.lint import lint
from grammarkit.ebnf.parser import parse
from grammarkit.ebnf.printer import print_grammar


def generated(size: int) -> str:
    """About ``size`` bytes of converter-like rules; every reference is defined."""
    rng = random.Random(0)
    lines = ['root ::= r0 (", " r1)*']
    count = 0
    total = 0
    while total < size:
        refs = [f"r{rng.randint(0, 2000 + count)}" for _ in range(3)]
        line = (
            f'r{count} ::= "key_{count}" ":" ( {refs[0]} | [a-z0-9_]+ "x" | "lit\\n{count}" '
            f'{refs[1]}? ) ("," {refs[2]}){{0,3}} [^"\\\\]*'
        )
        lines.append(line)
        total += len(line) + 1
        count += 1
    lines += [f'r{k} ::= "t{k}"' for k in range(count, 2001 + count)]
    return "\n".join(lines) + "\n"


def alternatives(count: int) -> str:
    return "root ::= " + " | ".join(f'"word{k}"' for k in range(count)) + "\n"


def chained_rules(count: int) -> str:
    body = [f'r{k} ::= "item {k}" r{k + 1} | [a-z]+' for k in range(count)]
    return "\n".join(["root ::= r0", *body, f'r{count} ::= "end"']) + "\n"


def big_class(size: int) -> str:
    chars = "".join(chr(0x4E00 + k % 20000) for k in range(size // 3))
    return f"root ::= [{chars}]+\n"


def undefined(count: int) -> str:
    refs = " ".join(f"rule_{k}x" for k in range(count))
    rules = "\n".join(f'rule_{k} ::= "x"' for k in range(count))
    return f"root ::= {refs}\n{rules}\n"


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def fmt(text: str) -> str:
    return print_grammar(parse(text).ast, text)


def xgrammar_parse(text: str) -> None:
    try:
        xgr.Grammar.from_ebnf(text)
    except RuntimeError:
        pass  # the undefined-reference case: xgrammar stops at the first error


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=3)
    options.add_argument("--big", action="store_true", help="also the 10 MB grammars")
    args = options.parse_args()
    cases = [
        ("generated-1MB", generated(1_000_000)),
        ("alternatives-20k", alternatives(20_000)),
        ("undefined-20k", undefined(20_000)),
    ]
    if args.big:
        cases += [("rules-250k", chained_rules(250_000)), ("class-10MB", big_class(10_000_000))]
    header = f"{'grammar':<18}{'size':>9}{'parse':>9}{'lint':>9}{'fmt':>9}{'xgrammar':>10}{'ratio':>8}"
    print(header)
    print("-" * len(header))
    for name, text in cases:
        repeat = 1 if len(text) > 5_000_000 else args.repeat
        ours = best(partial(parse, text), repeat)
        linted = best(partial(lint, text), repeat)
        formatted = best(partial(fmt, text), repeat)
        theirs = best(partial(xgrammar_parse, text), repeat)
        print(
            f"{name:<18}{len(text) / 1e6:>7.2f}MB{ours:>8.2f}s{linted:>8.2f}s{formatted:>8.2f}s"
            f"{theirs:>9.3f}s{ours / theirs:>7.1f}x"
        )


if __name__ == "__main__":
    main()
