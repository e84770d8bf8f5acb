"""Large rules built in part (``DEFER_ABOVE``): the masks are those of the whole automaton.

A rule whose body surely needs more than :data:`~grammarkit.automata.compiler.DEFER_ABOVE` NFA
states is built one level of choices at a time, and a long trie of literals node by node, as
the decoder's token walks reach them (an enum of 20,000 words converted from a JSON Schema, a
chain of 100,000 rules). Here every grammar is decoded twice along the same random walk, once
with every rule built in part (``DEFER_ABOVE = 0``) and once built whole, and the masks must
be equal at every step; the default threshold is checked against xgrammar 0.2.8 on grammars
large enough to reach it.
"""

from __future__ import annotations

import importlib
import random

import numpy as np
import numpy.typing as npt
import pytest

from grammarkit import Grammar
from grammarkit.automata import compiler
from grammarkit.decode import TokenMatcher, allocate_token_bitmask, engine_cache
from grammarkit.vocab import Vocabulary

WHOLE = 10**12
"""A ``DEFER_ABOVE`` no rule reaches: every rule built completely."""


def real_words(count: int, seed: int) -> list[str]:
    """``count`` distinct English-like words, some capitalized or hyphenated, shuffled."""
    rng = random.Random(seed)
    onsets = ["", "b", "c", "d", "qu", "st", "str", "th", "sh", "gl", "pr", "z"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ea", "oo", "y"]
    codas = ["", "", "n", "r", "st", "ng", "ck", "x"]
    words: set[str] = set()
    while len(words) < count:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                       for _ in range(rng.choice((1, 2, 2, 3))))
        if rng.random() < 0.1:
            word = word.capitalize()
        elif rng.random() < 0.05:
            word += "-" + rng.choice(("beta", "v2"))
        words.add(word)
    return rng.sample(sorted(words), count)


def enum_text(count: int) -> str:
    """A JSON Schema ``enum`` of ``count`` words as the converter writes it: a trie of
    ``char.X`` rules (each letter plain or ``\\u00XX``) with shared suffix rules."""
    return Grammar.from_json_schema({"enum": real_words(count, count)}).to_ebnf()


def chain_text(count: int) -> str:
    """``ri ::= "w..." | r(i+1)``: one choice of ``count`` literals once merged."""
    return "root ::= r0\n" + "\n".join(f'r{i} ::= "w{i:05d}" | r{i + 1}' for i in range(count)) \
        + f'\nr{count} ::= "end"\n'


def mixed_text(count: int) -> str:
    """Rules of four shapes referencing rules further on (as in compile_vs_xgrammar.py)."""
    rng = random.Random(count)
    lines = ['root ::= r0 ("," r0)*']
    for k in range(count):
        far = f"r{min(count, k + 1 + rng.randrange(20))}"
        body = [f'"item{k}" ":" r{k + 1} | [a-z]+',
                f'("a{k}" | "b{k}" | "c{k}" {far}) [0-9]{{0,3}} | "?" r{k + 1}',
                f'"[" ({far} ("," {far})*)? "]" | r{k + 1}',
                f'"(" r{k} ")" | "z{k}" r{k + 1} | {far} "!"'][k % 4]
        lines.append(f"r{k} ::= {body}")
    return "\n".join(lines) + f'\nr{count} ::= "end"\n'


CASES = {
    "enum": lambda: enum_text(300),
    "chain": lambda: chain_text(400),
    "mixed": lambda: mixed_text(300),
    "json-like": lambda: (
        'root ::= value\nvalue ::= object | array | string | [0-9]+ | "true" | "null"\n'
        'object ::= "{" (string ":" value ("," string ":" value)*)? "}"\n'
        'array ::= "[" (value ("," value)*)? "]"\n'
        'string ::= "\\"" ([a-z] | "\\\\" ["n])* "\\""\n'),
}


def matcher(text: str, vocab: Vocabulary, defer_above: int,
            monkeypatch: pytest.MonkeyPatch) -> TokenMatcher:
    """A matcher compiled with ``DEFER_ABOVE = defer_above`` (a fresh engine)."""
    monkeypatch.setattr(compiler, "DEFER_ABOVE", defer_above)
    engine_cache.clear()
    return TokenMatcher(Grammar.from_ebnf(text), vocab)


