"""GK214: lint reports the lazy rules xgrammar 0.2.8's compiler refuses, and only those."""

from __future__ import annotations

import pytest
import xgrammar as xgr

from grammarkit import lint

pytestmark = pytest.mark.xgrammar

LAZY_RULES = [
    'root[lazy] ::= "k" [0-9]{2,4}',
    'root[lazy] ::= "k" [0-9]{2}',
    'root[lazy] ::= "k" [0-9]*',
    'root[lazy] ::= "k" [0-9]+',
    'root[lazy] ::= "k" [0-9]?',
    'root[lazy] ::= "k" ("ab"){2,4}',
    'root ::= x "!"\nx[lazy] ::= [0-9]{2,4}',
    'root ::= x "!"\nx[lazy] ::= [0-9]+',
    'root ::= x "!"\nx[lazy] ::= y\ny ::= [0-9]{2,4}',
    'root[lazy] ::= TagDispatch(("<a>", x))\nx ::= "x"',
    'root[lazy] ::= "a" | "ab"',
    'root[lazy] ::= Regex("[0-9]{2,4}")',
    'root[lazy] ::= Substring("abc")',
    'root[lazy] ::= Token(1)',
    'root[lazy] ::= "k" x\nx ::= [0-9]{2,4}',
    'root[lazy] ::= x\nx ::= "a"',
    'root[lazy] ::= ("a" "b")*',
    'root[lazy] ::= "a"{3}',
    'root[lazy] ::= ("a" | "b") "c"',
    'root[lazy] ::= [a-z]{0,3}',
    'root[lazy] ::= ""',
    'root[lazy] ::= ("a"?)',
    'root[lazy] ::= ("a" | "")',
    'root[lazy] ::= ("a"?) "b"',
    'root[lazy] ::= "a"? | "b"',
    'root[lazy] ::= "ab"+',
    'root ::= "<" r ">"\nr[lazy] ::= sub\nsub ::= sub [a-z] | [a-z]',
    'root ::= "<" r ">"\nr[lazy] ::= sub\nsub ::= [a-z] | "(" x ")"\nx ::= sub',
    # alternatives inside a sequence, Regex/Substring beside other items, single characters:
    'root ::= x "!"\nx[lazy] ::= "k" ("ab" | "c")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ([0-9] [0-9] | [0-9] [0-9] [0-9])\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= ("a" "b" | "c") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" y\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= y "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" | [0-9])+\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" | "b")*\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" "a"+\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" "é"*\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" | "é")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" | "")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= ("a" "b" | "") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= ("a" [0-9]+ | "c") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= ("a" [0-9]* | "c") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= (("a" "b" | "c") | "d") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" (("a" "b" | "c") "d")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" "b" | "c"){2}\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" ("a" | "b"){2}\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" Regex("[a-z]+")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= Substring("abc") "k"\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "x" | "k" ("a" "b" | "c")\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= Regex("[0-9]") ""\ny ::= "a" "b" | "c"',
    'root ::= x "!"\nx[lazy] ::= "k" [0-9] [0-9] | "k" [0-9] [0-9] [0-9]\ny ::= "a" "b" | "c"',
]


def xgrammar_compiles(text: str) -> bool:
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo(["a", "b"]))
    try:
        compiler.compile_grammar(xgr.Grammar.from_ebnf(text))
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("text", LAZY_RULES)
def test_gk214_exactly_when_xgrammar_cannot_compile(text: str) -> None:
    reported = [d for d in lint(text) if d.code == "GK214"]
    assert (not reported) == xgrammar_compiles(text)
    for d in reported:
        assert d.span is not None and d.hint
