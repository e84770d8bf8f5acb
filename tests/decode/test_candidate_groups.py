"""`StateAutomaton.candidate_groups`: walking only the groups whose first two bytes can be
parsed gives exactly the walk over every group, for real states and for the local states of
their classification contexts (whose rescuable bytes make a rejected token uncertain)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.decode import state_automaton
from grammarkit.decode.earley_core import EarleyCore, ParseState
from grammarkit.decode.state_automaton import StateAutomaton, Walk
from grammarkit.decode.token_classes import TokenClassifier, classified_groups
from grammarkit.decode.token_index import token_index
from grammarkit.decode.token_partition import TokenPartition, byte_classes
from grammarkit.vocab import Vocabulary

GRAMMARS = {
    "calls": r"""
root ::= expr
expr ::= term (" "? [+\-*/] " "? term)*
term ::= name | [0-9]+ ("." [0-9]+)? | name "(" expr ("," " "? expr)* ")" | "(" expr ")"
name ::= [a-zA-Z_] [a-zA-Z_0-9]*
""",
    "object": r"""
root ::= "{" ws pair (ws "," ws pair)* ws "}"
pair ::= "\"" ("color" | "ok" | "scores") "\"" ws ":" ws value
value ::= "\"" ("red" | "green" | "blue") "\"" | "true" | "false" | "[" ws (num (ws "," ws num)*)? ws "]"
num ::= "-"? [0-9]+ ("." [0-9]+)? ([eE] [+\-]? [0-9]+)?
ws ::= [ \n\t]*
""",
}


def _outcome(walk: Walk) -> tuple[list[tuple[int, int]], list[int]]:
    pairs = sorted(zip(walk.accepted.tolist(), walk.arrived.tolist(), strict=True))
    return pairs, sorted(walk.open_failed.tolist())


def _states(core: EarleyCore, automaton: StateAutomaton, seed: int, steps: int
            ) -> list[ParseState]:
    """The states of a random walk of the grammar's own tokens."""
    rng = random.Random(seed)
    partition = automaton.partition
    state, found = core.initial(), []
    for _ in range(steps):
        found.append(state)
        number = automaton.number(state)
        every = partition.representative[partition.groups_starting_with(
            automaton.first_bytes(number))]
        accepted = automaton.walk_representatives(number, every).accepted
        if not len(accepted):
            break
        after = core.advance(state, automaton._index.tokens[rng.choice(accepted.tolist())])
        assert after is not None
        state = after
    return found


@pytest.fixture(scope="module", params=sorted(GRAMMARS))
def automaton(request: pytest.FixtureRequest, qwen36: Vocabulary
              ) -> tuple[EarleyCore, StateAutomaton, TokenClassifier]:
    compiled = Grammar.from_ebnf(GRAMMARS[request.param]).compiled
    index = token_index(qwen36)
    core = EarleyCore(compiled)
    built = StateAutomaton(core, index, TokenPartition(byte_classes(compiled), index))
    return core, built, TokenClassifier(built, index)


@given(seed=st.integers(0, 2**16), prune=st.sampled_from([0, 8, 256]))
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_candidate_groups_walk_like_every_group(
        automaton: tuple[EarleyCore, StateAutomaton, TokenClassifier], seed: int, prune: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    core, built, classifier = automaton
    monkeypatch.setattr(state_automaton, "PRUNE_GROUPS", prune)
    partition = built.partition
    pruned = 0
    for state in _states(core, built, seed, 12):
        numbers = [built.number(state)] + [
            built.local(*classifier.context(frame, config))
            for frame, config in classified_groups(state)]
        for number in numbers:
            every = partition.groups_starting_with(built.first_bytes(number))
            candidates = built.candidate_groups(number)
            assert set(candidates.tolist()) <= set(every.tolist())
            pruned += len(every) - len(candidates)
            assert _outcome(built.walk_representatives(number, partition.representative[
                candidates])) == _outcome(built.walk_representatives(
                    number, partition.representative[every]))
    assert pruned > 0 or prune == 256
