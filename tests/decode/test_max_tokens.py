"""`max_tokens` in the native decoder: the same masks as xgrammar 0.2.8's, step by step.

xgrammar gives an occurrence of ``v[max_tokens=N]`` a deadline when it is predicted (the index
of the token being accepted, ``-1`` before the first, plus ``N``, capped by an enclosing
occurrence's); once ``N`` tokens have started inside it, its derivations are dropped if another
derivation can go on or the input could end, and the budget is relaxed otherwise
(``grammarkit/decode/token_budget.py``). The pinned cases below were established against
xgrammar and are checked against it again; the hypothesis walks compare every mask, accept
verdict and jump-forward string along random paths with rollbacks.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.decode import BatchTokenMatcher, TokenMatcher, allocate_token_bitmask
from grammarkit.vocab import Vocabulary

pytestmark = pytest.mark.xgrammar
xgr = importlib.import_module("xgrammar")

TOKENS = ["</s>", "a", "b", "ab", "c", ">", "a>", ">a", "abc", "!", ",", "<", "(", ")", "(a",
          "a)", "<a", "bc", "c>", "b>a", "))", "a!", "ca", ",a", "\u00e9", "\u00e9a"]
STOP = 0


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary([t.encode() for t in TOKENS], stop_ids=[STOP])


@pytest.fixture(scope="module")
def compiler() -> object:
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, vocab_size=len(TOKENS),
                             stop_token_ids=[STOP])
    return xgr.GrammarCompiler(info, cache_enabled=False)


def _ours(matcher: TokenMatcher) -> list[str]:
    bitmask = allocate_token_bitmask(1, len(TOKENS))
    matcher.fill_next_token_bitmask(bitmask)
    bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[: len(TOKENS)]
    return [TOKENS[i] for i in np.flatnonzero(bits)]


def _theirs(matcher: object) -> list[str]:
    bitmask = xgr.allocate_token_bitmask(1, len(TOKENS))
    matcher.fill_next_token_bitmask(bitmask)  # type: ignore[attr-defined]
    bits = np.unpackbits(bitmask.numpy()[0].view(np.uint8), bitorder="little")[: len(TOKENS)]
    return [TOKENS[i] for i in np.flatnonzero(bits)]


class _Pair:
    """Our matcher and xgrammar's, driven in lockstep (every step compared)."""

    def __init__(self, ebnf: str, vocab: Vocabulary, compiler: object):
        self.ours = TokenMatcher(Grammar.from_ebnf(ebnf), vocab)
        self.theirs = xgr.GrammarMatcher(
            compiler.compile_grammar(xgr.Grammar.from_ebnf(ebnf)))  # type: ignore[attr-defined]
        self.path: list[str] = []

    def mask(self) -> list[str]:
        ours, theirs = _ours(self.ours), _theirs(self.theirs)
        # xgrammar's mask may allow a token its accept_token refuses (where a rule with
        # `max_tokens` completes inside a token that enters one with `max_chars`: pinned below)
        theirs = [t for t in theirs if t in ours or self._theirs_accept(t)]
        assert ours == theirs, f"after {self.path}"
        if TOKENS[STOP] not in theirs:
            assert (self.ours.find_jump_forward_string()
                    == self.theirs.find_jump_forward_string()), f"after {self.path}"
        return ours

    def _theirs_accept(self, token: str) -> bool:
        """Whether xgrammar's matcher accepts ``token`` here (its state is kept)."""
        if not self.theirs.accept_token(TOKENS.index(token)):
            return False
        self.theirs.rollback(1)
        return True

    def accept(self, token: str) -> bool:
        accepted = self.ours.accept_token(TOKENS.index(token))
        assert accepted == self.theirs.accept_token(TOKENS.index(token)), \
            f"{token!r} after {self.path}"
        if accepted:
            self.path.append(token)
        return accepted

    def rollback(self, count: int) -> None:
        self.ours.rollback(count)
        self.theirs.rollback(count)
        del self.path[len(self.path) - count:]


LETTERS = ["a", "b", "ab", "c", "abc", "bc", "ca"]

