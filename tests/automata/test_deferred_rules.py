"""Medium rules are built lazily; once the decoder uses the grammar, those inputs go deep into
are minimized completely (``DEFER_ABOVE``, ``DEFERRED_STATES`` in
:mod:`grammarkit.automata.compiled`).

A JSON object's key rules (``"\\"" ("a" | "\\\\u0061") ...``, a few hundred NFA states each) are
all predicted where a key may come; only the key an input spells is built completely. The states
built lazily before take the edges of the minimal automaton's states for the same positions, so
verdicts and masks are those of the language, whichever rule went which way.
"""

from __future__ import annotations

import random
import re

import pytest
import xgrammar as xgr
from xgrammar.testing import _get_matcher_from_grammar

from grammarkit import Grammar
from grammarkit.automata import compiled as compiled_module
from grammarkit.decode import TokenMatcher
from grammarkit.vocab import Vocabulary

WORDS = ["alphabetic", "alphanumeric", "betatrons", "betamaxes", "gammaglobin", "gammarays",
         "deltawings", "deltaforce"]


def _key(word: str) -> str:
    letters = " ".join(f'("{c}" | "\\\\u00" "{ord(c):x}")' for c in word)
    return f'"\\"" {letters} "\\""'


GRAMMAR = "root ::= \"{\" (pair (\",\" pair)*)? \"}\"\npair ::= " + " | ".join(
    f'key{i} ":" [0-9]+' for i in range(len(WORDS))) + "\n" + "\n".join(
        f"key{i} ::= {_key(word)}" for i, word in enumerate(WORDS)) + "\n"

def _spelled(word: str) -> str:
    """A regex for ``word`` with each letter plain or as a ``\\u00XX`` escape."""
    return "".join("(?:" + c + "|" + re.escape("\\u00") + f"{ord(c):x})" for c in word)


_KEY = "|".join('"' + _spelled(w) + '"' for w in WORDS)
LANGUAGE = re.compile(f"\\{{(?:(?:{_KEY}):[0-9]+(?:,(?:{_KEY}):[0-9]+)*)?\\}}")


def _texts() -> list[str]:
    rng = random.Random(7)
    texts = ["{}", "{", '{"alphabetic":1}', '{"alpha":1}', '{"\\u0061lphabetic":12,"deltaforce":3}']
    for _ in range(150):
        pairs = []
        for _ in range(rng.randint(1, 3)):
            word = rng.choice(WORDS)
            spelled = "".join(f"\\u00{ord(c):x}" if rng.random() < 0.2 else c for c in word)
            if rng.random() < 0.1:
                spelled = spelled[:-1]
            pairs.append(f'"{spelled}":{rng.randint(0, 99)}')
        texts.append("{" + ",".join(pairs) + ("}" if rng.random() < 0.9 else ""))
    return texts


def test_key_rules_are_deferred_and_verdicts_are_the_languages() -> None:
    grammar = Grammar.from_ebnf(GRAMMAR)
    rules = grammar.compiled._rules  # the rule sources: the key rules are medium-sized
    sizes = [rules[rules.rule_ids[f"key{i}"]].num_states for i in range(len(WORDS))]
    assert all(compiled_module.DEFER_ABOVE < n <= compiled_module.EAGER_LIMIT for n in sizes)
    for text in _texts():
        assert grammar.matches(text) == bool(LANGUAGE.fullmatch(text)), text


def test_verdicts_leave_key_rules_lazy_and_the_decoder_completes_an_entered_one() -> None:
    grammar = Grammar.from_ebnf(GRAMMAR)
    assert grammar.matches('{"gammaglobin":1,"\\u0067ammaglobin":22}')
    compiled = grammar.compiled
    numbers = [compiled.rule_names.index(f"key{i}") for i in range(len(WORDS))]
    assert set(numbers) <= compiled._deferred.keys()  # verdicts: all lazy
    assert compiled._deferred[numbers[4]] > compiled_module.DEFERRED_STATES
    tokens = [b"{", b"}", b",", b":", b'"', b"1", b"gamma", b"globin", b"alpha", b"</s>"]
    matcher = TokenMatcher(grammar, Vocabulary(tokens, stop_ids=[len(tokens) - 1]))
    assert numbers[4] not in compiled._deferred  # gammaglobin: built completely
    assert {numbers[0], numbers[2], numbers[6]} <= compiled._deferred.keys()  # a, b, d
    for token in (0, 4, 6, 7, 4, 3, 5, 2, 4, 6, 7, 4, 3, 5, 1):  # {"gammaglobin":1,"gam...1}
        assert matcher.accept_token(token)
    assert matcher.is_terminated() or matcher.accept_token(len(tokens) - 1)


