"""The decoder on a parsed grammar (every rule numbered, bodies walked at the first mask) and
on the same rules compiled from the root (only the reachable rules numbered): equal masks."""

from __future__ import annotations

import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, engine_cache
from grammarkit.diagnostics import GrammarError
from grammarkit.vocab import Vocabulary

TOKENS = [b"a", b"b", b"ab", b"(", b")", b",", b"1", b"12", b"x", b"\xe4", b"\xc3", b"</s>",
          b"ba,", b"a1", b"(a"]
STOP = 11

# `unused` and `island` are unreachable: their bytes (x, \xe4) only refine the byte classes
TEXT = r'''root ::= item ("," item)*
item ::= "a" digits | "(" root ")" | tail
tail ::= "b" | "ab" tail
digits ::= [0-9]*
unused ::= "x" island [\xe4-\xe9]
island ::= unused | "x" Regex("[a-c]+")
'''


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary(TOKENS, stop_ids=[STOP])


def _masks(grammar: Grammar, vocab: Vocabulary, tokens: list[int]) -> list[list[int]]:
    engine_cache.clear()  # both grammars have the same text: no shared engine
    matcher = TokenMatcher(grammar, vocab)
    masks = [matcher.allowed_token_ids().tolist()]
    for token in tokens:
        assert matcher.accept_token(token)
        masks.append(matcher.allowed_token_ids().tolist())
    return masks


@pytest.mark.parametrize("tokens", [[0, 7, 5, 3, 14, 4], [2, 1, 5, 13, 6], [0, 5, 3, 0, 4, STOP]])
def test_masks_equal_under_either_numbering(vocab: Vocabulary, tokens: list[int]) -> None:
    parsed = Grammar.from_ebnf(TEXT)
    from_root = Grammar(parsed.ast, "root")  # references unchecked: the reachable rules
    assert parsed.compiled.num_rules == 6 and from_root.compiled.num_rules == 4
    assert _masks(parsed, vocab, tokens) == _masks(from_root, vocab, tokens)


def test_a_bad_token_id_in_an_unreachable_rule_is_still_reported(vocab: Vocabulary) -> None:
    engine_cache.clear()
    grammar = Grammar.from_ebnf(TEXT + "spare ::= Token(99)\n")
    with pytest.raises(GrammarError) as caught:
        TokenMatcher(grammar, vocab)
    assert [d.code for d in caught.value.diagnostics] == ["GK170"]
