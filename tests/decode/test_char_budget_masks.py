"""Masks under ``max_chars``: skipping the deadline walk when no allowed token can reach a
deadline (known from the longest token of each cached mask) changes no mask."""

from __future__ import annotations

import random

import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher
from grammarkit.decode.mask_engine import MaskEngine
from grammarkit.vocab import Vocabulary

GRAMMARS = [
    ('root ::= "{\\"title\\": \\"" title "\\", \\"words\\": [" (quoted ", ")* quoted "]}"\n'
     'quoted ::= "\\"" word "\\""\ntitle[max_chars=40] ::= [a-zA-Z ]*\n'
     'word[max_chars=8] ::= [a-z]+'),
    'root ::= "A: " v "." w\nv[max_chars=20] ::= [^.]*\nw[max_chars=6] ::= "ok" [a-z ]*',
    'root ::= "<" w ("," w)* ">"\nw[max_chars=3] ::= [a-z0-9]+ | "x" Token(100, 200)',
]


@pytest.mark.parametrize("text", GRAMMARS)
@pytest.mark.parametrize("seed", [0, 1])
def test_masks_do_not_depend_on_knowing_the_longest_token(
        qwen36: Vocabulary, monkeypatch: pytest.MonkeyPatch, text: str, seed: int) -> None:
    grammar = Grammar.from_ebnf(text)
    fast, slow = TokenMatcher(grammar, qwen36), TokenMatcher(grammar, qwen36)
    rng = random.Random(seed)
    known = 0
    for _ in range(30):
        allowed = fast.allowed_token_ids().tolist()
        with monkeypatch.context() as patch:  # every mask walked with the deadlines
            patch.setattr(MaskEngine, "longest_token", lambda self, key: None)
            assert slow.allowed_token_ids().tolist() == allowed
        ordinary = [t for t in allowed if t not in qwen36.stop_ids]
        if not ordinary:
            fast.reset()
            slow.reset()
            continue
        longest = fast._engine.longest_token(
            fast._engine.state_key(fast._history[-1].state, fast._frame_keys))
        known += longest is not None
        token = rng.choice(ordinary)
        assert fast.accept_token(token) and slow.accept_token(token)
    assert known  # the fast matcher knew the longest token of its masks
