"""`max_chars` as xgrammar 0.2.8 enforces it (``docs/diagnostics.md``, GK116).

Matching and the token-mask decoder run xgrammar's rule of its parser: every Earley item has a
character deadline, and before a character the items past theirs are dropped if another item
is alive or the input could end (:mod:`grammarkit.automata.char_deadlines`,
:mod:`grammarkit.decode.char_budget`). The hypothesis differentials draw budgeted rules that
are recursive, nested in each other, nullable, used several times, in ambiguous contexts, and
compare verdicts, token masks and jump-forward strings with the reference engine. Where the
engines still differ, a test pins it.
"""

from __future__ import annotations

import itertools
import re
import time

import numpy as np
import pytest
import xgrammar as xgr
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from xgrammar.testing import _is_grammar_accept_string

from grammarkit import Grammar, sample
from grammarkit.decode import TokenMatcher, allocate_token_bitmask, deadline_automaton
from grammarkit.vocab import Vocabulary

pytestmark = pytest.mark.xgrammar

BUDGETS = [
    # (grammar, accepted, rejected)
    ('root ::= v ">"\nv[max_chars=2] ::= [a-z]*', [">", "a>", "ab>"], ["abc>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= [a-z\u00e9\u4f60]*',
     ["\u4f60\u4f60>", "\u00e9\u4f60>"], ["\u4f60\u4f60\u4f60>"]),  # characters, not bytes
    # sub-rules count; past the budget the rule ends where it first can
    ('root ::= v ">"\nv[max_chars=3] ::= "(" w ")"\nw ::= [a-z]*',
     ["()>", "(a)>", "(ab)>", "(abcdef)>"], ["(ab)c>", "(ab)>>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= "abc" "d"*', ["abc>"], ["abcd>", "abcdd>"]),
    ('root ::= v ">"\nv[max_chars=2] ::= "ab" "c"?', ["ab>"], ["abc>"]),
    ('root ::= v ">" | "abc>"\nv[max_chars=2] ::= [a-z]*', ["abc>", "ab>"], ["abcd>"]),
    ('root ::= v v\nv[max_chars=2] ::= [a-z]*', ["", "abcd"], ["abcde"]),
    ('root ::= v "x"*\nv[max_chars=2] ::= "x"*', ["xxxx", "xx", "xxxxxxx"], ["xxy"]),
    ('root ::= v ">"\nv[max_chars=0] ::= [a-z]*', [">"], ["a>"]),
    ('root[max_chars=3] ::= [a-z]*', ["", "abc"], ["abcd"]),
    ('root ::= v ">"\nv[max_tokens=2, max_chars=4] ::= [a-z]*', ["abcd>"], ["abcde>"]),
    ('root ::= v ">"\nv[max_chars=1] ::= ("a" [b-c]*)*', ["a>"], ["ab>", "aa>", "abbb>"]),
    ('root ::= "a" v\nv[max_chars=0] ::= "b"*', ["a"], ["ab"]),
    ('root ::= v ">"\nv[max_chars=3] ::= [a-z]{0,100000}', ["abc>"], ["abcd>"]),
]


def _same_verdicts_as_xgrammar(ebnf: str, accepted: list[str], rejected: list[str]) -> Grammar:
    """Both engines accept ``accepted`` and reject ``rejected``; the grammarkit grammar."""
    reference = xgr.Grammar.from_ebnf(ebnf)
    grammar = Grammar.from_ebnf(ebnf)
    for text in accepted:
        assert _is_grammar_accept_string(reference, text), text
        assert grammar.matches(text), text
    for text in rejected:
        assert not _is_grammar_accept_string(reference, text), text
        assert not grammar.matches(text), text
    return grammar


@pytest.mark.parametrize(("ebnf", "accepted", "rejected"), BUDGETS,
                         ids=[str(i) for i in range(len(BUDGETS))])
def test_documented_budget_is_xgrammars(ebnf: str, accepted: list[str],
                                        rejected: list[str]) -> None:
    grammar = _same_verdicts_as_xgrammar(ebnf, accepted, rejected)
    for text in rejected:
        assert grammar.explain(text) is not None


def test_explanations_point_where_the_budget_ends_the_rule() -> None:
    grammar = Grammar.from_ebnf('root ::= v ">"\nv[max_chars=2] ::= [a-z\u4f60]*')
    explanation = grammar.explain("\u4f60\u4f60\u4f60>")
    assert explanation is not None
    assert (explanation.offset, explanation.column) == (6, 3)
    assert explanation.expected == ('">"',) and explanation.found == '"\u4f60"'


# -- random grammars: a budgeted rule in contexts where it is the only live derivation -------
ATOMS = ['"a"', '"b"', '"ab"', '"\u00e9"', '"a\u4f60"', "[ab]", "[a\u00e9]", "w", '""']
"""Pieces of the budgeted rule's body: ``w ::= "b" [a\u00e9]?`` is a sub-rule."""

CONTEXTS = [
    'root ::= v ">"',
    'root ::= "<" v ">" v',
    'root ::= (v ",")* v ">"',
    'root ::= v "," v ("," v)?',
    'root ::= "x" v',
]
"""Contexts of ``v``: the budgeted rule (``v``'s text never holds ``<>,x``)."""

ALPHABET = ["a", "b", "\u00e9", "\u4f60", ">", ",", "<", "x"]


@st.composite
def _bodies(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        return draw(st.sampled_from(ATOMS))
    parts = [draw(_bodies(depth + 1)) for _ in range(draw(st.integers(1, 3)))]
    joined = draw(st.sampled_from([" ", " | "])).join(parts)
    suffix = draw(st.sampled_from(["", "*", "+", "?", "{1,2}"]))
    return f"({joined}){suffix}"


@st.composite
def _budgeted_grammars(draw: st.DrawFn) -> str:
    body = draw(_bodies())
    budget = draw(st.integers(0, 4))
    context = draw(st.sampled_from(CONTEXTS + ["ROOT"]))
    extra = draw(st.sampled_from(["", ", max_tokens=3"]))
    rules = 'w ::= "b" [a\u00e9]?'
    if context == "ROOT":
        return f"root[max_chars={budget}{extra}] ::= {body}\n{rules}"
    return f"{context}\nv[max_chars={budget}{extra}] ::= {body}\n{rules}"


TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=9).map("".join)


@settings(max_examples=150)
@given(ebnf=_budgeted_grammars(), data=st.data())
def test_random_budgets_get_xgrammars_verdicts(ebnf: str, data: st.DataObject) -> None:
    reference = xgr.Grammar.from_ebnf(ebnf)
    grammar = Grammar.from_ebnf(ebnf)
    samples = data.draw(st.lists(TEXTS, min_size=6, max_size=6))
    # half the texts from the grammar without its budget, so that budgets decide
    unbudgeted = Grammar.from_ebnf(re.sub(r"\[max_chars=\d+(, max_tokens=3)?\]", "", ebnf))
    samples += sample(unbudgeted, n=6, seed=data.draw(st.integers(0, 1000)))
    for text in samples:
        assert grammar.matches(text) == _is_grammar_accept_string(reference, text), text


# -- budgets where several derivations are alive: xgrammar's rule of its parser ----------------
AMBIGUOUS = [
    # (grammar, accepted, rejected)
    # another derivation is alive where v's budget runs out (after `ab`): v is dropped
    ('root ::= v "x" | [a-z]* "y"\nv[max_chars=2] ::= "abc"', ["abcy"], ["abcx"]),
    # the input could end where v's budget runs out (at once): v is dropped
    ('root ::= v*\nv[max_chars=0] ::= "b"', [""], ["b"]),
    # what follows v enters a spent budget at once: nothing is alive, nothing is dropped
    ('root ::= v v\nv[max_chars=0] ::= "b" "a"?', ["bab", "bb"], ["ba"]),
    # recursive: the inner v's budget is the outer one's (it started later); spent inside the
    # parentheses, where nothing else is alive, it relaxes until `)` can come
    ('root ::= v ">"\nv[max_chars=3] ::= "(" v ")" | "a"*', ["(a)>", "((a))>", "(aaaa)>"],
     ["aaaa>"]),
    ('root ::= v\nv[max_chars=2] ::= w\nw ::= [a-z]* | "(" w ")"', ["ab", "(a)"], ["abc"]),
    # nested: the caller cannot end, so both budgets relax until it can
    ('root ::= u ">"\nu[max_chars=2] ::= v "x"\nv[max_chars=3] ::= [a-z]*',
     ["abcdx>", "x>"], ["abcdxx>"]),
    ('root ::= u ">"\nu[max_chars=5] ::= v "x"\nv[max_chars=2] ::= [a-z]*', ["abx>"],
     ["abcx>"]),
]


@pytest.mark.parametrize(("ebnf", "accepted", "rejected"), AMBIGUOUS,
                         ids=[str(i) for i in range(len(AMBIGUOUS))])
def test_ambiguous_recursive_and_nested_budgets_are_xgrammars(
        ebnf: str, accepted: list[str], rejected: list[str]) -> None:
    """Before a character xgrammar drops the derivations whose budget is spent if another one
    is alive or the input could end, else keeps them all (``docs/diagnostics.md``, GK116)."""
    _same_verdicts_as_xgrammar(ebnf, accepted, rejected)


FIRSTS = ['"a"', '"b"', '"ab"', '"\u00e9"', "[ab]", "[a\u00e9]", "[ab]*", '""']
"""How the rules' alternatives start (see ``test_where_xgrammar_shares_rules_differently``)."""

SEQUENCES = [*FIRSTS, "v", "w", "u"]
"""Pieces of the rules' alternatives: references make budgets recursive and nested."""

AMBIGUOUS_ROOTS = ['v ">"', 'v v ">"', 'v "," v ">" | w ">"', 'v ">" | w ">"',
                   'v [a-z]* ">"', 'u v ">"', '(v | w | u) ">"', 'v w u ">"', 'v ">" | v ","']
"""Roots that end with a character (see ``test_where_xgrammar_shares_rules_differently``)."""


@st.composite
def _ambiguous_grammars(draw: st.DrawFn) -> str:
    lines = [f"root ::= {draw(st.sampled_from(AMBIGUOUS_ROOTS))}"]
    for name in "vwu":
        budget = draw(st.one_of(st.none(), st.integers(0, 4)))
        attribute = "" if budget is None else f"[max_chars={budget}]"
        alternatives = draw(st.lists(st.tuples(st.sampled_from(FIRSTS), st.lists(
            st.sampled_from(SEQUENCES), max_size=2)), min_size=1, max_size=3))
        body = " | ".join(" ".join([first, *rest]) for first, rest in alternatives)
        lines.append(f"{name}{attribute} ::= {body}")
    return "\n".join(lines)


AMBIGUOUS_ALPHABET = ["a", "b", "\u00e9", ">", ","]


@settings(max_examples=80)
@given(ebnf=_ambiguous_grammars(), data=st.data())
def test_random_ambiguous_budgets_get_xgrammars_verdicts(ebnf: str,
                                                         data: st.DataObject) -> None:
    """Budgets nested in budgets, recursive, and where several derivations are alive."""
    reference = xgr.Grammar.from_ebnf(ebnf)
    grammar = Grammar.from_ebnf(ebnf)
    texts = st.lists(st.sampled_from(AMBIGUOUS_ALPHABET), max_size=7).map("".join)
    samples = data.draw(st.lists(texts, min_size=8, max_size=8))
    unbudgeted = Grammar.from_ebnf(re.sub(r"\[max_chars=\d+\]", "", ebnf))
    samples += sample(unbudgeted, n=8, seed=data.draw(st.integers(0, 1000)))
    for text in samples:
        assert grammar.matches(text) == _is_grammar_accept_string(reference, text), text


@pytest.mark.parametrize(("ebnf", "text", "theirs", "ours"), [
    # root's last rule: xgrammar starts a v of the root's own after `\u00e9b`, apart from the v
    # that w's `w v` starts there (its budget spent), and drops that one before `a`;
    # grammarkit's one v serves both callers, lives by the later deadline, and ends w again
    ('root ::= w v\nv ::= "a"\nw[max_chars=1] ::= "\u00e9b" | w v', "\u00e9baa", False, True),
    # xgrammar's `[ab]+` is a helper rule: the occurrence that the first v's repetition and the
    # second v both start after `ba` is one, kept by the second v's later deadline, and its end
    # completes the first v again past its budget; grammarkit's repetition is inside v
    ('root ::= v v\nv[max_chars=2] ::= [ab]+ "a"', "baababa", True, False),
    # xgrammar inlines a rule without references that starts an alternative (`u` into w's
    # `u v "ab"`): that u is w's own text there, not an occurrence other callers share
    (('root ::= v w u ">"\nv[max_chars=0] ::= [ab] | w\nw[max_chars=2] ::= u v "ab" | v u\n'
      'u ::= "" "\u00e9"'), "b\u00e9aab\u00e9\u00e9>", True, False),
])
def test_where_xgrammar_shares_rules_differently(ebnf: str, text: str, theirs: bool,
                                                  ours: bool) -> None:
    """An occurrence of a rule that two derivations start at one position is one item set in
    both engines, kept while either derivation's budget lasts; xgrammar and grammarkit split
    rules differently into occurrences (``docs/diagnostics.md``, GK116)."""
    assert _is_grammar_accept_string(xgr.Grammar.from_ebnf(ebnf), text) == theirs
    assert Grammar.from_ebnf(ebnf).matches(text) == ours


@pytest.mark.parametrize("u", ['"a" | "a" w', '"a" | "a" w "c"'])
def test_where_xgrammars_mask_allows_what_its_accept_token_refuses(
        u: str, small_vocab: Vocabulary) -> None:
    """A budget of 0 on a rule predicted inside a token (``v`` after the ``a`` of ``ab``):
    xgrammar's mask allows ``ab``, its own ``accept_token`` refuses it (``w`` is alive before
    ``b``, so the spent ``v`` is dropped); grammarkit's mask holds exactly the tokens both
    engines accept (``docs/diagnostics.md``, GK116; found by the random differentials)."""
    ebnf = f'root ::= u v ">"\nv[max_chars=0] ::= "b"\nw ::= "a"\nu ::= {u}'
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, stop_token_ids=[STOP])
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(ebnf)
    theirs = _reference_allowed(xgr.GrammarMatcher(compiled))
    assert TOKENS.index(b"ab") in theirs
    accepted = [t for t in theirs if xgr.GrammarMatcher(compiled).accept_token(t)]
    assert TOKENS.index(b"ab") not in accepted
    assert _allowed(TokenMatcher(Grammar.from_ebnf(ebnf), small_vocab)) == accepted


def test_strings_and_rollbacks_keep_xgrammars_deadlines(small_vocab: Vocabulary) -> None:
    """``accept_string`` reads with the deadlines; ``rollback`` restores the count."""
    ebnf = 'root ::= v ">"\nv[max_chars=3] ::= "(" v ")" | [ab]*'
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, stop_token_ids=[STOP])
    theirs = xgr.GrammarMatcher(
        xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(ebnf))
    ours = TokenMatcher(Grammar.from_ebnf(ebnf), small_vocab)
    for matcher in (ours, theirs):
        assert not matcher.accept_string("abab>")  # `>` alive: v is dropped after `aba`
        assert matcher.accept_string("(ab")
        assert matcher.accept_token(TOKENS.index(b"ab"))  # spent, nothing else alive: relaxed
    assert _allowed(ours) == _reference_allowed(theirs)
    for matcher in (ours, theirs):
        matcher.rollback(1)
        assert matcher.accept_token(TOKENS.index(b")"))
    assert _allowed(ours) == _reference_allowed(theirs)
    assert ours.find_jump_forward_string() == theirs.find_jump_forward_string()


LAZY = [
    # a budgeted rule inside a lazy rule is expanded into it: no budget there (xgrammar's too)
    'root ::= u\nu[lazy] ::= v ">"\nv[max_chars=2] ::= [a-z]*',
    'root ::= u "!"\nu[lazy] ::= v ">"\nv[max_chars=2] ::= [a-z]*',
    # the same rule outside the lazy rule keeps its budget
    'root ::= u "!" v ">"\nu[lazy] ::= v ">"\nv[max_chars=2] ::= [a-z]*',
    # a lazy rule's own budget, with the inner one dropped
    'root ::= u\nu[lazy, max_chars=3] ::= v ">"\nv[max_chars=1] ::= [a-z]*',
    'root ::= u [a-z>]*\nu[lazy, max_chars=2] ::= [a-z]* ">"',
    'root ::= (u | [a-z]+ "!")\nu[lazy, max_chars=2] ::= [a-z]* ">"',
]

LAZY_ALPHABET = ["a", "b", "c", ">", "!"]


@pytest.mark.parametrize("ebnf", LAZY, ids=[str(i) for i in range(len(LAZY))])
@settings(max_examples=10)
@given(texts=st.lists(st.lists(st.sampled_from(LAZY_ALPHABET), max_size=7).map("".join),
                      min_size=20, max_size=20),
       choices=st.lists(st.integers(0, 1000), min_size=6, max_size=6))
def test_budgets_inside_lazy_rules_are_xgrammars(ebnf: str, texts: list[str],
                                                 choices: list[int],
                                                 small_vocab: Vocabulary) -> None:
    """Nothing is refused (GK116 was): verdicts and masks are xgrammar's."""
    reference = xgr.Grammar.from_ebnf(ebnf)
    grammar = Grammar.from_ebnf(ebnf)
    for text in [*texts, "ab>", "abc>", "abc>!", "ab>!ab>", "abc>!ab>", "abcd>"]:
        assert grammar.matches(text) == _is_grammar_accept_string(reference, text), text
    _same_walk(ebnf, choices, small_vocab)


def test_a_large_budget_costs_what_is_read() -> None:
    """``max_chars=100000`` unrolls nothing; its exact end is where xgrammar puts it."""
    started = time.process_time()
    ebnf = 'root ::= v ">"\nv[max_chars=100000] ::= "{" [a-z\u00e9]* "}" [0-9]*'
    grammar = Grammar.from_ebnf(ebnf)
    reference = xgr.Grammar.from_ebnf(ebnf)
    full = "{" + "a\u00e9" * 49_999 + "}"  # 100,000 characters: the rule must end
    longer = "{" + "a" * 99_999 + "}"  # it could not end at 100,000: it ends at 100,001
    for text in (full + ">", full + "1>", longer + ">", longer + "1>", "{" + "a" * 20 + "}12>"):
        assert grammar.matches(text) == _is_grammar_accept_string(reference, text)
    assert grammar.matches(full + ">") and not grammar.matches(full + "1>")
    assert grammar.compiled.num_states < 2_000  # not one per character
    # the rule starts where its caller does: the caller's next item comes back at every step
    shared = Grammar.from_ebnf('root ::= v ">"\nv[max_chars=100000] ::= [a-z\u00e9 ]*')
    assert shared.matches("a" * 100_000 + ">") and not shared.matches("a" * 100_001 + ">")
    assert shared.matches("a\u00e9 " * 33_333 + "a>")
    assert shared.compiled.num_states < 2_000
    assert time.process_time() - started < 10


# -- the decoder: the same masks as xgrammar's ---------------------------------------------
TOKENS = [b"a", b"b", b"ab", b"ba", b"aab", b"\xc3", b"\xa9", "\u00e9".encode(),
          "a\u00e9".encode(), "\u4f60".encode(), b"\xe4", b"\xbd\xa0", b">", b"a>", b",",
          b"b,a", b"</s>", b"x", b"<", b"abab", b"(", b")", b"((", b"a)", b")>", "\u00e9>".encode()]
STOP = 16


@pytest.fixture(scope="module")
def small_vocab() -> Vocabulary:
    return Vocabulary(TOKENS, stop_ids=[STOP])


def _reference_allowed(matcher: xgr.GrammarMatcher, size: int = len(TOKENS)) -> list[int]:
    bitmask = xgr.allocate_token_bitmask(1, size)
    matcher.fill_next_token_bitmask(bitmask)
    bits = np.unpackbits(bitmask.numpy()[0].view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:size]).tolist()


