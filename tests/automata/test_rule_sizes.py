"""``surely_exceeds``: a lower bound on a rule's NFA size, read off its tree without building it.

The compiler asks it before constructing a callee only to learn whether the callee is small
enough to inline; a bound that overstated would change which rules are inlined. On random
expressions (tries, nested choices, repetitions, classes, references, empty groups) it never
claims more states than :func:`build_expression` builds.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.automata.construct import build_expression, surely_exceeds
from grammarkit.automata.nfa import NFA, Budget
from grammarkit.automata.regex_macro import expand_regex
from grammarkit.ebnf import ast

_LEAVES = st.one_of(
    st.sampled_from(["", "a", "ab", "abc", "é", "中文", "\U0001f600"]).map(ast.Literal),
    st.sampled_from([((97, 122),), ((0, 0x10FFFF),), ((0x80, 0x7FF), (0x4E00, 0x9FFF))])
    .flatmap(lambda ranges: st.booleans().map(lambda negated: ast.CharClass(ranges, negated))),
    st.just(ast.RuleRef("other")),
    st.just(ast.TokenSet((1, 2))),
    st.just(ast.Sequence(())),
    st.just(ast.Choice(())),
)


def _expressions() -> st.SearchStrategy[ast.Expr]:
    return st.recursive(_LEAVES, lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=5).map(lambda items: ast.Sequence(tuple(items))),
        st.lists(inner, min_size=1, max_size=6).map(lambda alts: ast.Choice(tuple(alts))),
        st.tuples(inner, st.sampled_from([(0, 1), (0, None), (1, None), (0, 0), (2, 4), (3, 3)]))
        .map(lambda pair: ast.Repeat(pair[0], *pair[1])),
    ), max_leaves=24)


def _built_states(expr: ast.Expr, inline: bool) -> int:
    nfa = NFA(Budget(10**6))
    leaf = ast.Sequence((ast.Literal("x"), ast.CharClass(((48, 57),))))
    build_expression(nfa, expr, {"other": 0}, expand_regex,
                     inline=(lambda _name: leaf) if inline else None)
    return nfa.num_states


@settings(max_examples=300, deadline=None)
@given(_expressions(), st.booleans())
def test_never_claims_more_states_than_are_built(expr: ast.Expr, inline: bool) -> None:
    assert not surely_exceeds(expr, _built_states(expr, inline))


def test_counts_a_union_of_alternatives_that_begin_with_references() -> None:
    """The shape of JSON Schema's ``after-X`` rules: many alternatives, each small."""
    alternative = ast.Sequence((ast.RuleRef("other"), ast.Literal(","), ast.RuleRef("other")))
    union = ast.Choice((alternative,) * 40)
    assert surely_exceeds(union, 64)
    assert _built_states(union, inline=False) > 64
    assert not surely_exceeds(ast.Choice((alternative,) * 3), 64)


def test_counts_a_class_by_its_byte_sequences() -> None:
    # a JSON string character other than a few letters: ``[ -!#-\[\]-oq-su-\ud7ff\ue000-...]``
    wide = ast.CharClass(((0x20, 0x21), (0x23, 0x5B), (0x5D, 0x6F), (0x71, 0x73),
                          (0x75, 0xD7FF), (0xE000, 0x10FFFF)))
    built = _built_states(wide, inline=False)
    assert surely_exceeds(wide, built - 1) and not surely_exceeds(wide, built)  # exact


def test_literal_alternatives_sharing_a_trie_count_once() -> None:
    words = ast.Choice(tuple(ast.Literal(w) for w in ("abcdef", "abcdeg", "abcdeh")))
    built = _built_states(words, inline=False)
    assert not surely_exceeds(words, built)
