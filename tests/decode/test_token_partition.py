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
from grammarkit.decode.token_partition import TokenPartition, byte_classes, token_partition
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


def test_groups_are_exactly_the_class_sequences(qwen36: Vocabulary) -> None:
    index = token_index(qwen36)
    classes = byte_classes(Grammar.from_ebnf(ARITHMETIC).compiled)
    partition = token_partition(Grammar.from_ebnf(ARITHMETIC).compiled, index)
    by_sequence: dict[tuple[int, ...], int] = {}
    table = classes.tolist()
    for rank, token in enumerate(index.tokens):
        group = by_sequence.setdefault(tuple(table[b] for b in token), int(partition.group_of[rank]))
        assert partition.group_of[rank] == group, token
    assert len(by_sequence) == partition.num_groups
    assert np.array_equal(partition.group_of[partition.representative],
                          np.arange(partition.num_groups))


def test_walks_before_the_groups_exist_agree_with_grouped_walks(qwen36: Vocabulary) -> None:
    from grammarkit.decode.earley_core import EarleyCore
    from grammarkit.decode.state_automaton import StateAutomaton
    from grammarkit.decode.token_partition import DIRECT_RANKS, TokenPartition

    compiled = Grammar.from_ebnf(ARITHMETIC).compiled
    index = token_index(qwen36)
    first = np.zeros(256, dtype=np.bool_)
    first[list(b"0123456789(")] = True
    ranks = index.starting_with(first)
    assert 0 < len(ranks) <= DIRECT_RANKS
    walks = []
    for grouped in (False, True):
        partition = TokenPartition(byte_classes(compiled), index)
        if grouped:
            assert partition.num_groups  # computes the groups
        core = EarleyCore(compiled)
        automaton = StateAutomaton(core, index, partition)
        walk = automaton.walk(automaton.number(core.initial()), ranks)
        walks.append(sorted(walk.accepted.tolist()))
        assert partition.is_grouped == grouped
    assert walks[0] == walks[1] and len(walks[0]) > 100


@pytest.mark.parametrize("first_bytes", [b"0123456789", b" (", b"abcXYZ_", bytes(range(256))])
def test_groups_by_first_byte_hold_exactly_the_tokens_starting_with_it(
        qwen36: Vocabulary, first_bytes: bytes) -> None:
    compiled = Grammar.from_ebnf(ARITHMETIC).compiled
    index = token_index(qwen36)
    partition = token_partition(compiled, index)
    first = np.zeros(256, dtype=np.bool_)
    for byte in first_bytes:  # widened to whole classes, as every byte row is
        first[partition.same_class[byte]] = True
    groups = partition.groups_starting_with(first)
    assert len(set(groups.tolist())) == len(groups)
    members = partition.member_ranks(groups)
    assert sorted(members.tolist()) == index.starting_with(first).tolist()
    assert np.array_equal(np.unique(partition.group_of[members]), np.sort(groups))
    assert len(partition.member_ranks(groups[:0])) == 0


def test_class_sets_hold_the_classes_of_every_byte(qwen36: Vocabulary) -> None:
    index = token_index(qwen36)
    partition = TokenPartition(byte_classes(Grammar.from_ebnf(ARITHMETIC).compiled), index)
    ranks = np.array(random.Random(0).sample(range(index.num_tokens), 300), dtype=np.int64)
    for grouped in (False, True):  # from the tokens, then from a table per group
        assert partition.is_grouped == grouped
        sets = partition.class_sets_of(ranks)
        assert sets is not None
        for rank, found in zip(ranks.tolist(), sets.tolist(), strict=True):
            expected = 0
            for byte in index.tokens[rank]:
                expected |= 1 << int(partition.classes[byte])
            assert found == expected
        assert partition.num_groups  # computes the groups


