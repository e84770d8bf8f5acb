"""A rule that repeats a call a bounded number of times, or has a counted loop, is never inlined:
its callers keep a call, so every caller shares the rule's states (and the decoder its token
classes) instead of holding a copy of the repetition each."""

from __future__ import annotations

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.earley import Recognizer
from grammarkit.grammar import Grammar

CHAR = r'''char ::= [ -!#-\[\]-\ud7ff\ue000-\U0010ffff] | "\\" ["/\\bfnrt]
    | "\\u" ([0-9A-CE-Fa-ce-f] [0-9A-Fa-f]{3} | [Dd] [0-7] [0-9A-Fa-f]{2})
    | "\\u" [Dd] [8-9A-Ba-b] [0-9A-Fa-f]{2} "\\u" [Dd] [C-Fc-f] [0-9A-Fa-f]{2}'''
"""The converter's ``json-char``: too large to inline (so a repetition of it repeats a call)."""


def _calls(c: CompiledGrammar, rule: str) -> list[str]:
    return [c.rule_names[callee] for s in c.rule_states(c.rule_names.index(rule))
            for callee, _ in c.call_edges[s]]


def test_a_bounded_repetition_of_a_call_stays_a_call() -> None:
    fields = " \",\" ".join(f'"f{i}=" string' for i in range(20))
    grammar = Grammar.from_ebnf(f'root ::= {fields}\nstring ::= "\\"" char{{0,12}} "\\""\n{CHAR}')
    c = grammar.compiled
    assert _calls(c, "root") == ["string"] * 20
    assert _calls(c, "string") == ["char"] * 12
    value = ",".join(f'f{i}="{"ab" * (i % 7)}"' for i in range(20))
    assert Recognizer(c).matches(value.encode())
    assert Recognizer(c).matches(value.replace('f7=""', 'f7="' + "x" * 12 + '"').encode())
    assert not Recognizer(c).matches(value.replace('f7=""', 'f7="' + "x" * 13 + '"').encode())


def test_a_counted_loop_stays_a_call() -> None:
    c = Grammar.from_ebnf('root ::= word "," word\nword ::= [a-z]{0,300}').compiled
    assert _calls(c, "root") == ["word", "word"]
    recognizer = Recognizer(c)
    assert recognizer.matches(b"a" * 300 + b"," + b"b" * 12)
    assert not recognizer.matches(b"a" * 301 + b",b")


def test_repetitions_without_calls_and_unbounded_ones_are_still_inlined() -> None:
    grammar = Grammar.from_ebnf('root ::= hex "-" hex "-" text\nhex ::= [0-9a-f]{4}\n'
                                'text ::= char*\n' + CHAR)
    c = grammar.compiled
    assert _calls(c, "root") == ["char"]  # hex and text inlined; char is large
    assert Recognizer(c).matches(b"00ff-a0b1-x\\n")
