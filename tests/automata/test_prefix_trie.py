"""Choices whose alternatives begin with literals are built as one trie of those literals.

``"ab" x | "a" y | "b"`` shares the states of its leading literals, each word's last state going
on to the rest of its alternative (so 10,000 ``"w..." [0-9]*`` alternatives start from one state).
On random such choices, nested, with duplicate and prefix words and empty literals, the verdicts
must be those of Python's ``re`` on the same language, and the decoder's masks those read off
the finite language's prefixes (its words enumerated with the choice, whatever their length).
"""

from __future__ import annotations

import itertools
import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.automata.construct import build_expression
from grammarkit.automata.nfa import NFA, Budget
from grammarkit.decode import TokenMatcher
from grammarkit.vocab import Vocabulary

WORDS = ["", "a", "ab", "abb", "b", "ba", "aab"]
ALPHABET = "ab"
TOKENS = [b"a", b"b", b"ab", b"ba", b"aa", b"bb", b"</s>"]
STOP = 6

Part = tuple[str, str, frozenset[str]]
"""An expression as ``(EBNF, Python regex, its words)``; the words of a starred part are
those up to ``STAR_WORDS`` long (only the verdict test draws them, and reads the regex)."""

STAR_WORDS = 3


def _literal(word: str) -> Part:
    return f'"{word}"', re.escape(word), frozenset([word])


def _concatenation(items: list[Part]) -> Part:
    words = frozenset([""])
    for _, _, part in items:
        words = frozenset(a + b for a in words for b in part)
    return " ".join(e for e, _, _ in items), "".join(r for _, r, _ in items), words


@st.composite
def choices(draw: st.DrawFn, depth: int, finite: bool) -> Part:
    """A choice of 2-5 alternatives, most beginning with a literal."""
    alternatives = []
    for _ in range(draw(st.integers(2, 5))):
        items = [_literal(draw(st.sampled_from(WORDS)))] if draw(st.integers(0, 4)) else []
        for _ in range(draw(st.integers(0, 2))):
            items.append(draw(tails(depth, finite)))
        if not items:
            items = [("[ab]", "[ab]", frozenset(ALPHABET))]
        alternatives.append(_concatenation(items))
    return (f"({' | '.join(e for e, _, _ in alternatives)})",
            f"(?:{'|'.join(r for _, r, _ in alternatives)})",
            frozenset().union(*(words for _, _, words in alternatives)))


@st.composite
def tails(draw: st.DrawFn, depth: int, finite: bool) -> Part:
    kinds = ["literal", "class", "optional"] + ([] if finite else ["star"])
    kinds += ["choice"] if depth else []
    kind = draw(st.sampled_from(kinds))
    if kind == "literal":
        return _literal(draw(st.sampled_from(WORDS[1:])))
    if kind == "class":
        return "[ab]", "[ab]", frozenset(ALPHABET)
    if kind == "optional":
        word = draw(st.sampled_from(WORDS[1:]))
        return f'"{word}"?', f"(?:{re.escape(word)})?", frozenset(["", word])
    if kind == "star":
        return "[b]*", "b*", frozenset("b" * n for n in range(STAR_WORDS + 1))
    return draw(choices(depth - 1, finite))


def _strings(max_length: int) -> list[str]:
    return ["".join(p) for n in range(max_length + 1)
            for p in itertools.product(ALPHABET, repeat=n)]


INPUTS = _strings(6)


@settings(max_examples=60, deadline=None)
@given(choice=choices(2, finite=False))
def test_verdicts_are_those_of_the_language(choice: Part) -> None:
    ebnf, pattern, _ = choice
    grammar = Grammar.from_ebnf(f"root ::= {ebnf}")
    compiled = re.compile(pattern)
    for text in INPUTS:
        assert grammar.matches(text) == bool(compiled.fullmatch(text)), (ebnf, text)


@settings(max_examples=30, deadline=None)
@given(choice=choices(1, finite=True), seed=st.integers(0, 2**16))
def test_masks_are_those_of_the_language(choice: Part, seed: int) -> None:
    ebnf, _, language = choice
    prefixes = {word[:n] for word in language for n in range(len(word) + 1)}
    matcher = TokenMatcher(Grammar.from_ebnf(f"root ::= {ebnf}"),
                           Vocabulary(TOKENS, stop_ids=[STOP]))
    text = ""
    rng = random.Random(seed)
    while True:
        expected = {i for i, t in enumerate(TOKENS[:STOP]) if text + t.decode() in prefixes}
        if text in language:
            expected.add(STOP)
        assert set(matcher.allowed_token_ids().tolist()) == expected, (ebnf, text)
        ordinary = sorted(expected - {STOP})
        if not ordinary:
            break
        token = rng.choice(ordinary)
        assert matcher.accept_token(token)
        text += TOKENS[token].decode()


def test_masks_reach_words_longer_than_twelve_characters() -> None:
    """After ``aabb``, ``ab`` leads on to the 13-character ``aabbabbabbabb`` (a test that
    enumerated the language up to 12 characters once expected it refused)."""
    matcher = TokenMatcher(
        Grammar.from_ebnf('root ::= ("a" "abb" ("abb" "abb" "abb" | [ab]) | [ab])'),
        Vocabulary(TOKENS, stop_ids=[STOP]))
    assert matcher.accept_token(TOKENS.index(b"aa")) and matcher.accept_token(TOKENS.index(b"bb"))
    assert set(matcher.allowed_token_ids().tolist()) == {TOKENS.index(t) for t in (b"a", b"b", b"ab")}


def test_literal_led_alternatives_share_one_start_state_and_equal_tails() -> None:
    body = Grammar.from_ebnf("root ::= " + " | ".join(
        f'"w{i:04d}" [0-9]*' for i in range(1000))).ast.rules[0].body
    nfa = NFA(Budget(10**6))
    start, _ = build_expression(nfa, body, {}, lambda node: node)
    assert nfa.epsilon_closure((start,)) == {start}  # one trie, not 1,000 branches
    trie_nodes = 1 + 1 + 10 + 100 + 1000  # "w", "w0", "w0d", "w0dd", "w0ddd"
    assert nfa.num_states <= trie_nodes + 2 + 4  # [0-9]* built once


def test_deeply_nested_tails_are_built_without_recursion() -> None:
    text = '"x"'
    for _ in range(900):
        text = f'("a" {text} | "b" "c" | "a" "y")'
    grammar = Grammar.from_ebnf(f"root ::= {text}")
    assert grammar.matches("a" * 900 + "x") and grammar.matches("a" * 900 + "y")
    assert grammar.matches("aaabc") and not grammar.matches("aaab")
