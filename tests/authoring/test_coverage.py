"""Grammar coverage: derivations over the AST, and the items they mark."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from grammarkit import Grammar
from grammarkit.authoring.coverage import Coverage
from grammarkit.authoring.derivation import MAX_STEPS, DerivationTooLarge, Deriver
from grammarkit.strategies import from_grammar


def covered(ebnf: str, texts: list[str]) -> dict[str, int]:
    grammar = Grammar.from_ebnf(ebnf)
    coverage = Coverage.of(grammar.ast, grammar.root)
    assert coverage.record(grammar.ast, grammar.root, texts) == []
    return {f"{item.rule}: {item.label}": coverage.hits[item] for item in coverage.items}


def test_alternatives_repetitions_and_ranges() -> None:
    hits = covered('root ::= ("a" | "b" | [0-9x]) "!"?', ["a", "b!", "7"])
    assert hits == {
        'root: alternative 1: "a"': 1,
        'root: alternative 2: "b"': 1,
        "root: alternative 3: [0-9x]": 1,
        'root: "!"? absent': 2,
        'root: "!"? present': 1,
        "root: [0-9] of [0-9x]": 1,
        "root: [x] of [0-9x]": 0,
    }


def test_repetition_branches_count_minimum_and_more() -> None:
    hits = covered('root ::= "a"* "b"+ "c"{2,3} "d"{2}', ["bcc dd".replace(" ", ""),
                                                         "aabbccc" + "dd"])
    assert hits['root: "a"* repeated 0 times'] == 1
    assert hits['root: "a"* repeated more than 0 times'] == 1
    assert hits['root: "b"+ repeated 1 time'] == 1
    assert hits['root: "b"+ repeated more than 1 time'] == 1
    assert hits['root: "c"{2,3} repeated 2 times'] == 1
    assert hits['root: "c"{2,3} repeated more than 2 times'] == 1
    assert hits['root: "d"{2} repeated 2 times'] == 2
    assert 'root: "d"{2} repeated more than 2 times' not in hits


def test_left_recursion_and_rule_references() -> None:
    ebnf = 'root ::= expr\nexpr ::= expr "+" term | term\nterm ::= [0-9] | "(" expr ")"'
    hits = covered(ebnf, ["1+(2+3)+4"])
    assert hits['expr: alternative 1: expr "+" term'] == 3
    assert hits["expr: alternative 2: term"] == 2
    assert hits['term: alternative 2: "(" expr ")"'] == 1


def test_macros_are_matched_as_opaque_leaves() -> None:
    hits = covered('root ::= Regex("[a-c]+") ("," | ";")', ["abc,", "a;"])
    assert hits == {'root: alternative 1: ","': 1, 'root: alternative 2: ";"': 1}


def test_texts_without_derivation_are_reported() -> None:
    grammar = Grammar.from_ebnf('root ::= "a"+')
    coverage = Coverage.of(grammar.ast, grammar.root)
    assert coverage.record(grammar.ast, grammar.root, ["aa", "b"]) == ["b"]


def test_highly_ambiguous_grammars_stay_within_budget() -> None:
    grammar = Grammar.from_ebnf('root ::= root root | "a" | ""')
    deriver = Deriver(grammar.ast, grammar.root)
    assert deriver.derive("a" * 30, _Ignore())
    assert MAX_STEPS > 0


def test_too_large_derivations_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("grammarkit.authoring.derivation.MAX_STEPS", 50)
    grammar = Grammar.from_ebnf('root ::= [a-z]* ("," [a-z]*)*')
    with pytest.raises(DerivationTooLarge):
        Deriver(grammar.ast, grammar.root).derive("abc,def," * 20, _Ignore())


def test_render_and_json() -> None:
    grammar = Grammar.from_ebnf('root ::= "a" | b\nb ::= [xy]', path="g.ebnf")
    coverage = Coverage.of(grammar.ast, grammar.root)
    coverage.record(grammar.ast, grammar.root, ["a", "x"])
    assert coverage.render(grammar.source).splitlines() == [
        "rule   alternatives  repetitions  ranges  cover",
        "root            2/2            -       -   100%",
        "b                 -            -     1/2    50%",
        "TOTAL           2/2            -     1/2  75.0%",
        "",
        "Not covered:",
        "  g.ebnf:2:7: b: [y] of [xy]",
    ]
    data = coverage.to_json(grammar.source)
    assert (data["covered"], data["total"], data["percent"]) == (3, 4, 75.0)
    assert data["missed"] == [{"rule": "b", "kind": "ranges", "label": "[y] of [xy]",
                               "line": 2, "column": 7}]


JSON_LIKE = Grammar.from_ebnf(
    'root ::= value\nvalue ::= "[" (value ("," value)*)? "]" | [0-9]+ | "\\"" [a-z ]* "\\""')


@settings(max_examples=60, deadline=None)
@given(from_grammar(JSON_LIKE))
def test_every_accepted_sentence_has_a_derivation(text: str) -> None:
    assert Deriver(JSON_LIKE.ast, JSON_LIKE.root).derive(text, _Ignore())


class _Ignore:
    def alternative(self, choice: object, index: int) -> None:
        pass

    def repetition(self, repeat: object, count: int) -> None:
        pass

    def char_range(self, node: object, index: int | None) -> None:
        pass
