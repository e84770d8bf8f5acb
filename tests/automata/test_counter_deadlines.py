"""Counted repetitions whose counts spread over a range: verdicts as xgrammar's, linear time on
long inputs, and the ``timeout`` honoured where lazily built states keep coming (issue 7).

``("a" | "aa"){1000,100000}`` after *n* bytes may have made any count from n/2 to n. Positions
hold each loop's counts as an interval and drop the counts a smaller one dominates, so a state
stays a few positions long (it held all n/2 counts, and 3,000 bytes ran into the timeout);
nested nullable loops still build a new (small) state at every byte, and the timeout must end
such a scan, however it builds them (in the shape scan, or in the per-group scan's loop
patterns), not the memory ceiling 20-70 s later.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from grammarkit import Grammar
from grammarkit.automata.earley import MatchTimeout
from tests.automata.test_counted import xgrammar_verdict

SPREAD = 'root ::= ("a" | "aa"){1000,100000} "b"'
NULLABLE_PAIRS = 'root ::= ("a"? "a"?){0,100000} "b"'
NESTED_NULLABLE = 'root ::= (("a"{0,1000}){0,1000}){0,1000}'




@pytest.mark.xgrammar
@pytest.mark.parametrize(("ebnf", "texts"), [
    (SPREAD, ["a" * 10 + "b", "a" * 999 + "b", "a" * 1000 + "b", "aab"]),
    (NULLABLE_PAIRS, ["b", "aaaab", "aaaa", "ba"]),  # xgrammar: 8 s for 31 bytes
    (NESTED_NULLABLE, ["", "aaa", "aab"]),
])
def test_spread_counts_match_like_xgrammar(ebnf: str, texts: list[str]) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    for text in texts:
        assert grammar.matches(text) == xgrammar_verdict(ebnf)(text.encode()), (ebnf, len(text))


@pytest.mark.parametrize(("ebnf", "accepts"), [
    (SPREAD, lambda n: 1000 <= n <= 200_000),
    (NULLABLE_PAIRS, lambda n: n <= 200_000),
])
def test_spread_counts_cost_linear_time(ebnf: str, accepts: Callable[[int], bool]) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    started = time.process_time()
    for n in (999, 1000, 3000, 30_000):
        assert grammar.matches("a" * n + "b", timeout=60) == accepts(n), n
    assert not grammar.matches("a" * 30_000 + "ab" + "a" * 100, timeout=60)
    assert time.process_time() - started < 10  # 3,000 bytes ran into the timeout (GK122)
    assert grammar.compiled.num_states < 5000  # a state per byte at most: each stays small


def test_the_timeout_ends_a_scan_that_builds_states_all_along() -> None:
    grammar = Grammar.from_ebnf(NESTED_NULLABLE)  # a new state at every byte
    started = time.process_time()
    with pytest.raises(MatchTimeout) as caught:
        grammar.matches("a" * 100_000 + "b", timeout=0.5)
    assert time.process_time() - started < 10  # was 20-70 s, ending in GK121
    assert caught.value.diagnostic.code == "GK122"
