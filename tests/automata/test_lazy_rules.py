"""Rules compiled when first reached: the same verdicts as xgrammar and as compiling everything
first, and the blow-ups of compiling everything up front gone (structure counts, not timings)."""

from __future__ import annotations

import random

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st
from xgrammar.testing import _get_matcher_from_grammar

from grammarkit.automata.compiler import INLINE_DEPTH, RuleAutomata, compile_grammar
from grammarkit.automata.earley import Recognizer
from grammarkit.ebnf.parser import parse
from grammarkit.grammar import Grammar

ATOMS = (b"a", b"b", b"c", b"ab", b"x", b"y", b"")


def _xgrammar(ebnf: str, root: str = "root") -> xgr.GrammarMatcher:
    return _get_matcher_from_grammar(xgr.Grammar.from_ebnf(ebnf, root_rule_name=root))


def _accepts(matcher: xgr.GrammarMatcher, data: bytes) -> bool:
    matcher.reset()
    return bool(matcher.accept_string(data) and matcher.is_terminated())


@st.composite
def many_rules(draw: st.DrawFn) -> str:
    """A grammar of 20-60 rules: literals, classes, literal alternations, repetitions, and
    references in every direction (recursion, left recursion, nullable rules)."""
    count = draw(st.integers(20, 60))

    def item(rule: int) -> str:
        kind = draw(st.sampled_from(["lit", "class", "ref", "ref", "words", "repeat"]))
        if kind == "lit":
            return draw(st.sampled_from(['"a"', '"b"', '"ab"', '""', '"x"']))
        if kind == "class":
            return draw(st.sampled_from(["[a-c]", "[xy]", "[^a]"]))
        if kind == "ref":
            return f"r{draw(st.integers(0, count - 1))}"
        if kind == "words":
            return "(" + " | ".join(draw(st.lists(
                st.sampled_from(['"a"', '"ab"', '"abc"', '"b"', '"xy"', '""']),
                min_size=2, max_size=5))) + ")"
        inner = item(rule)
        return f"({inner}){draw(st.sampled_from(['?', '*', '+', '{0,2}', '{1,3}', '{2}']))}"

    lines = []
    for rule in range(count):
        alternatives = [" ".join(item(rule) for _ in range(draw(st.integers(1, 3))))
                        for _ in range(draw(st.integers(1, 3)))]
        alternatives.append(draw(st.sampled_from(['"a"', '"b"', "[xy]", '"ab"'])))
        lines.append(f"r{rule} ::= {' | '.join(alternatives)}")
    roots = " | ".join(f"r{r}" for r in draw(st.lists(st.integers(0, count - 1), min_size=1,
                                                          max_size=6)))
    return f"root ::= {roots}\n" + "\n".join(lines) + "\n"


@pytest.mark.xgrammar
@settings(max_examples=25)
@given(ebnf=many_rules(), data=st.data())
def test_lazy_verdicts_equal_eager_ones_and_xgrammar(ebnf: str, data: st.DataObject) -> None:
    texts = data.draw(st.lists(st.lists(st.sampled_from(ATOMS), max_size=6).map(b"".join),
                               min_size=8, max_size=8))
    lazy = Grammar.from_ebnf(ebnf)
    eager = compile_grammar(parse(ebnf).ast)
    assert eager.build_all(10**6)  # every rule compiled before any input
    eager_recognizer = Recognizer(eager)
    matcher = _xgrammar(ebnf)
    for text in texts:
        expected = _accepts(matcher, text)
        assert lazy.matches(text) == expected, text
        assert eager_recognizer.matches(text) == expected, text


@pytest.mark.xgrammar
@settings(max_examples=15)
@given(ebnf=many_rules(), data=st.data())
def test_nullable_rules_equal_xgrammar(ebnf: str, data: st.DataObject) -> None:
    compiled = compile_grammar(parse(ebnf).ast)
    for rule in data.draw(st.lists(st.integers(0, compiled.num_rules - 1), min_size=1,
                                   max_size=3, unique=True)):
        name = compiled.rule_names[rule]
        assert (rule in compiled.nullable) == _accepts(_xgrammar(ebnf, name), b""), name


