"""Byte ranges and FOLLOW sets read off the rule bodies: never coarser than the compiled
automata's, and computed without compiling a rule."""

from __future__ import annotations

import functools
import operator
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.compiler import RuleAutomata, compile_grammar
from grammarkit.automata.nfa import NFA
from grammarkit.ebnf import ast
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




def _follow_on_bodies(c: CompiledGrammar, grammar: ast.GrammarAST) -> list[int]:
    """FOLLOW sets of every rule by a plain fixpoint over all rule bodies at once: the eager
    textbook computation the on-demand one must agree with (for ``many_rules`` grammars:
    ASCII literals and classes, references, sequences, choices, repetitions)."""
    rules = {name: rule for rule, name in enumerate(c.rule_names)}
    bodies = {rule.name: rule.body for rule in grammar.rules}
    lead_bytes = ((1 << (0xF4 + 1 - 0xC2)) - 1) << 0xC2  # first bytes of non-ASCII characters

    def first(expr: ast.Expr, firsts: list[int]) -> tuple[int, bool]:
        if isinstance(expr, ast.Literal):
            return (1 << ord(expr.value[0]), False) if expr.value else (0, True)
        if isinstance(expr, ast.CharClass):
            bits = sum((any(lo <= b <= hi for lo, hi in expr.ranges) != expr.negated) << b
                       for b in range(128))
            return bits | (lead_bytes if expr.negated else 0), False
        if isinstance(expr, ast.RuleRef):
            return firsts[rules[expr.name]], rules[expr.name] in c.nullable
        if isinstance(expr, ast.Repeat):
            bits, empty = first(expr.item, firsts)
            return bits, empty or expr.min == 0
        if isinstance(expr, ast.Choice):
            parts = [first(a, firsts) for a in expr.alternatives]
            return functools.reduce(operator.or_, (p[0] for p in parts), 0), any(
                p[1] for p in parts)
        assert isinstance(expr, ast.Sequence)
        bits = 0
        for item in expr.items:
            item_bits, empty = first(item, firsts)
            bits |= item_bits
            if not empty:
                return bits, False
        return bits, True

    def visit(expr: ast.Expr, after: int, ends: bool, rule: int, firsts: list[int],
              follow: list[int]) -> None:
        if isinstance(expr, ast.RuleRef):
            follow[rules[expr.name]] |= after | (follow[rule] if ends else 0)
        elif isinstance(expr, ast.Repeat):
            again = first(expr.item, firsts)[0] if expr.max is None or expr.max >= 2 else 0
            visit(expr.item, after | again, ends, rule, firsts, follow)
        elif isinstance(expr, ast.Choice):
            for alternative in expr.alternatives:
                visit(alternative, after, ends, rule, firsts, follow)
        elif isinstance(expr, ast.Sequence):
            for i, item in enumerate(expr.items):
                bits, empty = first(ast.Sequence(expr.items[i + 1:]), firsts)
                visit(item, bits | (after if empty else 0), ends and empty, rule, firsts,
                      follow)

    firsts = [0] * (c.num_rules + 1)
    for _ in range(c.num_rules + 1):
        firsts = [first(bodies[name], firsts)[0] for name in c.rule_names] + [0]
    follow = [0] * (c.num_rules + 1)
    for _ in range(c.num_rules + 1):
        for name in c.rule_names:
            visit(bodies[name], 0, True, rules[name], firsts, follow)
    return follow


@settings(max_examples=30, deadline=None)
@given(ebnf=many_rules(), order=st.randoms(use_true_random=False))
def test_follow_sets_solved_on_demand_equal_the_whole_grammar_fixpoint(
        ebnf: str, order: random.Random) -> None:
    grammar = parse(ebnf).ast
    compiled = compile_grammar(grammar)
    expected = _follow_on_bodies(compiled, grammar)
    rules = list(range(compiled.num_rules + 1))
    order.shuffle(rules)  # sets solved in any order: each is complete when first read
    follow = compiled.follow_sets()
    assert {rule: follow[rule] for rule in rules} == dict(enumerate(expected))