def _walk(tokens: list[bytes], seed: int) -> list[set[int]]:
    """The allowed tokens along a seeded random walk of allowed tokens."""
    stop = len(tokens) - 1
    matcher = TokenMatcher(Grammar.from_ebnf(GRAMMAR), Vocabulary(tokens, stop_ids=[stop]))
    rng = random.Random(seed)
    masks = []
    for _ in range(40):
        allowed = set(matcher.allowed_token_ids().tolist())
        masks.append(allowed)
        ordinary = sorted(allowed - {stop})
        if not ordinary:
            break
        going_on = [t for t in ordinary if tokens[t] != b"}"]  # long walks: close late
        assert matcher.accept_token(rng.choice(going_on if rng.random() < 0.9 and going_on
                                               else ordinary))
    return masks


@pytest.mark.parametrize("seed", range(8))
def test_masks_are_those_of_the_rules_built_at_once(seed: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = [b"{", b"}", b",", b":", b'"', b"1", b"a", b"l", b"p", b"h", b"al", b"alp",
              b"\\u00", b"61", b"6c", b"\\u0061", b"gam", b"ma", b"e", b"t", b"d", b"b",
              b"g", b"m", b"s", b"lta", b"pha", b'a"', b'"g', b"</s>"]
    deferred = _walk(tokens, seed)
    monkeypatch.setattr(compiled_module, "DEFER_ABOVE", compiled_module.EAGER_LIMIT)
    assert _walk(tokens, seed) == deferred
    assert len(deferred) > 5


CALLING = ("root ::= object\nobject ::= \"{\" (member (\",\" member)*)? \"}\"\nmember ::= "
           + " | ".join(f'"\\"{word}\\"" ":" value' for word in WORDS)
           + '\nvalue ::= object | [0-9]+ | "[" (value ("," value)*)? "]"\n')
"""An object whose member rule (medium-sized) calls the recursive ``value`` rule."""


def _calling_texts() -> list[str]:
    rng = random.Random(11)

    def key() -> str:
        word = rng.choice(WORDS)
        return word[:-1] if rng.random() < 0.1 else word

    def value(depth: int, kind: float) -> str:
        if depth > 2 or kind < 0.4:
            return str(rng.randint(0, 99))
        if kind < 0.7:
            return "[" + ",".join(value(depth + 1, rng.random())
                                  for _ in range(rng.randint(0, 2))) + "]"
        return "{" + ",".join(f'"{key()}":{value(depth + 1, rng.random())}'
                              for _ in range(rng.randint(0, 3))) + "}"

    return ["{}", '{"alphabetic":1}', '{"alphabetic":{"deltaforce":[1,{}]}}'] + [
        value(0, 0.9) for _ in range(120)]


def test_a_verdict_leaves_a_medium_rule_with_calls_lazy() -> None:
    grammar = Grammar.from_ebnf(CALLING)
    compiled = grammar.compiled
    member = compiled.rule_names.index("member")
    source = compiled._rules[member]
    assert compiled_module.DEFER_ABOVE < source.num_states and any(source.call_edges)
    texts = _calling_texts()
    matcher = _get_matcher_from_grammar(xgr.Grammar.from_ebnf(CALLING))
    for text in texts:
        matcher.reset()
        expected = matcher.accept_string(text) and matcher.is_terminated()
        assert grammar.matches(text) == expected, text
    assert sum(map(grammar.matches, texts)) > 20
    assert member in compiled._deferred  # read deep, never completed for verdicts
    assert compiled._deferred[member] > compiled_module.DEFERRED_STATES


def _calling_walk(grammar: Grammar, tokens: list[bytes], seed: int) -> list[set[int]]:
    stop = len(tokens) - 1
    matcher = TokenMatcher(grammar, Vocabulary(tokens, stop_ids=[stop]))
    rng = random.Random(seed)
    masks = []
    for _ in range(60):
        allowed = set(matcher.allowed_token_ids().tolist())
        masks.append(allowed)
        ordinary = sorted(allowed - {stop})
        if not ordinary:
            break
        going_on = [t for t in ordinary if tokens[t] not in (b"}", b"]")]
        assert matcher.accept_token(rng.choice(going_on if rng.random() < 0.85 and going_on
                                               else ordinary))
    return masks


@pytest.mark.parametrize("seed", range(6))
def test_masks_after_a_verdict_are_those_of_the_rules_built_at_once(
        seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # the verdicts build the member rule lazily; the decoder then completes it (prefer_minimal)
    tokens = [b"{", b"}", b",", b":", b'"', b"[", b"]", b"1", b"23", b"a", b"l", b"ph",
              b"alpha", b"betic", b"bet", b"atrons", b'"gammaglobin"', b'"delta', b"force",
              b'":', b'":{', b'":[', b"wings", b"e", b"t", b"</s>"]
    verdicts_first = Grammar.from_ebnf(CALLING)
    for text in _calling_texts():
        verdicts_first.matches(text)
    assert verdicts_first.compiled._deferred
    walked = _calling_walk(verdicts_first, tokens, seed)
    assert _calling_walk(Grammar.from_ebnf(CALLING), tokens, seed) == walked
    monkeypatch.setattr(compiled_module, "DEFER_ABOVE", compiled_module.EAGER_LIMIT)
    assert _calling_walk(Grammar.from_ebnf(CALLING), tokens, seed) == walked
    assert len(walked) > 10
