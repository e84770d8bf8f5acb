"""grammarkit accepts exactly the texts xgrammar 0.2.8 accepts, and blames the same position."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar, GrammarError
from tests.ebnf.corpus import DEVIATIONS, INVALID, REFUSED_WHEN_COMPILED, VALID
from tests.ebnf.parity import grammarkit_verdict, same_verdict, xgrammar_verdict

pytestmark = pytest.mark.xgrammar


@pytest.mark.parametrize("text", VALID, ids=range(len(VALID)))
def test_valid_corpus_is_accepted_by_both(text: str) -> None:
    assert xgrammar_verdict(text) is None, "corpus error: xgrammar rejects this text"
    assert grammarkit_verdict(text) is None


@pytest.mark.parametrize("text", INVALID, ids=range(len(INVALID)))
def test_invalid_corpus_is_rejected_at_the_same_position(text: str) -> None:
    expected = xgrammar_verdict(text)
    assert expected is not None, "corpus error: xgrammar accepts this text"
    assert same_verdict(expected, grammarkit_verdict(text))


@pytest.mark.parametrize("text", DEVIATIONS)
def test_deliberate_deviation_code_points_beyond_unicode(text: str) -> None:
    assert xgrammar_verdict(text) is None
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf(text)
    assert [d.code for d in info.value.diagnostics] == ["GK114"]


SEEDS = [
    'root ::= "a" b*\nb ::= [a-z0-9] | "\\n" | ( "x" "y" )? c{2,3}\nc ::= "c"+ (= "d")',
    (
        'root ::= TagDispatch(("<a>", x), ("<b>", y), loop_after_dispatch=false, excludes=("q",))\n'
        'x ::= "x"\ny ::= [^"\\\\]*'
    ),
    (
        'root ::= value\nvalue ::= object | array | string | "null"\n'
        'object ::= "{" ws (member ("," ws member)*)? "}"\nmember ::= string ws ":" ws value ws\n'
        'array ::= "[" ws (value ("," ws value)*)? "]"\nstring ::= "\\"" [^"\\\\\\x00-\\x1f]* "\\""\n'
        "ws ::= [ \\t\\n]*"
    ),
    (
        "root[max_tokens=10] ::= Token(1, 2) | ExcludeToken(3) | TokenTagDispatch((5, r.x), "
        'excludes=(7,))\nr.x ::= Regex("[a-z]+", json_string=true) Substring("abc", "d")'
    ),
    (
        '# comment\nroot ::= e # trailing\ne ::= e "+" t | t\nt ::= t "*" f | f\n'
        'f ::= "(" e ")" | [0-9]{1,}'
    ),
]
PIECES = list('abr:=|()[]{}"\\*+?-,0123456789 \n#^.xy') + [
    "::=",
    "(=",
    "Token(",
    "root ::= ",
    "{1,-1}",
    "\\x4",
    "\\u00e9",
    "é",
    "\r\n",
    "[lazy]",
]
TOKENS = [
    "root",
    "::=",
    "a",
    "b",
    "x.y",
    "-z",
    '"s"',
    '""',
    '"\\n"',
    "[a-z]",
    "[^]",
    "[]",
    "[\\d]",
    "(",
    ")",
    "(=",
    "|",
    "*",
    "+",
    "?",
    "{",
    "}",
    ",",
    "1",
    "3",
    "-1",
    "{2}",
    "{1,}",
    "{2,5}",
    "Token(1)",
    "TagDispatch",
    "Regex",
    "Substring",
    '("t", a)',
    "=",
    "true",
    "\n",
    "\n",
    "#c\n",
    "excludes",
    "root[lazy]",
    "a[max_tokens=5]",
    "0",
]


def _mutate(seed: int) -> str:
    rng = random.Random(seed)
    text = rng.choice(SEEDS)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(text) + 1)
        op = rng.random()
        if op < 0.4:
            text = text[:i] + text[i + 1 :]
        elif op < 0.8:
            text = text[:i] + rng.choice(PIECES) + text[i:]
        else:
            text = text[:i] + rng.choice(PIECES) + text[i + 1 :]
    return text


def _token_soup(seed: int) -> str:
    rng = random.Random(seed)
    parts = ["root ::= "] + [rng.choice(TOKENS) for _ in range(rng.randint(1, 14))]
    if rng.random() < 0.5:
        parts.append('\na ::= "a"\nb ::= b')
    return (" " if rng.random() < 0.5 else "").join(parts)


@settings(max_examples=400)
@given(st.integers(min_value=0, max_value=2**32))
def test_mutated_grammars_get_xgrammars_verdict(seed: int) -> None:
    text = _mutate(seed)
    assert same_verdict(xgrammar_verdict(text), grammarkit_verdict(text)), text


@settings(max_examples=400)
@given(st.integers(min_value=0, max_value=2**32))
def test_token_soups_get_xgrammars_verdict(seed: int) -> None:
    text = _token_soup(seed)
    assert same_verdict(xgrammar_verdict(text), grammarkit_verdict(text)), text


@pytest.mark.parametrize("text", REFUSED_WHEN_COMPILED)
def test_what_xgrammar_cannot_compile_is_refused_when_parsed(text: str) -> None:
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    assert xgrammar_verdict(text) is None
    with pytest.raises(RuntimeError):
        _is_grammar_accept_string(xgrammar.Grammar.from_ebnf(text), "a")
    assert grammarkit_verdict(text) is not None