@pytest.mark.parametrize("prefix", [b"'", b"'ab", b"'a''"])
def test_tokens_looping_in_the_start_state_are_accepted_as_a_walk_accepts_them(
        qwen36: Vocabulary, monkeypatch: pytest.MonkeyPatch, prefix: bytes) -> None:
    from grammarkit.decode import state_automaton
    from grammarkit.decode.earley_core import EarleyCore
    from grammarkit.decode.state_automaton import StateAutomaton
    from grammarkit.decode.token_partition import TokenPartition

    compiled = Grammar.from_ebnf("root ::= \"'\" ([^'] | \"''\")* \"'\" \" \"*").compiled
    index = token_index(qwen36)
    ranks = np.arange(index.num_tokens, dtype=np.int64)
    walks = []
    for loop_ranks in (0, 10**9):
        monkeypatch.setattr(state_automaton, "LOOP_RANKS", loop_ranks)
        core = EarleyCore(compiled)
        automaton = StateAutomaton(core, index, TokenPartition(byte_classes(compiled), index))
        state = core.advance(core.initial(), prefix)
        assert state is not None
        start = automaton.number(state)
        walk = automaton.walk(start, ranks)
        walks.append((sorted(walk.accepted.tolist()), sorted(walk.open_failed.tolist())))
        if loop_ranks == 0:
            assert automaton._loop_classes(start)  # a string body loops
    assert walks[0] == walks[1] and len(walks[0][0]) > 100_000


@given(st.lists(st.sampled_from([0, 1, -1, 2**62, -(2**62), 2**40, 2**40 + 1, 3 << 50, 7 << 58,
                                 12345, -12345, 2**63 - 1, -(2**63)]), max_size=60),
       st.lists(st.integers(-(2**63), 2**63 - 1), max_size=60), st.randoms(use_true_random=False))
@settings(max_examples=200)
def test_dense_ids_number_equal_keys_alike(crafted: list[int], drawn: list[int],
                                           rng: random.Random) -> None:
    from grammarkit.decode.token_partition import _dense_ids

    values = crafted + drawn + [rng.choice(crafted + drawn + [0]) for _ in range(40)]
    # many keys that differ only in their low or high bits share hash slots
    values += [k << 48 for k in range(30)] + [k for k in range(0, 1 << 20, 1 << 15)]
    keys = np.array(values, dtype=np.int64)
    ids = _dense_ids(keys)
    first: dict[int, int] = {}
    for key, found in zip(keys.tolist(), ids.tolist(), strict=True):
        assert first.setdefault(key, found) == found
    assert sorted(set(first.values())) == list(range(len(first)))


@given(st.lists(st.integers(0, 5), min_size=256, max_size=256),
       st.sets(st.binary(min_size=1, max_size=24), min_size=1, max_size=120))
@settings(max_examples=60, deadline=None)
def test_groups_are_the_class_sequences_for_any_byte_classes(
        raw_classes: list[int], tokens: set[bytes]) -> None:
    from grammarkit.decode.token_index import TokenIndex

    # numbered from 0 in order of appearance, as byte_classes numbers them
    _, classes = np.unique(np.array(raw_classes, dtype=np.int64), return_inverse=True)
    # long tokens, so that grouping takes several passes, and each with its bytes replaced by
    # the first byte of their class, so that different tokens share class sequences
    ordered = sorted(tokens) + [token * 4 for token in tokens]
    first_of_class = np.unique(classes, return_index=True)[1][classes].tolist()
    ordered = sorted({*ordered, *(bytes(first_of_class[b] for b in t) for t in ordered)})
    index = TokenIndex(Vocabulary.from_tokens(ordered, special_ids=(), stop_ids=()))
    partition = TokenPartition(classes.astype(np.int64), index)
    table = classes.tolist()
    by_sequence: dict[tuple[int, ...], int] = {}
    for rank, token in enumerate(index.tokens):
        group = by_sequence.setdefault(tuple(table[b] for b in token),
                                       int(partition.group_of[rank]))
        assert partition.group_of[rank] == group, token
    assert len(by_sequence) == partition.num_groups
    assert np.array_equal(partition.group_of[partition.representative],
                          np.arange(partition.num_groups))
