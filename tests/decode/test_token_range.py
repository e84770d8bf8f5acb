"""A grammar naming a token id outside the vocabulary is refused when the matcher is built.

xgrammar 0.2.8 raises "token id out of range" there; grammarkit used to accept such grammars
silently (issue 8, item 18).
"""

from __future__ import annotations

import importlib

import pytest

import grammarkit as gk

VOCAB = gk.Vocabulary.from_tokens([b"a", b"b", b"c"])


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("root ::= Token(5)", 5),
        ("root ::= ExcludeToken(0, 5)", 5),
        ('root ::= TokenTagDispatch((5, a))\na ::= "a"', 5),
        ('root ::= TokenTagDispatch((1, a), excludes=(7,))\na ::= "a"', 7),
        ('root ::= "a" (= Token(3))', 3),
        ('root ::= x\nx ::= y "b"\ny ::= "a" Token(6)', 6),  # found while compiling
        ('root ::= "a" (= x)\nx ::= Token(4)', 4),  # a rule only a lookahead names
        ('root ::= "a"\nx ::= Token(5)', 5),  # a rule the root does not reach
    ],
)
def test_out_of_range_token_ids_are_refused(text: str, bad: int) -> None:
    grammar = gk.Grammar.from_ebnf(text)
    with pytest.raises(gk.GrammarError) as info:
        gk.TokenMatcher(grammar, VOCAB)
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.code == "GK170"
    assert f"token id {bad}" in diagnostic.message and "3 tokens" in diagnostic.message
    assert diagnostic.position is not None  # points at the Token(...) in the grammar


def test_in_range_token_ids_are_fine() -> None:
    grammar = gk.Grammar.from_ebnf('root ::= Token(2) ExcludeToken(0) TokenTagDispatch((1, a))\na ::= "a"')
    matcher = gk.TokenMatcher(grammar, VOCAB)
    assert matcher.accept_token(2)


@pytest.mark.xgrammar
@pytest.mark.parametrize(
    "text",
    [
        "root ::= Token(5)",
        "root ::= ExcludeToken(0, 5)",
        'root ::= TokenTagDispatch((5, a))\na ::= "a"',
        'root ::= TokenTagDispatch((1, a), excludes=(7,))\na ::= "a"',
    ],
)
def test_xgrammar_refuses_them_too(text: str) -> None:
    xgr = importlib.import_module("xgrammar")
    info = xgr.TokenizerInfo(["a", "b", "c"])
    with pytest.raises(RuntimeError, match="out of range|vocab_size"):
        xgr.GrammarCompiler(info).compile_grammar(text)
