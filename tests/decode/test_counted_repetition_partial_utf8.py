"""xgrammar 0.2.8 lets a token ending in a lone UTF-8 lead byte into the mask of a long count.

With ``[a-z0-9 ]{0,1000}`` (a counted repetition xgrammar keeps as a counter) its first mask
allows the token ``b" \\xe0"``, whose last byte can only start a three-byte character the class
excludes, and its own ``accept_token`` then refuses that token. With the small bound
``{0,100}`` it leaves the token out. The native decoder leaves it out at every bound: a mask
never allows a token the matcher would refuse. Found by ``benchmarks/compile_vs_xgrammar.py``
on ``[a-z0-9 ]{500,60000}`` with the Qwen3.6 vocabulary (one token apart in 69,598).
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

pytestmark = pytest.mark.xgrammar
xgr = importlib.import_module("xgrammar")

TOKENS = [b"a", b" ", b" \xe0", b"\xe0", b"\xe0\xa4", b"ab", b"</s>"]
PARTIAL = 2
STOP = 6


def _xgrammar_first_mask(text: str) -> tuple[set[int], bool]:
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, vocab_size=len(TOKENS),
                             stop_token_ids=[STOP])
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(
        xgr.Grammar.from_ebnf(text))
    matcher = xgr.GrammarMatcher(compiled)
    bitmask = xgr.allocate_token_bitmask(1, len(TOKENS))
    matcher.fill_next_token_bitmask(bitmask)
    bits = np.unpackbits(bitmask.numpy().view(np.uint8), bitorder="little")[: len(TOKENS)]
    return set(np.nonzero(bits)[0].tolist()), bool(matcher.accept_token(PARTIAL))


def _native_first_mask(text: str) -> tuple[set[int], bool]:
    vocab = Vocabulary(TOKENS, stop_ids=[STOP])
    matcher = TokenMatcher(Grammar.from_ebnf(text), vocab)
    matcher.fill_next_token_bitmask(allocate_token_bitmask(1, len(TOKENS)))
    allowed = set(matcher.allowed_token_ids().tolist())
    return allowed, matcher.accept_token(PARTIAL)


@pytest.mark.parametrize("bound", [1000, 100_000])
def test_xgrammar_masks_a_token_it_then_refuses(bound: int) -> None:
    allowed, accepted = _xgrammar_first_mask(f"root ::= [a-z0-9 ]{{0,{bound}}}")
    assert PARTIAL in allowed
    assert not accepted


@pytest.mark.parametrize("bound", [100, 1000, 100_000])
def test_native_mask_and_accept_agree(bound: int) -> None:
    text = f"root ::= [a-z0-9 ]{{0,{bound}}}"
    allowed, accepted = _native_first_mask(text)
    assert allowed == {0, 1, 5, STOP}
    assert not accepted
    xgr_allowed, _ = _xgrammar_first_mask(text)
    assert allowed == xgr_allowed - {PARTIAL}
