"""Rules built in part (:class:`~grammarkit.automata.construct.Deferral`): the same language.

With ``DEFER_ABOVE = 0`` every rule defers its inner choices (built when an input reaches
them) and builds its tries of literals node by node; the verdicts must be those of the rules
built whole, on random grammars of nested choices, shared prefixes, references, repetitions and
optional parts, and on the dialect-feature grammars of the differential tests.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.automata import compiler
from grammarkit.diagnostics import GrammarError
from grammarkit.grammar import Grammar
from grammarkit.strategies import from_grammar
from tests.automata.grammars import CASES

WHOLE = 10**12
"""A ``DEFER_ABOVE`` no rule reaches: every rule built completely."""

ATOMS = "abc(),"


def compiled(text: str, defer_above: int) -> Grammar:
    """``text`` parsed and compiled with ``DEFER_ABOVE = defer_above``."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiler, "DEFER_ABOVE", defer_above)
        grammar = Grammar.from_ebnf(text)
        grammar.compiled  # noqa: B018 - the rules read the threshold now
    return grammar


@st.composite
def choice_grammars(draw: st.DrawFn) -> str:
    """EBNF of 1-3 rules of nested choices whose alternatives often share leading literals,
    calling each other and two rules of literals (built in place, as a converter's
    ``char.X ::= "x" | "\\u00XX"``)."""
    count = draw(st.integers(1, 3))
    names = [f"r{i}" for i in range(count)]
    callees = [*names, "k", "l", "k"]

    def item(depth: int) -> str:
        kinds = ["literal", "literal", "class", "call"] + (["choice", "choice", "repeat"]
                                                           if depth else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "literal":
            return json.dumps(draw(st.sampled_from(["a", "ab", "abc", "b", "ba", "c", "(", ""])))
        if kind == "class":
            return draw(st.sampled_from(["[ab]", "[^(),]", "[a-c,]"]))
        if kind == "call":
            return draw(st.sampled_from(callees))
        if kind == "choice":
            return "(" + choice(depth - 1) + ")"
        suffix = draw(st.sampled_from(["*", "+", "?", "{2}", "{0,3}"]))
        return f"({choice(depth - 1)}){suffix}"

    def choice(depth: int) -> str:
        return " | ".join(" ".join(item(depth) for _ in range(draw(st.integers(1, 2))))
                          for _ in range(draw(st.integers(1, 3))))

    rules = [f"root ::= {names[0]}"]
    rules += [f"{name} ::= {choice(2)}" for name in names]
    rules += ['k ::= "a" | "ab" | "c"', 'l ::= "b"']
    return "\n".join(rules)


@settings(max_examples=50, deadline=None)
@given(source=choice_grammars(), data=st.data())
def test_random_grammars_match_alike_built_in_part_or_whole(source: str,
                                                            data: st.DataObject) -> None:
    try:
        whole = compiled(source, WHOLE)
    except GrammarError:
        return
    in_part = compiled(source, 0)
    texts = [data.draw(st.text(ATOMS, max_size=30)) for _ in range(3)]
    sentence = data.draw(from_grammar(whole, max_length=40) | st.just(""))
    texts.append(sentence)
    if sentence:
        at = data.draw(st.integers(0, len(sentence)))
        texts.append(sentence[:at] + data.draw(st.sampled_from(ATOMS)) + sentence[at:])
        texts.append(sentence[:at] + sentence[at + 1:])
    for text in texts:
        assert in_part.matches(text) == whole.matches(text), text


@pytest.mark.parametrize("case", [c for c in CASES if c.vocabulary is None],
                         ids=lambda c: c.name)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_dialect_features_match_alike_built_in_part_or_whole(case: object,
                                                             data: st.DataObject) -> None:
    ebnf, atoms = case.ebnf, case.atoms  # type: ignore[attr-defined]
    in_part, whole = compiled(ebnf, 0), compiled(ebnf, WHOLE)
    for _ in range(3):
        text = b"".join(data.draw(st.lists(st.sampled_from(atoms), max_size=24)))
        assert in_part.matches(text) == whole.matches(text), text


def test_a_long_choice_of_literals_is_a_trie_built_node_by_node() -> None:
    words = [f"w{i:05d}" for i in range(5000)] + ["w0", "w", "x\xff\xfe"]
    text = "root ::= " + " | ".join(json.dumps(w) for w in words) + "\n"
    grammar = compiled(text, compiler.DEFER_ABOVE)
    for word in ["w03117", "w0", "w", "x\xff\xfe", "w04999"]:
        assert grammar.matches(word), word
    for word in ["w5000", "w00", "", "x", "w031170", "w0311"]:
        assert not grammar.matches(word), word
    rules = grammar.compiled._rules  # the rule sources: the nodes near the inputs were built
    (nfa,) = [nfa for nfa in rules._nfas if nfa is not None]
    assert nfa.deferred and nfa.num_states < sum(map(len, words)) // 3


def test_a_deferred_part_beyond_the_memory_ceiling_is_gk121(
        monkeypatch: pytest.MonkeyPatch) -> None:
    grammar = compiled("root ::= " + " | ".join(f'"a{i}" ("b{i}" | "c{i}") "d"'
                                                 for i in range(3000)) + "\n", 0)
    monkeypatch.setattr(grammar.compiled._rules.budget, "remaining", 0)
    with pytest.raises(GrammarError) as raised:
        grammar.matches("a17b17d")
    assert [d.code for d in raised.value.diagnostics] == ["GK121"]
