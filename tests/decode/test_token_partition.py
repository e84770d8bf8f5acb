"""`TokenPartition`: tokens in one group are parsed alike, so masks never split a group."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher
from grammarkit.decode.token_index import token_index
from grammarkit.decode.token_partition import byte_classes, token_partition
from grammarkit.vocab import Vocabulary

ARITHMETIC = r"""
root ::= expr
expr ::= term (" "? [+\-] " "? term)*
term ::= name | [0-9]+ | name "(" expr ")" | "(" expr ")"
name ::= [a-zA-Z_] [a-zA-Z_0-9]*
"""


@given(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255)), max_size=8))
@settings(max_examples=50)
def test_byte_classes_separate_exactly_what_some_edge_separates(
        ranges: list[tuple[int, int]]) -> None:
    alternatives = [f"[\\x{min(a, b, 127):02x}-\\x{min(max(a, b), 127):02x}]"
                    for a, b in ranges] or ['"x"']
    compiled = Grammar.from_ebnf("root ::= " + " | ".join(alternatives)).compiled
    classes = byte_classes(compiled)
    edges = compiled.byte_ranges()
    for a in range(0, 256, 7):
        for b in range(0, 256, 5):
            alike = all((lo <= a <= hi) == (lo <= b <= hi) for lo, hi in edges)
            assert (classes[a] == classes[b]) == alike


def test_identifier_tokens_share_groups(qwen36: Vocabulary) -> None:
    index = token_index(qwen36)
    partition = token_partition(Grammar.from_ebnf(ARITHMETIC).compiled, index)
    assert partition.num_groups < index.num_tokens // 10
    rank = {token: r for r, token in enumerate(index.tokens)}
    assert partition.group_of[rank[b"abc"]] == partition.group_of[rank[b"xyz"]]
    assert partition.group_of[rank[b"abc"]] == partition.group_of[rank[b"max"]]
    assert partition.group_of[rank[b"abc"]] != partition.group_of[rank[b"abcd"]]
    assert partition.group_of[rank[b"("]] != partition.group_of[rank[b")"]]


@pytest.mark.parametrize("seed", [0, 1])
def test_masks_are_unions_of_groups(qwen36: Vocabulary, seed: int) -> None:
    grammar = Grammar.from_ebnf(ARITHMETIC)
    matcher = TokenMatcher(grammar, qwen36)
    index = token_index(qwen36)
    partition = token_partition(grammar.compiled, index)
    rng = random.Random(seed)
    for _ in range(12):
        allowed = np.zeros(index.vocab_size, dtype=np.bool_)
        allowed[matcher.allowed_token_ids()] = True
        by_rank = allowed[index.ids]
        allowed_in_group = np.zeros(partition.num_groups, dtype=np.int64)
        np.add.at(allowed_in_group, partition.group_of, by_rank)
        sizes = np.bincount(partition.group_of, minlength=partition.num_groups)
        assert np.all((allowed_in_group == 0) | (allowed_in_group == sizes))
        choices = index.ids[by_rank]
        assert matcher.accept_token(int(rng.choice(choices.tolist())))