def _allowed(matcher: TokenMatcher, size: int = len(TOKENS)) -> list[int]:
    bitmask = allocate_token_bitmask(1, size)
    matcher.fill_next_token_bitmask(bitmask)
    bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:size]).tolist()


def _reference_accepts(matcher: xgr.GrammarMatcher, token: int) -> bool:
    """Whether ``matcher`` accepts ``token`` now (its state is kept)."""
    if not matcher.accept_token(token):
        return False
    matcher.rollback(1)
    return True


def _same_walk(ebnf: str, choices: list[int], vocab: Vocabulary,
               tokens: list[bytes] = TOKENS) -> None:
    """Masks and jump-forward strings of both engines along a walk of allowed tokens.

    Where xgrammar's mask allows a token its own ``accept_token`` refuses, grammarkit's mask
    must be xgrammar's without exactly those tokens (``docs/diagnostics.md``, GK116)."""
    stop = vocab.tokens.index(b"</s>")
    info = xgr.TokenizerInfo(tokens, xgr.VocabType.RAW, stop_token_ids=[stop])
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(ebnf)
    theirs = xgr.GrammarMatcher(compiled)
    ours = TokenMatcher(Grammar.from_ebnf(ebnf), vocab)
    path = []
    for choice in choices:
        allowed = _reference_allowed(theirs, len(tokens))
        mine = _allowed(ours, len(tokens))
        if mine != allowed:  # only where xgrammar's mask holds tokens it refuses (GK116)
            allowed = [t for t in allowed if t == stop or _reference_accepts(theirs, t)]
        assert mine == allowed, path
        try:
            forced = theirs.find_jump_forward_string()
        except UnicodeDecodeError:  # it finishes a split character (docs/decoder.md)
            forced = None
        if forced is not None:  # xgrammar may stop short of ours (pinned below), never beyond
            assert ours.find_jump_forward_string().startswith(forced), path
        if not allowed:
            break
        token = allowed[choice % len(allowed)]
        if token == stop:
            break
        assert ours.accept_token(token) and theirs.accept_token(token)
        path.append(tokens[token])
        if not _complete(b"".join(path)):
            break  # a split character counts twice in xgrammar's budget (pinned below)