PINNED = [
    # (grammar, tokens accepted one by one, the mask after them)
    # two tokens inside v: only what follows v
    ('root ::= v ">"\nv[max_tokens=2] ::= [a-z]*', ["a", "b"], [">"]),
    ('root ::= v ">"\nv[max_tokens=2] ::= [a-z]*', ["a"], LETTERS + [">", "a>", "c>"]),
    # the token entering v does not count: v is predicted while it is accepted
    ('root ::= "<" v ">"\nv[max_tokens=2] ::= [a-z]*', ["<a", "b"], LETTERS + [">", "a>", "c>"]),
    ('root ::= "<" v ">"\nv[max_tokens=2] ::= [a-z]*', ["<", "a", "b"], [">"]),
    # a token may straddle v's end while the budget lasts
    ('root ::= v ">" [a-z]*\nv[max_tokens=2] ::= [a-z]*', ["a", "b>a"], ["</s>"] + LETTERS),
    # v cannot end where its budget runs out: the budget is relaxed
    ('root ::= v ">"\nv[max_tokens=2] ::= "abc"', ["a", "b"], ["c", "c>"]),
    # another derivation alive: v is dropped, though it could not end yet
    ('root ::= v ">" | "a" [a-c]* "!"\nv[max_tokens=1] ::= [a-c]* ","', ["a"],
     LETTERS + ["!", "a!"]),
    # a nested budget is capped by its parent's; the parent is relaxed when nothing else lives
    ('root ::= o "!"\no[max_tokens=3] ::= "(" i ")" [a-z]*\ni[max_tokens=1] ::= [a-z]*',
     ["(", "a"], [")"]),
    ('root ::= o "!"\no[max_tokens=3] ::= "(" i ")" [a-z]*\ni[max_tokens=5] ::= [a-z]*',
     ["(", "a", "b", ")"], ["!"]),
    # a spent root: only the stop token
    ('root[max_tokens=2] ::= [a-z]*', ["a", "b"], ["</s>"]),
    # max_tokens=0: no deadline before the first token (xgrammar's -1), spent at once after one
    ('root ::= v ">"\nv[max_tokens=0] ::= [a-z]*', ["a", "b"], LETTERS + [">", "a>", "c>"]),
    ('root ::= "<" v ">"\nv[max_tokens=0] ::= [a-z]*', ["<"], [">"]),
    # with lazy and max_chars beside
    ('root ::= v ">"\nv[max_tokens=2, lazy] ::= [a-z]* "c"', ["a", "b"],
     ["a", "b", "ab", "c", "abc", "bc", "c>"]),
    ('root ::= v ">"\nv[max_tokens=2, max_chars=3] ::= [a-z]*', ["ab", "b"], [">"]),
]


@pytest.mark.parametrize(("ebnf", "tokens", "expected"), PINNED,
                         ids=[str(i) for i in range(len(PINNED))])
def test_pinned_cases_are_xgrammars(ebnf: str, tokens: list[str], expected: list[str],
                                    vocab: Vocabulary, compiler: object) -> None:
    pair = _Pair(ebnf, vocab, compiler)
    for token in tokens:
        pair.mask()
        assert pair.accept(token)
    assert sorted(pair.mask()) == sorted(expected)


def test_rollback_restores_the_count(vocab: Vocabulary, compiler: object) -> None:
    pair = _Pair('root ::= v ">"\nv[max_tokens=2] ::= [a-z]*', vocab, compiler)
    for token in ["a", "b"]:
        pair.mask()
        pair.accept(token)
    assert pair.mask() == [">"]
    assert not pair.accept("c")
    assert pair.ours.find_jump_forward_string() == ">"
    pair.rollback(1)
    assert "c" in pair.mask()
    assert pair.accept("c")
    assert pair.mask() == [">"]
    pair.rollback(2)
    assert pair.accept("abc") and "a" in pair.mask()


