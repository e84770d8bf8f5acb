"""`max_chars` as xgrammar 0.2.8 enforces it, pinned as ``docs/diagnostics.md`` (GK116) states.

grammarkit refuses to match such grammars (GK116) rather than answer differently; these
verdicts are the documented semantics, checked against the reference engine.
"""

from __future__ import annotations

import pytest
import xgrammar as xgr
from xgrammar.testing import _is_grammar_accept_string

from grammarkit import Grammar, GrammarError

pytestmark = pytest.mark.xgrammar

BUDGETS = [
    # (grammar, accepted, rejected)
    ('root ::= v ">"\nv[max_chars=2] ::= [a-z]*', [">", "a>", "ab>"], ["abc>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= [a-z\u00e9\u4f60]*',
     ["\u4f60\u4f60>", "\u00e9\u4f60>"], ["\u4f60\u4f60\u4f60>"]),  # characters, not bytes
    # sub-rules count; past the budget the rule ends where it first can
    ('root ::= v ">"\nv[max_chars=3] ::= "(" w ")"\nw ::= [a-z]*',
     ["()>", "(a)>", "(ab)>", "(abcdef)>"], ["(ab)c>", "(ab)>>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= "abc" "d"*', ["abc>"], ["abcd>", "abcdd>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= "ab" "c"?', ["ab>"], ["abc>"]),
    ('root ::= v ">" | "abc>"\nv[max_chars=2] ::= [a-z]*', ["abc>", "ab>"], ["abcd>"]),
    ('root ::= v v\nv[max_chars=2] ::= [a-z]*', ["", "abcd"], ["abcde"]),
    ('root ::= v "x"*\nv[max_chars=2] ::= "x"*', ["xxxx", "xx", "xxxxxxx"], ["xxy"]),
    ('root ::= v ">"\nv[max_chars=0] ::= [a-z]*', [">"], ["a>"]),
    ('root[max_chars=3] ::= [a-z]*', ["", "abc"], ["abcd"]),
    ('root ::= v ">"\nv[max_tokens=2, max_chars=4] ::= [a-z]*', ["abcd>"], ["abcde>"]),
]


@pytest.mark.parametrize(("ebnf", "accepted", "rejected"), BUDGETS,
                         ids=[str(i) for i in range(len(BUDGETS))])
def test_documented_budget_is_xgrammars(ebnf: str, accepted: list[str],
                                        rejected: list[str]) -> None:
    reference = xgr.Grammar.from_ebnf(ebnf)
    assert [_is_grammar_accept_string(reference, text) for text in accepted] == [True] * len(
        accepted)
    assert [_is_grammar_accept_string(reference, text) for text in rejected] == [False] * len(
        rejected)
    grammar = Grammar.from_ebnf(ebnf)
    with pytest.raises(GrammarError) as info:
        grammar.matches(accepted[0])
    assert [d.code for d in info.value.diagnostics] == ["GK116"]
