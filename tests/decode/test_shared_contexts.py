"""Contexts keep only what a group can complete into: a group met under different predictions
(a space rule after `,` and after `/`) is classified once, with exactly the classes of its
full context; and the likely-context search ranks contexts by expected visits."""

from __future__ import annotations

import random
import time

import numpy as np

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, engine_cache
from grammarkit.decode.token_classes import Context, TokenClasses, TokenClassifier
from grammarkit.vocab import Vocabulary

LISTS = r"""
root ::= "SELECT " item (osp "," osp item)* (" WHERE " cond)?
item ::= term (osp [*/] osp term)*
term ::= [a-z_]+ | "(" osp item osp ")" | "'" [^']* "'"
cond ::= item osp ("=" | "<") osp item
osp ::= [ \n]{0,3}
"""


def _walk_groups(matcher: TokenMatcher, vocab: Vocabulary, seed: int, steps: int
                 ) -> list[tuple[object, int]]:
    rng = random.Random(seed)
    groups = []
    for _ in range(steps):
        groups += list(matcher._history[-1].state.groups)
        allowed = [t for t in matcher.allowed_token_ids().tolist() if t not in vocab.stop_ids]
        if not allowed:
            break
        assert matcher.accept_token(rng.choice(allowed))
    return groups


def test_a_context_classifies_as_its_full_context(qwen36: Vocabulary) -> None:
    engine_cache.clear()
    matcher = TokenMatcher(Grammar.from_ebnf(LISTS), qwen36)
    engine = matcher._engine
    classifier, automaton = engine.classifier, engine.automaton
    pairs = {}
    for seed in (0, 1):
        matcher.reset()
        for frame, config in _walk_groups(matcher, qwen36, seed, 30):
            context = classifier.context(frame, config)
            own = automaton.canonical(frame.own)
            full = (context[0], own, engine.core.follow(own))
            if full != context:
                pairs.setdefault(context, full)
    empty = engine.core.config([])
    callers = [c for c in pairs if c[1] != empty]  # what the group completes into is kept
    assert callers and len(pairs) > len(callers)
    for context in callers[:6] + [c for c in pairs if c[1] == empty][:2]:
        reduced, whole = classifier.classes(context), classifier.classes(pairs[context])
        assert np.array_equal(reduced.accepted, whole.accepted)
        assert np.array_equal(reduced.uncertain, whole.uncertain)
    engine_cache.clear()


def test_one_context_serves_the_same_group_under_different_predictions(
        qwen36: Vocabulary) -> None:
    engine_cache.clear()
    matcher = TokenMatcher(Grammar.from_ebnf(LISTS), qwen36)
    classifier = matcher._engine.classifier
    contexts = {}
    for text in ("SELECT a, ", "SELECT a / ", "SELECT (a) , "):
        matcher.reset()
        assert matcher.accept_string(text)
        state = matcher._history[-1].state
        contexts[text] = {classifier.context(frame, config) for frame, config in state.groups}
    # the group inside `osp` after its first space is the same wherever `osp` was called
    shared = set.intersection(*contexts.values())
    assert shared
    engine_cache.clear()


class _Graph(TokenClassifier):
    """A classifier over a made-up graph: per context, how many tokens it accepts and the
    states (their contexts) they end in, by how many tokens; classifying is recorded."""

    def __init__(self, graph: dict[str, tuple[tuple[tuple[str, ...], float], ...]]):
        self._graph = graph
        self._cache: dict[Context, TokenClasses] = {}
        self._transitions = {}
        self.order: list[str] = []

    def _classify(self, group):  # type: ignore[no-untyped-def, override]
        self.order.append(group)
        self._cache[group] = TokenClasses(np.zeros(1, dtype=np.int32),
                                          np.zeros(0, dtype=np.int64))
        return self._cache[group]

    def _successors_of(self, group):  # type: ignore[no-untyped-def, override]
        arrivals = self._graph.get(group, ())
        return sum(count for _, count in arrivals), arrivals


def test_a_state_a_loop_reaches_often_outranks_one_a_few_tokens_reach() -> None:
    # a word goes on with 900 of its 1000 tokens and 50 end after a comma; beside it in the
    # same state, a clause that may end accepts 10 tokens, all starting a keyword: the walk
    # takes one of the state's 1010 tokens, so the comma comes five times as often
    graph = _Graph({
        "start": ((("word", "clause"), 100.0),),
        "word": ((("word", "clause"), 900.0), (("comma",), 50.0)),
        "clause": ((("keyword",), 10.0),),
        "comma": ((("word", "clause"), 200.0),),
        "keyword": ((("keyword-2",), 1.0),),
    })
    assert graph.classify_likely(["start"], 10, 1e-3, time.process_time() + 60) == 6
    assert graph.order.index("comma") < graph.order.index("keyword")


def test_the_search_classifies_nothing_below_its_visit_floor() -> None:
    graph = _Graph({"start": ((("rare",), 1e-6), (("start",), 1.0))})  # 50 visits, 5e-5 rare
    assert graph.classify_likely(["start"], 10, 1e-3, time.process_time() + 60) == 1
    assert graph.order == ["start"]
