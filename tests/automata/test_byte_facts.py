"""Byte ranges and FOLLOW sets read off the rule bodies: never coarser than the compiled
automata's, and computed without compiling a rule."""

from __future__ import annotations

from hypothesis import given, settings

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.compiler import RuleAutomata, compile_grammar
from grammarkit.automata.nfa import NFA
from grammarkit.ebnf.parser import parse
from grammarkit.grammar import Grammar

from .test_lazy_rules import many_rules


def _boundaries(ranges: set[tuple[int, int]]) -> set[int]:
    return {lo for lo, _ in ranges} | {hi + 1 for _, hi in ranges}


def _closure(nfa: NFA, seeds: list[int], nullable: frozenset[int]) -> set[int]:
    seen, stack = set(seeds), list(seeds)
    while stack:
        s = stack.pop()
        found = list(nfa.epsilon[s]) + [t for r, t in nfa.call_edges[s] if r in nullable]
        if s in nfa.push:
            found.append(nfa.push[s][1])
        if s in nfa.step:
            found += nfa.step[s][1:]
        for t in found:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return seen


def _follow_on_automata(c: CompiledGrammar) -> list[int]:
    """FOLLOW sets computed on the compiled (inlined) NFAs of every rule: the reference."""
    nfas = [c._rules[r] for r in range(c.num_rules)]
    nullable = frozenset(r for r in range(c.num_rules) if r in c.nullable)

    def scannable(nfa: NFA, states: set[int]) -> tuple[int, set[int]]:
        bits = 0
        for s in states:
            for lo, hi, _ in nfa.byte_edges[s]:
                bits |= ((1 << (hi + 1 - lo)) - 1) << lo
        return bits, {r for s in states for r, _ in nfa.call_edges[s]}

    first = [0] * (c.num_rules + 1)
    for _ in range(c.num_rules + 1):  # a plain fixpoint: the grammars are small
        for rule, nfa in enumerate(nfas):
            assert isinstance(nfa, NFA)
            bits, called = scannable(nfa, _closure(nfa, [nfa.start], nullable))
            first[rule] = bits | first[rule]
            for other in called:
                first[rule] |= first[other]
    follow = [0] * (c.num_rules + 1)
    for _ in range(c.num_rules + 1):
        for rule, nfa in enumerate(nfas):
            assert isinstance(nfa, NFA)
            for s in range(nfa.num_states):
                for callee, target in nfa.call_edges[s]:
                    after = _closure(nfa, [target], nullable)
                    bits, called = scannable(nfa, after)
                    for other in called:
                        bits |= first[other]
                    if not after.isdisjoint(nfa.finals):
                        bits |= follow[rule]
                    follow[callee] |= bits
    return follow


@settings(max_examples=20, deadline=None)
@given(ebnf=many_rules())
def test_facts_are_never_coarser_than_the_automata(ebnf: str) -> None:
    compiled = compile_grammar(parse(ebnf).ast)
    ranges = compiled.byte_ranges()
    follow = compiled.follow_sets()
    assert compiled.build_all(10**6)
    edges = {(lo, hi) for s in range(compiled.num_states) for lo, hi, _ in compiled.byte_edges[s]}
    assert _boundaries(edges) <= _boundaries(ranges) | {0, 256}
    for rule, bits in enumerate(_follow_on_automata(compiled)):
        assert bits & ~follow[rule] == 0, compiled.rule_names[rule]


def test_follow_sets_of_a_small_grammar() -> None:
    c = Grammar.from_ebnf('root ::= "(" x ")" y\nx ::= [0-9]+ | y\ny ::= "a"* "b"?').compiled
    follow = c.follow_sets()
    names = {name: rule for rule, name in enumerate(c.rule_names)}
    assert follow[names["x"]] == 1 << ord(")")
    assert follow[names["y"]] == 1 << ord(")")  # at the end of root: nothing follows root
    assert follow[names["root"]] == follow[c.num_rules] == 0


def test_facts_compile_no_rule() -> None:
    rules = [f'r{k} ::= "item{k}" ":" r{k + 1} | [a-z]+ | r{k + 1} "!"' for k in range(3000)]
    compiled = compile_grammar(parse("\n".join(["root ::= r0", *rules, 'r3000 ::= "é"'])).ast)
    assert {(0xC3, 0xC3), (0xA9, 0xA9), (ord("a"), ord("z"))} <= compiled.byte_ranges()
    follow = compiled.follow_sets()
    assert follow[compiled.rule_names.index("r1")] == 1 << ord("!")
    assert follow[compiled.rule_names.index("r0")] == 0
    automata = compiled._rules
    assert isinstance(automata, RuleAutomata)
    assert all(nfa is None for nfa in automata._nfas)


def test_small_rules_without_calls_are_built_in_place() -> None:
    words = "\n".join(f'w{k} ::= "w{k:04d}" [0-9]*' for k in range(200))
    compiled = compile_grammar(parse("root ::= " + " | ".join(f"w{k}" for k in range(200))
                                     + "\n" + words).ast)
    automata = compiled._rules
    assert isinstance(automata, RuleAutomata)
    root = automata[compiled.root]
    assert not any(root.call_edges)
    assert sum(nfa is not None for nfa in automata._nfas) == 1  # the callees never built

