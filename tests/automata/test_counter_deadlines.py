"""Counted repetitions whose counts spread over a range: verdicts as xgrammar's, and the
``timeout`` honoured while their lazily built states grow (issue 7, bad input).

``("a" | "aa"){1000,100000}`` after *n* bytes may have made any count from n/2 to n, so every
new state holds a range of counts: building one costs time in proportion to *n*. Past the
timeout the scan used to go on building them (in the shape scan, and in the loop patterns of
the per-group scan) until the memory ceiling ended it, 20-70 s later, whatever the timeout.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import pytest
import xgrammar as xgr
from xgrammar.testing import _get_matcher_from_grammar

from grammarkit import Grammar
from grammarkit.automata.earley import MatchTimeout

SPREAD = 'root ::= ("a" | "aa"){1000,100000} "b"'
NULLABLE_PAIRS = 'root ::= ("a"? "a"?){0,100000} "b"'
NESTED_NULLABLE = 'root ::= (("a"{0,1000}){0,1000}){0,1000}'


@functools.cache
def _reference(ebnf: str) -> Callable[[bytes], bool]:
    matcher = _get_matcher_from_grammar(xgr.Grammar.from_ebnf(ebnf))

    def verdict(data: bytes) -> bool:
        matcher.reset()
        return bool(matcher.accept_string(data) and matcher.is_terminated())

    return verdict


@pytest.mark.xgrammar
@pytest.mark.parametrize(("ebnf", "texts"), [
    (SPREAD, ["a" * 10 + "b", "a" * 999 + "b", "a" * 1000 + "b", "aab"]),
    (NULLABLE_PAIRS, ["b", "aaaab", "aaaa", "ba"]),  # xgrammar: 8 s for 31 bytes
    (NESTED_NULLABLE, ["", "aaa", "aab"]),
])
def test_spread_counts_match_like_xgrammar(ebnf: str, texts: list[str]) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    for text in texts:
        assert grammar.matches(text) == _reference(ebnf)(text.encode()), (ebnf, len(text))


@pytest.mark.parametrize("ebnf", [SPREAD, NULLABLE_PAIRS, NESTED_NULLABLE])
def test_the_timeout_ends_a_scan_that_builds_states_all_along(ebnf: str) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    started = time.process_time()
    with pytest.raises(MatchTimeout) as caught:
        grammar.matches("a" * 3000 + "b", timeout=0.5)
    assert time.process_time() - started < 10  # was 20-70 s, ending in GK121
    assert caught.value.diagnostic.code == "GK122"