def test_strings_count_but_are_not_held_to_the_budget(vocab: Vocabulary,
                                                      compiler: object) -> None:
    """As in xgrammar: ``accept_string`` is one step of the count and ignores the budget."""
    ebnf = 'root ::= v ">"\nv[max_tokens=2] ::= [a-z]*'
    ours = TokenMatcher(Grammar.from_ebnf(ebnf), vocab)
    theirs = xgr.GrammarMatcher(compiler.compile_grammar(ebnf))  # type: ignore[attr-defined]
    for matcher in (ours, theirs):
        assert matcher.accept_string("a") and matcher.accept_string("b")
    assert _ours(ours) == _theirs(theirs) == [">"]
    assert ours.accept_string("c") and theirs.accept_string("c")
    assert _ours(ours) == _theirs(theirs) == [">"]


def test_batch_fills_and_shared_masks_keep_budgets_apart(vocab: Vocabulary) -> None:
    """Two matchers of one grammar share its engine and mask cache: a spent budget in one
    does not leak into the other, in a batch fill or in a new matcher."""
    grammar = Grammar.from_ebnf('root ::= v ">"\nv[max_tokens=2] ::= [a-z]*')
    spent, fresh = TokenMatcher(grammar, vocab), TokenMatcher(grammar, vocab)
    for matcher in (spent, fresh):
        assert matcher.accept_token(TOKENS.index("a"))
    assert spent.accept_token(TOKENS.index("b"))
    assert fresh.accept_string("b")  # the same text, but fresh has one token left
    fresh.rollback(1)
    assert fresh.accept_token(TOKENS.index("a"))  # now the same state as spent's, not spent
    fresh.rollback(1)
    bitmask = allocate_token_bitmask(2, len(TOKENS))
    BatchTokenMatcher().batch_fill_next_token_bitmask([spent, fresh], bitmask)
    rows = [[TOKENS[i] for i in np.flatnonzero(
        np.unpackbits(row.view(np.uint8), bitorder="little")[: len(TOKENS)])] for row in bitmask]
    assert rows[0] == [">"] and "b" in rows[1]
    assert _ours(TokenMatcher(grammar, vocab)) == sorted(rows[1], key=TOKENS.index)


def test_grammars_without_budgets_have_no_budget_bookkeeping(vocab: Vocabulary) -> None:
    matcher = TokenMatcher(Grammar.from_ebnf('root ::= v ">"\nv ::= [a-z]*'), vocab)
    assert matcher._budget is None


def test_one_rule_twice_in_a_row_is_a_known_difference(vocab: Vocabulary,
                                                       compiler: object) -> None:
    """``v v`` where the first ``v`` may go on: after ``c``, ``bc`` both occurrences' budgets
    are spent (the first one's after ``c``), so grammarkit allows only ``>``. xgrammar 0.2.8
    keeps the first occurrence's expired derivations when the same rule follows it (with
    two rules ``v w`` it drops them, as ``docs/decoder.md`` says)."""
    pair = _Pair('root ::= v v ">"\nv[max_tokens=1] ::= [a-c]+', vocab, compiler)
    for token in ["c", "bc"]:
        assert _ours(pair.ours) == _theirs(pair.theirs)
        assert pair.accept(token)
    assert _ours(pair.ours) == [">"]
    assert _theirs(pair.theirs) == ["a", "b", "ab", "c", ">", "a>", "abc", "bc", "c>", "ca"]
    pair = _Pair('root ::= v w ">"\nv[max_tokens=1] ::= [a-c]+\nw[max_tokens=1] ::= [a-c]+',
                 vocab, compiler)
    for token in ["c", "bc"]:
        pair.mask()
        assert pair.accept(token)
    assert pair.mask() == [">"]


def test_a_mask_beside_a_token_budget_is_what_xgrammar_accepts(vocab: Vocabulary,
                                                                compiler: object) -> None:
    """xgrammar 0.2.8's mask allows ``abc`` here, which its ``accept_token`` refuses: after
    ``ab``, ``w`` has spent its budget and can end, so ``>`` is alive and ``w``'s ``c`` is
    dropped. Without ``max_tokens`` on ``v`` its mask leaves ``abc`` out too. grammarkit's
    mask is what both engines' ``accept_token`` accepts."""
    ebnf = 'root ::= v w ">"\nw[max_chars=1] ::= [a-c]+\nv[max_tokens=3] ::= "a"'
    pair = _Pair(ebnf, vocab, compiler)
    assert _theirs(pair.theirs) == ["a", "ab", "abc"]
    assert not pair._theirs_accept("abc")
    assert pair.mask() == ["a", "ab"]
    assert not pair.accept("abc")


