"""Deterministic big grammar texts for the front-end benchmarks (and the tests that pin the linter).

* :func:`generated`: converter-like rules (literals, classes, groups, ``{0,3}``, references);
* :func:`varied`: every construct the linter and the printer treat specially, each lint rule
  firing somewhere, comments and suppressions, redundant grouping and odd spacing for ``fmt``;
* :func:`alternatives`, :func:`chained_rules`, :func:`big_class`, :func:`undefined`: one
  extreme each (a wide choice, a long chain, a huge class, many misspelled references).
"""

from __future__ import annotations

import random
import re


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


_PARTS = (
    # clean shapes, as converters and people write them
    ('obj{k} ::= "{{" ws (pair{k} (ws "," ws pair{k})*)? ws "}}"\n'
    'pair{k} ::= "\\"" [a-z_] [a-z0-9_]{{0,31}} "\\"" ws ":" ws value{k}\n'
    'value{k} ::= "true" | "false" | "null" | [0-9]+ ("." [0-9]+)? | "\\"" [^"\\\\\\n]* "\\""\n'),
    ('key{k} ::= ("a" | "\\\\u0061") ("b" | "\\\\u0062") ("c" | "\\\\u006" [Cc]) key{k}.tail\n'
    'key{k}.tail ::= [a-z] key{k}.tail | ""\n'),
    ('tree{k} ::= "(" (leaf{k} | tree{k}) ("," (leaf{k} | tree{k}))* ")"\n'
    'leaf{k} ::= Regex("[a-z]+[0-9]?") | Substring("hello world") | "x" (= [,)])\n'),
    ('tags{k} ::= TagDispatch(("<a>", leaf{k}x), ("<b>", obj{k}x), loop_after_dispatch=false)\n'
    'leaf{k}x ::= [a-z]{{1,8}}\nobj{k}x ::= "{{" [^}}]* "}}"\n'),
    ('long{k} ::= "alpha-{k}" | "beta-{k}" | "gamma-{k}" | "delta-{k}" | "epsilon-{k}" | '
    '"zeta-{k}" | "eta-{k}" | "theta-{k}" | "iota-{k}"\n'),
    # one per lint rule
    'unused{k} ::= "never referenced"\n',  # GK201
    'stuck{k} ::= "(" stuck{k} ")"\n',  # GK202
    'empty{k} ::= [] | "q"\n',  # GK204
    'loop{k} ::= ("a"? "b"?)* "c"\n',  # GK205
    'spin{k} ::= ("a" [ \\t]*)*\n',  # GK206
    'dup{k} ::= "x" | [ab] | "x" | [ba] | ("y" "z") | "y" "z"\n',  # GK207
    'overlap{k} ::= [a-zm-z0-9] [0-99]\n',  # GK208
    'sum{k} ::= sum{k} "+" term{k} | term{k}\nterm{k} ::= [0-9]+\n',  # GK209
    'huge{k} ::= "a"{{0,20000}}\n',  # GK210
    'use{k} ::= ahead{k} "z"\nahead{k} ::= "x" (= "y")\n',  # GK211
    'hex{k} ::= "\\x41B" [\\x20-\\x7E]\n',  # GK212
    'lazy{k}[lazy] ::= [a-z]{{2,3}}\n',  # GK214
    'peek{k} ::= Regex("[a-z]+(?=[0-9])[0-9]")\n',  # GK215
    # what fmt rewrites, and comments it keeps
    'messy{k}   ::=((( "a" )) ( "b" ( "c"  "d" )) )|(("e"|"f")|"g") "h"{{0,1}}  # trailing\n',
    '# a comment line before a rule\nquiet{k} ::= "x" | "x"  # grammarkit: ignore[GK207]\n',
)
"""One group of rules each; ``{k}`` makes the names unique. Each group's first rule is its entry."""

_ENTRIES = tuple(re.search(r"^([\w.{}]+)[\[ ]", part, re.MULTILINE).group(1)  # type: ignore[union-attr]
                 for part in _PARTS)
_REACHABLE = [entry for entry in _ENTRIES if not entry.startswith("unused")]


def varied(size: int) -> str:
    """About ``size`` bytes of every construct the linter and the printer handle.

    Rules are grouped in blocks of :data:`_PARTS`; block ``k``'s rule ``g{k}`` uses every entry
    of the block (but the deliberately unused one) and ``g{k+1}``, so the root reaches the rest.
    Every lint rule fires in every block.
    """
    rng = random.Random(1)
    lines = ["root ::= ws g0 ws", 'ws ::= [ \\t\\n]{0,8}']
    total = 0
    k = 0
    while total < size:
        entries = [entry.replace("{k}", str(k)) for entry in _REACHABLE]
        rng.shuffle(entries)
        block = [f"g{k} ::= " + " | ".join(entries) + f" | g{k + 1}\n"]
        block += [part.format(k=k) for part in _PARTS]
        text = "".join(block)
        lines.append(text.rstrip("\n"))
        total += len(text)
        k += 1
    lines.append(f'g{k} ::= "end"')
    return "\n".join(lines) + "\n"


def alternatives(count: int) -> str:
    """One rule of ``count`` literal alternatives."""
    return "root ::= " + " | ".join(f'"word{k}"' for k in range(count)) + "\n"


def chained_rules(count: int) -> str:
    """``count`` small rules, each referring to the next."""
    body = [f'r{k} ::= "item {k}" r{k + 1} | [a-z]+' for k in range(count)]
    return "\n".join(["root ::= r0", *body, f'r{count} ::= "end"']) + "\n"


def big_class(size: int) -> str:
    """One character class of about ``size`` bytes of CJK characters."""
    chars = "".join(chr(0x4E00 + k % 20000) for k in range(size // 3))
    return f"root ::= [{chars}]+\n"


def undefined(count: int) -> str:
    """``count`` misspelled references among ``count`` rules."""
    refs = " ".join(f"rule_{k}x" for k in range(count))
    rules = "\n".join(f'rule_{k} ::= "x"' for k in range(count))
    return f"root ::= {refs}\n{rules}\n"