def _complete(data: bytes) -> bool:
    """Whether ``data`` ends on a character boundary."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_where_xgrammar_jumps_forward_less_far(small_vocab: Vocabulary) -> None:
    """Both engines accept `aa>` and `aaa>` (u's budget is spent by `a v`, which then lives on
    as the only derivation), so `aa` begins every sentence; xgrammar's jump-forward string
    stops after `a`, grammarkit's goes on to `aa` (found by the random walk below)."""
    ebnf = 'root ::= u v ">"\nv ::= "a"\nw ::= "a"\nu[max_chars=1] ::= "a" | "a" v'
    reference = xgr.Grammar.from_ebnf(ebnf)
    grammar = Grammar.from_ebnf(ebnf)
    for text in ("aa>", "aaa>", "a>", "aaaa>"):
        assert grammar.matches(text) == _is_grammar_accept_string(reference, text), text
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, stop_token_ids=[STOP])
    theirs = xgr.GrammarMatcher(
        xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(ebnf))
    ours = TokenMatcher(grammar, small_vocab)
    assert _allowed(ours) == _reference_allowed(theirs)
    assert (theirs.find_jump_forward_string(), ours.find_jump_forward_string()) == ("a", "aa")


def test_where_xgrammar_counts_a_split_character_twice(small_vocab: Vocabulary) -> None:
    """A character whose bytes come in two tokens counts as two characters in xgrammar's
    budget, as one when it comes in one token; grammarkit counts it as one either way (found
    by the random walk below: `\u00e9` as `\xc3` then `\xa9` spends u's budget of 4)."""
    ebnf = ('root ::= u v ">"\nv[max_chars=4] ::= [ab]* [a\u00e9]\n'
            'u[max_chars=4] ::= "a" | "a" [ab]* "\u00e9"')
    info = xgr.TokenizerInfo(TOKENS, xgr.VocabType.RAW, stop_token_ids=[STOP])
    compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(ebnf)
    masks = {}
    for spelling in ([b"a", b"ba", b"\xc3", b"\xa9"], [b"a", b"ba", "\u00e9".encode()]):
        theirs = xgr.GrammarMatcher(compiled)
        ours = TokenMatcher(Grammar.from_ebnf(ebnf), small_vocab)
        for token in spelling:
            assert theirs.accept_token(TOKENS.index(token))
            assert ours.accept_token(TOKENS.index(token))
        masks[len(spelling)] = (_reference_allowed(theirs), _allowed(ours))
    (split_theirs, split_ours), (whole_theirs, whole_ours) = masks[4], masks[3]
    assert split_theirs == [TOKENS.index(b">")]  # u = "aba\u00e9" is 5 long: only u = "a"
    assert split_ours == whole_ours == whole_theirs  # u = "aba\u00e9" is 4 long: v may start


