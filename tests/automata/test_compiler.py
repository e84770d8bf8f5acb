"""The compiled form: rule automata, their tables, and compile-time errors."""

from __future__ import annotations

import numpy as np
import pytest

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.compiler import Nullability, compile_grammar
from grammarkit.automata.earley import Recognizer
from grammarkit.automata.nfa import TokenEdge
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import parse
from grammarkit.grammar import Grammar


def compiled(source: str, root: str = "root") -> CompiledGrammar:
    return Grammar.from_ebnf(source, root=root).compiled


def test_literal_is_a_byte_chain() -> None:
    c = compiled('root ::= "aé"')
    assert c.rule_names == ("root",)
    table = c.byte_table()
    assert table.shape == (c.num_states, 256) and table.dtype == np.int32
    state = c.rule_start[c.root]
    for byte in "aé".encode():
        state = int(table[state, byte])
        assert state >= 0
    assert state in c.finals
    assert (table[state] == -1).all()


def test_small_rules_are_inlined_and_unused_rules_never_compiled() -> None:
    c = compiled('root ::= digit+ "." digit+\ndigit ::= [0-9]\nunused ::= "x"')
    assert c.rule_names == ("root", "digit", "unused")  # a parsed grammar: every rule numbered
    assert not any(c.call_edges[s] for s in c.rule_states(c.root))
    assert Recognizer(c).matches(b"12.5")
    assert set(c.state_rule) == {c.root, c.num_rules}  # `digit` never compiled on its own


def test_unchecked_rules_number_the_reachable_rules_only() -> None:
    grammar = parse('root ::= digit+\ndigit ::= [0-9]\nunused ::= "x" undefined').ast
    c = compile_grammar(grammar)  # references not checked: the reachable ones are sought
    assert c.rule_names == ("root", "digit")
    assert Recognizer(c).matches(b"12")
    with pytest.raises(GrammarError) as caught:
        compile_grammar(grammar, root="unused")
    assert [d.code for d in caught.value.diagnostics] == ["GK103"]


def test_recursive_rules_stay_calls() -> None:
    c = compiled('root ::= "(" root ")" | "x"')
    calls = [edge for s in c.rule_states(c.root) for edge in c.call_edges[s]]
    assert calls and all(rule == c.root for rule, _ in calls)


def test_entry_pseudo_rule() -> None:
    c = compiled('root ::= "a"')
    assert c.call_edges[c.entry_state] == ((c.root, c.accept_state),)
    assert c.accept_state in c.finals
    assert c.state_rule[c.entry_state] == c.state_rule[c.accept_state] == c.num_rules


def test_nullable_rules() -> None:
    c = compiled('root ::= x x "a" y\nx ::= "" | "b" x | x "c"\ny ::= "d" y | "e"')
    names = dict(zip(c.rule_names, range(c.num_rules), strict=True))
    assert names["x"] in c.nullable and names["root"] not in c.nullable


def test_nullability_is_decided_for_the_rules_asked_only() -> None:
    chain = [f'r{k} ::= r{k + 1} "x"? | "a" r{k + 1}' for k in range(5000)]
    c = compile_grammar(parse("\n".join(
        ["root ::= r0 | loop", *chain, 'r5000 ::= "" | "b"', 'loop ::= loop "y" | other',
         'other ::= loop | "z"'])).ast)
    names = dict(zip(c.rule_names, range(c.num_rules), strict=True))
    nullable = c.nullable
    assert isinstance(nullable, Nullability)
    assert names["r4000"] in nullable  # its chain decided at once, without recursion
    assert nullable._known.count(None) > 4000  # r0..r3999, root, loop, other: not asked yet
    assert names["loop"] not in nullable and names["other"] not in nullable  # least fixpoint
    assert sorted(nullable) == sorted(set(range(c.num_rules)) - {names["loop"], names["other"]})