@pytest.mark.parametrize(("body", "nullable"), [
    ('""', True), ('"a"', False), ("()", True), ('"a"{0}', True), ('("" | "a"){300}', True),
    ('("a" | "b" | ""){2,400}', True), ('Regex("a*")', True), ('Regex("a+")', False),
    ('Substring("ab", "c")', True), ('TagDispatch(("<t>", t))', True),
    ('TagDispatch(("<t>", t), loop_after_dispatch=false)', True), ("[^a]*", True),
    ("t t", False), ('n n n "" n', True), ('(n "a" | n)+', True), ("Token(1)", False),
])
def test_nullability_is_decided_on_the_rule_bodies(body: str, nullable: bool) -> None:
    compiled = compile_grammar(parse(f'root ::= x\nx ::= {body}\nt ::= "t"\nn ::= "" | "n"'
                                     ).ast)
    assert (compiled.rule_names.index("x") in compiled.nullable) == nullable


def _chain(count: int) -> str:
    body = [f'r{k} ::= "item {k}" r{k + 1} | [a-z]+' for k in range(count)]
    return "\n".join(["root ::= r0", *body, f'r{count} ::= "end"']) + "\n"


def test_a_long_chain_compiles_only_the_rules_an_input_reaches() -> None:
    compiled = compile_grammar(parse(_chain(20_000)).ast)
    assert Recognizer(compiled).matches(b"item 0item 1item 2abc")
    automata = compiled._rules
    assert isinstance(automata, RuleAutomata)
    built = sum(nfa is not None for nfa in automata._nfas)
    assert built <= 4 * INLINE_DEPTH  # of 20,002 rules
    assert compiled.num_states < 100


def test_chains_of_bare_references_inline_to_a_bounded_depth() -> None:
    rules = [f"r{k} ::= r{k + 1}" for k in range(3000)]
    compiled = compile_grammar(parse("\n".join(["root ::= r0", *rules, 'r3000 ::= "a"'])).ast)
    assert Recognizer(compiled).matches(b"a")
    assert not Recognizer(compiled).matches(b"aa")
    assert sum(compiled.rule_start._grammar._starts[r] >= 0
               for r in range(compiled.num_rules)) <= 3001 // INLINE_DEPTH + 2


def test_literal_alternatives_share_a_trie() -> None:
    words = [f"w{k:05d}" for k in range(20_000)]
    compiled = compile_grammar(parse("root ::= " + " | ".join(f'"{w}"' for w in words)).ast)
    prefixes = {w[:i] for w in words for i in range(1, len(w) + 1)}
    assert compiled._rules[compiled.root].num_states <= len(prefixes) + 3
    assert Recognizer(compiled).matches(b"w12345")
    assert not Recognizer(compiled).matches(b"w2")
    assert compiled.num_states < 500  # the states two inputs visit (and their neighbours)


def test_mixed_literal_and_other_alternatives() -> None:
    g = Grammar.from_ebnf('root ::= "ab" | [0-9]+ | "a" | x | "" | "abc"\nx ::= "x" root')
    for text, expected in [("", True), ("a", True), ("ab", True), ("abc", True), ("abcd", False),
                           ("12", True), ("xab", True), ("xx1", True), ("b", False)]:
        assert g.matches(text) == expected, text


@pytest.mark.xgrammar
def test_thousands_of_generated_rules_equal_xgrammar() -> None:
    rng = random.Random(7)
    count = 3000
    lines = ["root ::= r0 (\",\" r0)*"]
    for k in range(count):
        far = f"r{min(count, k + 1 + rng.randrange(50))}"
        lines.append([f'r{k} ::= "item{k}" ":" r{k + 1} | [a-z]+',
                      f'r{k} ::= ("a{k}" | "b{k}" | "c{k}" {far}) [0-9]{{0,3}} | "?" r{k + 1}',
                      f'r{k} ::= "[" ({far} ("," {far})*)? "]" | r{k + 1}',
                      f'r{k} ::= "(" r{k} ")" | "z{k}" r{k + 1} | {far} "!"'][k % 4])
    lines.append(f'r{count} ::= "end"')
    ebnf = "\n".join(lines) + "\n"
    grammar = Grammar.from_ebnf(ebnf)
    matcher = _xgrammar(ebnf)
    texts = [b"item0:a1,abc,item0:a17", b"item0:?[", b"item0:?[end]", b"item0:b1x", b"abc,",
             b"item0:c1" + b"?" * 3, b"item0:?(z3" + b"", b"item0:a1234"]
    for text in texts:
        assert grammar.matches(text) == _accepts(matcher, text), text