@settings(max_examples=60)
@given(ebnf=_budgeted_grammars(), choices=st.lists(st.integers(0, 1000), max_size=10))
def test_random_budgets_get_xgrammars_masks(ebnf: str, choices: list[int],
                                             small_vocab: Vocabulary) -> None:
    _same_walk(ebnf, choices, small_vocab)


DECODED = [
    # recursive: spent inside the parentheses, nothing else is alive, the budget relaxes
    'root ::= v ">"\nv[max_chars=3] ::= "(" v ")" | "a"*',
    'root ::= v\nv[max_chars=2] ::= w\nw ::= [a-z]* | "(" w ")"',
    'root ::= (v ",")* v ">"\nv[max_chars=2] ::= [ab]* | "(" v ")"',
    # nested: an inner budget is the smaller of its own and what is left of its caller's
    'root ::= u ">"\nu[max_chars=5] ::= v "x"\nv[max_chars=2] ::= [a-z]*',
    'root ::= u ">"\nu[max_chars=2] ::= v "x"\nv[max_chars=3] ::= [a-z]*',
    # another derivation alive where the budget runs out
    'root ::= v "x" | [a-z]* "y"\nv[max_chars=2] ::= "abc"',
    # vocabulary tokens inside and after budgeted rules: taken whole, by no deadline inside
    'root ::= v ">"\nv[max_chars=2] ::= Token(1, 2) [a-z]*',
    'root ::= v ">"\nv[max_chars=3] ::= (Token(0) | "b")*',
    'root ::= v Token(12) | "x"\nv[max_chars=2] ::= [a-z]*',
]


