"""Masks in JSON key and string states of a schema with many declared keys and
``additionalProperties`` (the shape of Kubernetes' object definitions), against xgrammar 0.2.8.

Such a key is "a declared name, or any other string": nearly every token is allowed, and the
states of neighbouring key prefixes (``"ima``, ``"image``, ``"imagePull``) differ in few tokens.
Random walks seldom follow a declared key, so the walks here write documents of the schema
token by token (each token a random one of the tokens that start the rest of the document,
so keys are entered at many prefixes), with random allowed tokens mixed in, and compare every
mask with xgrammar's. The last test checks the walks' shortcuts (one parser step for all the
bytes a state cannot tell apart, tokens settling in a loop accepted unwalked) against plain
walks.
"""

from __future__ import annotations

import importlib
import json
import random

import numpy as np
import numpy.typing as npt
import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

xgr = importlib.import_module("xgrammar")

KEYS = ("args", "command", "env", "envFrom", "image", "imagePullPolicy", "lifecycle", "name",
        "namespace", "nodeName", "nodeSelector", "ports", "readOnly", "readinessProbe",
        "resources", "restartPolicy", "securityContext", "serviceAccount",
        "serviceAccountName", "stdin", "stdinOnce", "volumeMounts", "volumes", "workingDir")
"""Declared keys sharing long prefixes, as Kubernetes' Container and PodSpec do."""

SCHEMA = {
    "type": "object",
    "properties": {
        **{key: {"type": "string"} for key in KEYS},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "metadata": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                           "annotations": {"type": "object",
                                           "additionalProperties": {"type": "string"}}},
        },
        "replicas": {"type": "integer"},
    },
}
"""Every key is optional and other keys are allowed (``additionalProperties`` by default)."""

DOCUMENTS = (
    {"image": "nginx", "imagePullPolicy": "Always", "readinessProbe": "http", "船员": 1},
    {"nodeSelector": "linux", "labels": {"app": "web"},
     "metadata": {"annotations": {"k8s.io/rev": "3"}}, "imageX": "o"},
    {"readOnly": "t", "nameSpace": "x", "zz\\u0041": [1, {"a": "b"}]},
)
"""Documents the walks write (declared keys in schema order, then other keys)."""

MIXED = 0.15
"""Chance of a random allowed token instead of one that writes the document on."""


def _allowed(bitmask: npt.NDArray[np.int32], size: int) -> npt.NDArray[np.bool_]:
    bits = np.unpackbits(np.ascontiguousarray(bitmask[0]).view(np.uint8), bitorder="little")
    return bits[:size].astype(np.bool_)


@pytest.fixture(scope="module")
def ebnf() -> str:
    return Grammar.from_json_schema(SCHEMA).to_ebnf()


@pytest.mark.xgrammar
def test_masks_along_documents_match_xgrammar(ebnf: str, qwen36: Vocabulary) -> None:
    vocab = qwen36
    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=len(vocab),
                             stop_token_ids=sorted(vocab.stop_ids))
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(
        xgr.Grammar.from_ebnf(ebnf))
    ours = TokenMatcher(Grammar.from_ebnf(ebnf), vocab)
    theirs = xgr.GrammarMatcher(compiled)
    ordinary = np.ones(len(vocab), dtype=np.bool_)
    ordinary[sorted(vocab.special_ids)] = False
    ids = {token: i for i, token in enumerate(vocab.tokens) if ordinary[i]}
    longest = max(len(token) for token in ids)
    mine, reference = allocate_token_bitmask(1, len(vocab)), xgr.allocate_token_bitmask(
        1, len(vocab))
    rng = random.Random(0)
    compared = 0
    for document in DOCUMENTS:
        ours.reset()
        theirs.reset()
        text = json.dumps(document, ensure_ascii=False).encode()
        written = 0
        while True:
            ours.fill_next_token_bitmask(mine)
            theirs.fill_next_token_bitmask(reference)
            allowed = _allowed(mine, len(vocab)) & ordinary
            differ = np.flatnonzero(allowed != (_allowed(reference.numpy(), len(vocab))
                                                & ordinary))
            where = text[:written]
            assert not len(differ), f"after {where!r}: " + ", ".join(
                f"{vocab.tokens[i]!r} (ours {allowed[i]})" for i in differ[:5].tolist())
            compared += 1
            if written == len(text):
                break
            if rng.random() < MIXED:  # a detour: a random allowed token, then back
                token = int(rng.choice(np.flatnonzero(allowed).tolist()))
                assert ours.accept_token(token) and theirs.accept_token(token)
                ours.fill_next_token_bitmask(mine)
                theirs.fill_next_token_bitmask(reference)
                assert np.array_equal(_allowed(mine, len(vocab)) & ordinary,
                                      _allowed(reference.numpy(), len(vocab)) & ordinary), (
                    f"after {where!r} + {vocab.tokens[token]!r}")
                compared += 1
                ours.rollback(1)
                theirs.rollback(1)
                continue
            starts = [ids[text[written:end]]
                      for end in range(written + 1, min(len(text), written + longest) + 1)
                      if text[written:end] in ids]
            token = rng.choice(starts)
            assert ours.accept_token(token) and theirs.accept_token(token), (where, token)
            written += len(vocab.tokens[token])
    assert compared >= 60


@pytest.mark.parametrize("prefix", [b'{"', b'{"imageP', b'{"x": "ab',
                                    b'{"labels": {"'])
def test_walk_shortcuts_change_no_outcome(ebnf: str, qwen36: Vocabulary,
                                          monkeypatch: pytest.MonkeyPatch, prefix: bytes) -> None:
    from grammarkit.decode import state_automaton
    from grammarkit.decode.earley_core import EarleyCore
    from grammarkit.decode.state_automaton import StateAutomaton
    from grammarkit.decode.token_index import token_index
    from grammarkit.decode.token_partition import TokenPartition, byte_classes

    compiled = Grammar.from_ebnf(ebnf).compiled
    index = token_index(qwen36)
    walks = []
    for loop_ranks in (0, 10**9):  # settling checked at every walk, or never
        monkeypatch.setattr(state_automaton, "LOOP_RANKS", loop_ranks)
        core = EarleyCore(compiled)
        partition = TokenPartition(byte_classes(compiled), index)
        automaton = StateAutomaton(core, index, partition)
        state = core.advance(core.initial(), prefix)
        assert state is not None
        walk = automaton.walk_representatives(automaton.number(state), partition.representative)
        walks.append((sorted(walk.accepted.tolist()), sorted(walk.open_failed.tolist())))
        rng = random.Random(prefix)
        high = [at for at, rank in enumerate(walk.accepted.tolist())
                if index.tokens[rank][-1] >= 0x80]  # ending in or after a multi-byte character
        for at in rng.sample(range(len(walk.accepted)), 150) + rng.sample(high, min(150, len(high))):
            after = core.advance(state, index.tokens[int(walk.accepted[at])])
            assert after is not None and automaton.number(after) == walk.arrived[at]
        for number in range(automaton.num_states):  # each filled entry is that byte's step
            row = automaton._table[number]
            for byte in np.flatnonzero(row != state_automaton.UNKNOWN).tolist()[::17]:
                after = core.advance(automaton.state(number), bytes((byte,)))
                expected = -1 if after is None else automaton.number(after)
                assert row[byte] == expected, (prefix, number, byte)
    assert walks[0] == walks[1] and len(walks[0][0]) > 50_000
