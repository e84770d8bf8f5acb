"""Likely contexts classified at the second state: the masks stay exactly those of contexts
classified one by one on first use, and the walk reaches the contexts a generation meets."""

from __future__ import annotations

import random
import time

import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, engine_cache, mask_engine
from grammarkit.decode.token_classes import classified_groups
from grammarkit.vocab import Vocabulary

ARITHMETIC = r"""
root ::= expr
expr ::= term (" "? [+\-*/] " "? term)*
term ::= [0-9]+ | "(" expr ")" | "-" term
"""


def _walk(matcher: TokenMatcher, vocab: Vocabulary, seed: int, steps: int) -> list[list[int]]:
    rng = random.Random(seed)
    masks = []
    for _ in range(steps):
        allowed = matcher.allowed_token_ids().tolist()
        masks.append(allowed)
        ordinary = [t for t in allowed if t not in vocab.stop_ids]
        if not ordinary:
            break
        assert matcher.accept_token(rng.choice(ordinary))
    return masks


@pytest.mark.parametrize("seed", [0, 1])
def test_masks_do_not_depend_on_classifying_likely_contexts_first(
        qwen36: Vocabulary, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    grammar = Grammar.from_ebnf(ARITHMETIC)
    runs, classified = [], []
    for limit in (0, 64):
        monkeypatch.setattr(mask_engine, "LIKELY_CONTEXTS", limit)
        monkeypatch.setattr(mask_engine, "LIKELY_MIN_SECONDS", 60.0)
        engine_cache.clear()
        matcher = TokenMatcher(grammar, qwen36)
        runs.append(_walk(matcher, qwen36, seed, 25))
        classified.append(matcher._engine.classifier.num_classified)
    engine_cache.clear()
    assert runs[0] == runs[1]
    assert classified[1] > classified[0]


def test_likely_contexts_cover_a_generation(qwen36: Vocabulary,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mask_engine, "LIKELY_MIN_SECONDS", 60.0)
    engine_cache.clear()
    matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), qwen36)
    classifier = matcher._engine.classifier
    _walk(matcher, qwen36, 0, 2)  # the second state classifies the likely contexts
    after_warm_up = classifier.num_classified
    _walk(matcher, qwen36, 1, 60)
    assert classifier.num_classified == after_warm_up  # nothing left to classify on the way
    engine_cache.clear()


def test_the_search_stops_at_its_deadline_and_limit(qwen36: Vocabulary) -> None:
    engine_cache.clear()
    matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), qwen36)
    engine = matcher._engine
    classifier = engine.classifier
    start = [classifier.context(frame, config)
             for frame, config in classified_groups(engine.core.initial())]
    before = classifier.num_classified
    assert classifier.classify_likely(start, 64, 1e-3, time.process_time() - 1) == 0
    assert classifier.classify_likely(start, 2, 0.0, time.process_time() + 60) == 2
    assert classifier.num_classified == before + 2
    engine_cache.clear()


def test_surveyed_masks_are_those_computed_state_by_state(qwen36: Vocabulary,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A small grammar's survey computes every state's mask when the second state is met;
    they equal the masks of its classes and exact walks."""
    grammar = Grammar.from_ebnf('root ::= "{" ws ("\\"red\\"" | "true" | [0-9]{1,3}) ws "}"\n'
                                'ws ::= [ \\n]{0,2}')
    runs = []
    for states in (0, 256):
        monkeypatch.setattr(mask_engine, "SURVEY_STATES", states)
        monkeypatch.setattr(mask_engine, "SURVEY_SECONDS", 60.0)
        engine_cache.clear()
        matcher = TokenMatcher(grammar, qwen36)
        runs.append(_walk(matcher, qwen36, 0, 2))
        assert matcher._engine.surveyed == bool(states)
        computed = matcher._engine._computed
        for seed in (1, 2, 3):
            matcher.reset()
            runs[-1] += _walk(matcher, qwen36, seed, 12)
        if states:
            assert matcher._engine._computed == computed  # nothing left to compute
    engine_cache.clear()
    assert runs[0] == runs[1]


@pytest.mark.parametrize("budget", [False, True])
def test_budgets_move_the_survey_to_the_first_mask(qwen36: Vocabulary,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   budget: bool) -> None:
    """Under ``max_chars`` the first mask surveys (their masks stop for deadline walks anyway,
    and generations are short); else the second. The masks are those computed state by
    state."""
    rule = "w[max_chars=5]" if budget else "w"
    grammar = Grammar.from_ebnf(f'root ::= "<" w (", " w)* ">"\n{rule} ::= [a-z]+')
    runs = []
    for states in (0, 256):
        monkeypatch.setattr(mask_engine, "SURVEY_STATES", states)
        monkeypatch.setattr(mask_engine, "SURVEY_SECONDS", 60.0)
        engine_cache.clear()
        matcher = TokenMatcher(grammar, qwen36)
        runs.append(_walk(matcher, qwen36, 0, 1))
        assert matcher._engine.surveyed == (budget and bool(states))
        runs[-1] += _walk(matcher, qwen36, 0, 2)[1:]
        assert matcher._engine.surveyed == bool(states)
        for seed in (1, 2):
            matcher.reset()
            runs[-1] += _walk(matcher, qwen36, seed, 10)
    engine_cache.clear()
    assert runs[0] == runs[1]


COUNTED_STRINGS = r"""
root ::= "{" ws "\"a\":" ws text ws "," ws "\"b\":" ws text ws "}"
text ::= "\"" [a-z ]{0,12} "\""
ws ::= [ \n]*
"""


def test_classifying_ahead_of_a_stop_keeps_the_masks_and_spares_later_stops(
        qwen36: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    """A mask that stops to classify new contexts (a string with a counted body entered, one
    context per count) classifies the likely next ones too: the masks are those of contexts
    classified one by one, and fewer masks stop (over a few walks; each stops no more)."""
    monkeypatch.setattr(mask_engine, "SURVEY_STATES", 0)
    monkeypatch.setattr(mask_engine, "LIKELY_CONTEXTS", 4)  # a count bound, not a clock
    monkeypatch.setattr(mask_engine, "LIKELY_MIN_SECONDS", 60.0)
    monkeypatch.setattr(mask_engine, "AHEAD_FACTOR", 1e6)
    grammar = Grammar.from_ebnf(COUNTED_STRINGS)
    stops: dict[float, list[int]] = {}
    for seed in (0, 1, 2):
        runs = []
        for stall in (float("inf"), 0.0):
            monkeypatch.setattr(mask_engine, "STALL_SECONDS", stall)
            engine_cache.clear()
            matcher = TokenMatcher(grammar, qwen36)
            classifier = matcher._engine.classifier
            rng = random.Random(seed)
            masks, stopped = [], 0
            for _ in range(40):
                before = classifier.num_computed
                allowed = matcher.allowed_token_ids().tolist()
                stopped += classifier.num_computed > before
                masks.append(allowed)
                ordinary = [t for t in allowed if t not in qwen36.stop_ids]
                if not ordinary:
                    break
                assert matcher.accept_token(rng.choice(ordinary))
            runs.append(masks)
            stops.setdefault(stall, []).append(stopped)
        assert runs[0] == runs[1]
    engine_cache.clear()
    never, ahead = stops[float("inf")], stops[0.0]
    assert all(a <= n for a, n in zip(ahead, never, strict=True)), (ahead, never)
    assert sum(ahead) < sum(never), (ahead, never)