@pytest.mark.parametrize("ebnf", DECODED, ids=[str(i) for i in range(len(DECODED))])
@settings(max_examples=15)
@given(choices=st.lists(st.integers(0, 1000), min_size=8, max_size=8))
def test_recursive_and_nested_budgets_get_xgrammars_masks(
        ebnf: str, choices: list[int], small_vocab: Vocabulary) -> None:
    """The decoder runs the parser's deadlines: nothing is refused (GK116 was)."""
    _same_walk(ebnf, choices, small_vocab)


@settings(max_examples=60)
@given(ebnf=_ambiguous_grammars(), choices=st.lists(st.integers(0, 1000), max_size=8))
def test_random_ambiguous_budgets_get_xgrammars_masks(ebnf: str, choices: list[int],
                                                       small_vocab: Vocabulary) -> None:
    """Budgets nested in budgets, recursive, and where several derivations are alive."""
    # rules that derive no finite text: the decoder leaves their tokens out, xgrammar not
    unbudgeted = re.sub(r"\[max_chars=\d+\]", "", ebnf)
    assume(all(sample(Grammar.from_ebnf(unbudgeted, root=name), n=1, seed=0)
               for name in ("root", "v", "w", "u")))
    _same_walk(ebnf, choices, small_vocab)


WORD_TOKENS = [*("".join(t).encode() for n in (1, 2, 3, 4)
                 for t in itertools.product("ab\u00e9 ", repeat=n)), b".", b"(", b")", b"</s>"]