def walk(matchers: list[TokenMatcher], seed: str, steps: int) -> int:
    """Walk ``matchers`` along one random path of allowed tokens, asserting equal masks;
    returns how many masks were compared."""
    rng = random.Random(seed)
    compared = 0
    for _ in range(steps):
        masks = [m.allowed_token_ids() for m in matchers]
        for other in masks[1:]:
            assert np.array_equal(masks[0], other), f"masks differ after {compared} steps"
        compared += 1
        ordinary = [t for t in masks[0].tolist() if t not in matchers[0].stop_token_ids]
        if not ordinary:
            break
        token = rng.choice(ordinary)
        assert all(m.accept_token(token) for m in matchers)
    return compared


@pytest.mark.parametrize("case", sorted(CASES))
def test_masks_are_equal_built_in_part_or_whole(case: str, qwen36: Vocabulary,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    text = CASES[case]()
    in_part = matcher(text, qwen36, 0, monkeypatch)
    whole = matcher(text, qwen36, WHOLE, monkeypatch)
    assert walk([in_part, whole], case, 12) >= 3


def test_a_large_enum_is_built_only_where_the_first_mask_reaches(
        qwen36: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    grammar = Grammar.from_ebnf(enum_text(3000))
    engine_cache.clear()
    TokenMatcher(grammar, qwen36).allowed_token_ids()
    rules = grammar.compiled._rules  # the rule sources: the trie rule is left in part
    built = [nfa for nfa in rules._nfas if nfa is not None]
    assert any(nfa.deferred for nfa in built)
    whole = matcher(grammar.to_ebnf(), qwen36, WHOLE, monkeypatch)
    whole.allowed_token_ids()
    states = sum(nfa.num_states for nfa in built)
    assert 2 * states < sum(nfa.num_states for nfa in whole._engine.core.compiled._rules._nfas
                            if nfa is not None)


def _bits(bitmask: npt.NDArray[np.int32], size: int) -> npt.NDArray[np.bool_]:
    bits = np.unpackbits(np.ascontiguousarray(bitmask[0]).view(np.uint8), bitorder="little")
    return bits[:size].astype(np.bool_)


@pytest.mark.xgrammar
@pytest.mark.parametrize("case", ["enum", "chain"])
def test_masks_of_rules_built_in_part_are_xgrammars(case: str, qwen36: Vocabulary,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    xgr = importlib.import_module("xgrammar")
    text = enum_text(1000) if case == "enum" else chain_text(500)
    ours = matcher(text, qwen36, compiler.DEFER_ABOVE, monkeypatch)
    info = xgr.TokenizerInfo(list(qwen36.tokens), xgr.VocabType.RAW, vocab_size=len(qwen36),
                             stop_token_ids=sorted(qwen36.stop_ids))
    theirs = xgr.GrammarMatcher(xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(
        xgr.Grammar.from_ebnf(text)))
    ordinary = np.ones(len(qwen36), dtype=np.bool_)
    ordinary[sorted(qwen36.special_ids)] = False
    rng = random.Random(case)
    size = len(qwen36)
    for step in range(10):
        mine = allocate_token_bitmask(1, size)
        ours.fill_next_token_bitmask(mine)
        reference = xgr.allocate_token_bitmask(1, size)
        theirs.fill_next_token_bitmask(reference)
        allowed, expected = _bits(mine, size), _bits(reference.numpy(), size)
        assert np.array_equal(allowed & ordinary, expected & ordinary), f"{case} step {step}"
        if not step:  # the large rule is built in part
            assert any(nfa is not None and nfa.deferred
                       for nfa in ours._engine.core.compiled._rules._nfas)
        choices = np.flatnonzero(allowed & ordinary)
        stops = sorted(qwen36.stop_ids)
        if not len(choices):
            assert allowed[stops].all() and expected[stops].all()
            break
        token = int(rng.choice(choices.tolist()))
        assert ours.accept_token(token) and theirs.accept_token(token)