# -- random grammars, random walks ---------------------------------------------------------
ATOMS = ['"a"', '"b"', '"ab"', "[a-c]", "x", '""', '"\u00e9"']
"""Pieces of a budgeted body: ``x ::= "c" [ab]?`` is a sub-rule."""

CONTEXTS = [
    'root ::= v ">"',
    'root ::= "<" v ">" v',
    'root ::= (v ",")* v "!"',
    'root ::= v ">" | [a-c]* "!"',
    'root ::= "(" v ")" [a-c]*',
    'root ::= u "!"\nu[{outer}] ::= "(" v ")" [a-c]*',
    'root ::= u "!"\nu[{outer}] ::= (v ",")* v',
    "root ::= v",
    'root ::= v w ">"\nw[{outer}] ::= [a-c]+',
    'root ::= v ">" | w "!"\nw ::= v ","',
    'root ::= v ">" | "a" v "!"',
]
"""Contexts of ``v``, the budgeted rule (``u`` holds it in a budget of its own: tokens,
characters or both)."""


@st.composite
def _bodies(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    parts = [draw(_bodies(depth + 1)) for _ in range(draw(st.integers(1, 3)))]
    joined = draw(st.sampled_from([" ", " | "])).join(parts)
    suffix = draw(st.sampled_from(["", "*", "+", "?"]))
    return f"({joined}){suffix}"


LAZY_BODIES = ['[a-c]* "c"', '"a" [a-c]*', '[ab]* "bc"', '"ab" [a-c]* "a"']


@st.composite
def _grammars(draw: st.DrawFn) -> str:
    body = draw(_bodies())
    recursive = draw(st.booleans())
    if recursive:
        body = f'{body} | "(" v ")" {draw(st.sampled_from(ATOMS))}'
    outer = draw(st.sampled_from(["max_tokens={}", "max_chars={}",
                                  "max_tokens={}, max_chars={}"]))
    context = draw(st.sampled_from(CONTEXTS)).format(
        outer=outer.format(draw(st.integers(1, 5)), draw(st.integers(0, 6))))
    # max_tokens=0 before the first token inside another budget: see docs/decoder.md
    attributes = [f"max_tokens={draw(st.integers(1 if 'u[' in context else 0, 4))}"]
    extra = draw(st.sampled_from(["", "lazy", "max_chars"]))
    if extra == "lazy":  # xgrammar: a lazy body is a sequence of strings and classes
        body = draw(st.sampled_from(LAZY_BODIES))
        attributes.append("lazy")
    elif extra == "max_chars":
        attributes.append(f"max_chars={draw(st.integers(0, 6))}")
    return f'{context}\nv[{", ".join(attributes)}] ::= {body}\nx ::= "c" [ab]?'


@settings(max_examples=120)
@given(ebnf=_grammars(), choices=st.lists(st.integers(0, 1 << 16), min_size=4, max_size=14))
def test_random_budgets_get_xgrammars_masks(ebnf: str, choices: list[int], vocab: Vocabulary,
                                            compiler: object) -> None:
    pair = _Pair(ebnf, vocab, compiler)
    for step, choice in enumerate(choices):
        allowed = [t for t in pair.mask() if t != TOKENS[STOP]]
        if not allowed:
            break
        if step % 5 == 4 and len(pair.path) >= 2:
            pair.rollback(choice % 3)
            continue
        token = allowed[choice % len(allowed)]
        assert pair.accept(token)
        if choice % 7 == 0:  # a token the mask rejects is rejected by both
            allowed = pair.mask()
            rejected = [t for t in TOKENS[1:] if t not in allowed]
            if rejected:
                assert not pair.accept(rejected[choice % len(rejected)])