"""Every string of up to four of ``a``, ``b``, ``\u00e9`` and space: tokens of every length
at every distance to a deadline."""

WORDS = [
    'root ::= (v " ")* v "."\nv[max_chars=3] ::= [ab\u00e9]+',
    'root ::= (v " ")* v "."\nv[max_chars=2] ::= [ab\u00e9 ]* | "(" v ")"',
    'root ::= v "."\nv[max_chars=9] ::= "(" v ")" | [ab ]*',
    'root ::= (u " ")* "."\nu[max_chars=6] ::= v v\nv[max_chars=2] ::= [ab\u00e9]*',
]


@pytest.mark.parametrize("ebnf", WORDS, ids=[str(i) for i in range(len(WORDS))])
@settings(max_examples=8)
@given(choices=st.lists(st.integers(0, 1000), min_size=20, max_size=20))
def test_masks_of_repeated_budgets_are_xgrammars(ebnf: str, choices: list[int]) -> None:
    """Budgeted rules met again and again, with tokens crossing their deadlines: the decoder's
    deadline automaton reuses its states across masks (``grammarkit.decode.deadline_automaton``),
    and every mask stays xgrammar's."""
    _same_walk(ebnf, choices, Vocabulary(WORD_TOKENS, stop_ids=[len(WORD_TOKENS) - 1]),
               WORD_TOKENS)