def test_a_sequence_led_by_a_solid_rule_is_decided_without_its_rest() -> None:
    """A 20,000-word enum spells each word with ``char.X`` rules; a word starting with one
    cannot be empty, whatever follows (its rest is never summarized)."""
    c = compile_grammar(parse(
        'root ::= char.a (r1 r2 | r3) | char.b r1\nchar.a ::= "a" | "\\u0061"\n'
        'char.b ::= [b]\nr1 ::= "" | r2\nr2 ::= r1 "x" | ""\nr3 ::= r3 "y" | ""').ast)
    names = dict(zip(c.rule_names, range(c.num_rules), strict=True))
    nullable = c.nullable
    assert isinstance(nullable, Nullability)
    assert names["root"] not in nullable
    assert [nullable._known[names[n]] for n in ("r1", "r2", "r3")] == [None] * 3
    assert {names[n] for n in ("r1", "r2", "r3")} <= set(nullable)


def test_dfa_is_minimal_for_redundant_alternatives() -> None:
    c = compiled('root ::= "ab" | "ab" | ("a" "b") | "a" [b]')
    assert len(c.rule_states(c.root)) == 3


def test_token_edges_are_kept_for_the_decoder() -> None:
    c = compiled('root ::= "a" Token(5, 3) | ExcludeToken(1)')
    tokens = {edge for s in c.rule_states(c.root) for edge, _ in c.token_edges[s]}
    assert tokens == {TokenEdge((3, 5)), TokenEdge((1,), exclude=True)}
    assert "Token(3, 5)" in c.format()


def test_format_lists_every_rule() -> None:
    text = compiled('root ::= "(" root ")" | [a-c]').format()
    assert text.startswith("root:")
    assert "root->" in text and "start" in text and "final" in text and "[a-c]" in text


def test_automata_are_built_as_inputs_reach_them() -> None:
    c = compiled('root ::= [ab]* "a" [ab]{20}')  # its DFA has 2**21 states
    assert c.num_states == 2
    assert Recognizer(c).matches(b"ab" * 50 + b"a" + b"b" * 20)
    assert c.num_states < 1000


def test_undefined_root_and_reference() -> None:
    rules = ast.GrammarAST((ast.Rule("root", ast.RuleRef("missing", ast.Span(9, 16))),))
    with pytest.raises(GrammarError) as caught:
        compile_grammar(rules, "root")
    assert caught.value.diagnostics[0].code == "GK103"
    assert caught.value.diagnostics[0].span == ast.Span(9, 16)
    with pytest.raises(GrammarError) as caught:
        compile_grammar(rules, "start")
    assert caught.value.diagnostics[0].code == "GK105"


def test_recursive_lazy_rule_is_an_error() -> None:
    with pytest.raises(GrammarError) as caught:
        compiled('root ::= x\nx[lazy] ::= "a" x | "b"')
    diagnostic = caught.value.diagnostics[0]
    assert diagnostic.code == "GK121" and "lazy rule `x`" in diagnostic.message


def test_unsupported_regex_flag() -> None:
    with pytest.raises(GrammarError) as caught:
        compiled('root ::= Regex("a", flags="m")')
    assert caught.value.diagnostics[0].code == "GK112"
    assert "`m`" in caught.value.diagnostics[0].message


def test_a_parsed_grammar_walks_no_rule_body_for_a_verdict(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from grammarkit.automata import compiler

    def walked(*_: object) -> None:
        raise AssertionError("a rule body was walked up front")

    monkeypatch.setattr(compiler, "_walk_bodies", walked)
    chain = "\n".join(f'r{i} ::= "w{i}" [0-9]* | r{i + 1}' for i in range(2000))
    grammar = Grammar.from_ebnf(f'root ::= r0\n{chain}\nr2000 ::= "end"\nunused ::= Regex("x+")')
    assert grammar.matches("w1999") and grammar.matches("end") and not grammar.matches("w12x")
    assert grammar.compiled.num_rules == 2003  # every rule numbered, in definition order


def test_unreached_lazy_rules_are_not_flattened_as_before() -> None:
    # a grammar with rule attributes is walked from the root up front, as before: an
    # unreachable lazy rule that cannot be flattened is not reported
    grammar = Grammar.from_ebnf('root ::= "a"\nbad[lazy] ::= "x" bad | "y"')
    assert grammar.matches("a")
    assert grammar.compiled.rule_names == ("root",)
    with pytest.raises(GrammarError) as caught:
        Grammar.from_ebnf('root ::= "a" bad\nbad[lazy] ::= "x" bad | "y"').matches("ay")
    assert [d.code for d in caught.value.diagnostics] == ["GK121"]