def test_a_chain_of_unions_becomes_one_choice() -> None:
    rules = [f'r{k} ::= "w{k:06d}" | r{k + 1}' for k in range(20_000)]
    compiled = compile_grammar(parse("\n".join(["root ::= r0", *rules, 'r20000 ::= "end"'])).ast)
    recognizer = Recognizer(compiled)
    assert recognizer.matches(b"w000007") and recognizer.matches(b"w019999")
    assert recognizer.matches(b"end") and not recognizer.matches(b"w0")
    automata = compiled._rules
    assert isinstance(automata, RuleAutomata)
    assert sum(nfa is not None for nfa in automata._nfas) == 2  # root, and r0: one union
    assert not any(automata[compiled.rule_names.index("r0")].call_edges)


def test_a_chain_of_optional_members_keeps_its_continuations_as_calls() -> None:
    # an object's optional properties in schema order: each continuation is called after its
    # member and is a bare alternative too; merging it would put every later member into each
    # rule's union (quadratic), and the continuation is built anyway
    n = 200
    rules = [f'after{k} ::= "," "k{k + 1}" ":" [0-9]+ after{k + 1} | after{k + 1}'
             for k in range(n)]
    text = "\n".join(['root ::= "{" "k0" ":" [0-9]+ after0 "}"', *rules, f'after{n} ::= ""'])
    g = Grammar.from_ebnf(text)
    matcher = _xgrammar(text)
    for data in [b"{k0:1,k3:4,k150:7,k200:0}", b"{k0:1}", b"{k0:1,k3:4,k2:7}",
                 b"{k0:1,k200:1,k200:1}", b"{k0:1,k201:1}"]:
        assert g.matches(data) == _accepts(matcher, data), data
    automata = g.compiled._rules
    assert isinstance(automata, RuleAutomata)
    for k in (0, 3, 150):
        body = automata.union_body(g.compiled.rule_names.index(f"after{k}"))
        assert body == g.ast.rule_map()[f"after{k}"].body  # two alternatives, nothing merged


def test_unions_through_recursion_and_lazy_rules() -> None:
    g = Grammar.from_ebnf('root ::= a\na ::= "x" | b | a "z"\nb ::= "y" | a | c\n'
                          'c[lazy] ::= [0-9]+')
    for text, expected in [("x", True), ("y", True), ("xz", True), ("yzz", True), ("1", True),
                           ("12", False), ("1z", True), ("z", False), ("", False)]:
        assert g.matches(text) == expected == _accepts(_xgrammar(g.to_ebnf()),
                                                       text.encode()), text


def test_rules_sharing_one_chain_pull_it_in_a_bounded_number_of_times() -> None:
    rules = [f'r{k} ::= "w{k}" | r{k + 1}' for k in range(1000)]
    root = "root ::= " + " ".join(f'r{k} ","' for k in range(0, 1000, 10))
    compiled = compile_grammar(parse("\n".join([root, *rules, 'r1000 ::= "end"'])).ast)
    assert Recognizer(compiled).matches(b"w0," + b"end," * 99)
    assert not Recognizer(compiled).matches(b"w0," + b"w5," * 99)
    automata = compiled._rules
    assert isinstance(automata, RuleAutomata)
    assert automata._union_budget == 0  # 3,004 bodies pulled in all, not 50,000


def _definitions_schema(count: int) -> dict[str, object]:
    """``count`` object definitions referring to each other (as Kubernetes' 600 do), the root a
    reference to the first."""
    definitions = {f"io.example.v1.Kind{i}": {"type": "object", "properties": {
        "name": {"type": "string"}, "replicas": {"type": "integer"},
        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
        "child": {"$ref": f"#/definitions/io.example.v1.Kind{(i * 7 + 1) % count}"},
        "items": {"type": "array",
                  "items": {"$ref": f"#/definitions/io.example.v1.Kind{(i * 13 + 5) % count}"}}}}
        for i in range(count)}
    return {"definitions": definitions, "$ref": "#/definitions/io.example.v1.Kind0"}


@pytest.mark.parametrize("order", ["schema", "any"])
def test_a_verdict_builds_the_rules_of_the_definitions_an_instance_reaches(order: str) -> None:
    instance = ('{"name":"web","replicas":3,"labels":{"app":"web"},'
                '"child":{"name":"x","items":[{"replicas":1}]}}')
    built = []
    for count in (30, 120):
        text = Grammar.from_json_schema(_definitions_schema(count), lenient=True,
                                        property_order=order).to_ebnf()
        grammar = Grammar.from_ebnf(text)
        assert grammar.matches(instance) == _accepts(_xgrammar(text), instance.encode()) is True
        built.append(sum(start >= 0 for start in grammar.compiled._starts))
    assert built[0] == built[1] < 60  # what the instance reaches, not the definitions' number