def test_masks_stay_xgrammars_when_the_deadline_automaton_starts_afresh(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The automaton starts afresh once it knows too many states or frames; its numbers and
    the masks kept by them go with it."""
    monkeypatch.setattr(deadline_automaton, "MAX_STATES", 3)
    monkeypatch.setattr(deadline_automaton, "MAX_FRAMES", 8)
    vocab = Vocabulary(WORD_TOKENS, stop_ids=[len(WORD_TOKENS) - 1])
    for seed, ebnf in enumerate(WORDS):
        _same_walk(ebnf, [seed * 37 + 11 * k for k in range(25)], vocab, WORD_TOKENS)


@settings(max_examples=40)
@given(tokens=st.lists(st.text(st.sampled_from("ab\u00e9\u4f60\""), min_size=1, max_size=6),
                       min_size=1, max_size=30, unique=True),
       reach=st.integers(-3, 7))
def test_tokens_too_short_for_a_deadline_are_found_by_their_words(tokens: list[str],
                                                                    reach: int) -> None:
    """The words of the tokens a mask must walk again with the deadlines (more code points
    than ``reach``), and the ids read back from them, are the tokens counted one by one."""
    from grammarkit.decode import char_budget
    from grammarkit.decode.token_index import token_index

    index = token_index(Vocabulary([t.encode() for t in tokens]))
    words = char_budget._longer_than(index, max(reach, -1))
    bits = np.unpackbits(words.view(np.uint8), bitorder="little")
    expected = [i for i, t in enumerate(tokens) if len(t) > reach]
    assert np.flatnonzero(bits[: len(tokens)]).tolist() == expected
    assert char_budget._set_ids(words).tolist() == expected
