"""Undeclared property names when ``oneOf`` splits an object into many variants (issue 7.4).

SchemaStore's bundleconfig.json and template.json were refused with "the grammar needs more
than 20000 rules": ``oneOf`` splits an object into one variant per way of failing the other
branches, each variant excludes its own set of declared names from its other property names,
and each such "every name but these" automaton was written out state by state (~130 rules per
variant). States accepting the same strings are now one rule across all automata. The schema
here is a minimized bundleconfig: three kinds of bundle, each declaring its own options.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit import Grammar
from grammarkit.convert.json_schema.automata import (
    DFA,
    complement,
    dfa_from_expr,
    excluded_words_dfa,
    intersect,
    minimize,
    without_words,
)
from grammarkit.convert.json_schema.shared_states import SharedStates
from grammarkit.ebnf import ast
from grammarkit.ebnf.printer import print_grammar

_OPTIONS = {
    "js": {"alphaFirstOption": {"type": "boolean"}, "alphaSecondOption": {"type": "boolean"},
           "sharedSetting": {"enum": ["x", "y"]}},
    "css": {"betaFirstOption": {"type": "boolean"}, "betaSecondOption": {"type": "boolean"},
            "sharedSetting": {"enum": ["y", "z"]}},
    "html": {"gammaFirstOption": {"type": "boolean"}, "gammaSecondOption": {"type": "boolean"},
             "gammaThirdOption": {"type": "boolean"}},
}

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"options": {"type": "object", "properties": {"on": {"type": "boolean"}}}},
    "oneOf": [
        {"properties": {"name": {"type": "string", "pattern": rf"\.{kind}$"},
                        "options": {"type": "object", "properties": options}}}
        for kind, options in _OPTIONS.items()
    ],
}


def _valid(value: Any) -> bool:
    """What ``SCHEMA`` means, written out by hand."""
    if not isinstance(value, dict):
        return False
    options = value.get("options")
    if "options" in value and not (isinstance(options, dict) and (
            "on" not in options or isinstance(options["on"], bool))):
        return False

    def branch(kind: str) -> bool:
        name = value.get("name", ".")
        if "name" in value and not (isinstance(name, str) and name.endswith(f".{kind}")):
            return False
        if "options" not in value:
            return True
        assert isinstance(options, dict)
        for prop, schema in _OPTIONS[kind].items():
            if prop in options:
                allowed = schema.get("enum")
                if allowed is None and not isinstance(options[prop], bool):
                    return False
                if allowed is not None and options[prop] not in allowed:
                    return False
        return True

    return sum(branch(kind) for kind in _OPTIONS) == 1


_NAMES = [None, '"a.js"', '"a.css"', '"a.html"', '"a.txt"', "3"]
_OPTION_TEXTS = [
    None, "{}", '{"alphaFirstOption": true}', '{"betaFirstOption": false}',
    '{"gammaThirdOption": true, "on": false}', '{"sharedSetting": "y"}', '{"sharedSetting": "x"}',
    '{"alphaFirstOption": 1}', '{"betaSecondOption": "no"}', '{"other": 1}',
    '{"alphaFirstOption": true, "betaFirstOption": 1}', '{"on": true, "gammaFirstOption": 2}',
    '{"alphaFirstOptio": 1}', '{"alphaFirstOptionX": 1}', '{"\\u0061lphaFirstOption": 3}',
    '{"alpha\\u0046irstOption": false, "gammaSecondOption": 0}', '{"sharedSetting": "z"}',
    '{"on": 1}', "[]",
]


def _instances() -> list[str]:
    texts = []
    for name, options in itertools.product(_NAMES, _OPTION_TEXTS):
        members = [f'"name": {name}'] * (name is not None)
        members += [f'"options": {options}'] * (options is not None)
        texts.append("{" + ", ".join(members) + "}")
    return texts


def _rule_count(grammar: Grammar) -> int:
    return len(re.findall(r"^\S+ ::=", str(grammar), re.MULTILINE))


@pytest.fixture(scope="module")
def grammar() -> Grammar:
    # In any order, so that the verdicts don't depend on the order the variants declare.
    return Grammar.from_json_schema(SCHEMA, lenient=True, property_order="any")


def test_variants_share_their_name_automata(grammar: Grammar) -> None:
    # Every variant of "options" (26 here) had its own ~60-rule automaton: 1,873 rules and
    # 300 KB in all (now 480 and 135 KB).
    assert grammar.warnings == ()
    assert _rule_count(grammar) < 700
    assert len(str(grammar)) < 160_000


@pytest.mark.parametrize("text", _instances())
def test_the_language_is_the_schema(grammar: Grammar, text: str) -> None:
    assert grammar.matches(text) == _valid(json.loads(text)), text


def _language(start: ast.Expr, rules: list[ast.Rule]) -> Grammar:
    return Grammar.from_ebnf(print_grammar(ast.GrammarAST((ast.Rule("root", start), *rules))))


def test_states_accepting_the_same_strings_are_one_rule() -> None:
    rules: list[ast.Rule] = []
    taken: set[str] = set()

    def fresh(base: str) -> str:
        name = next(f"{base}{i}" for i in itertools.count() if f"{base}{i}" not in taken)
        taken.add(name)
        return name

    shared = SharedStates(fresh, lambda: fresh("s."),
                          lambda added: rules.extend(rule for rule, _ in added))
    lowercase = dfa_from_expr(ast.Repeat(ast.CharClass(((97, 122),)), 1, None, "+"))

    def spell(ranges: tuple[tuple[int, int], ...]) -> ast.Expr:
        return ast.CharClass(ranges)

    words = [["alphaone", "betatwo"], ["alphaone", "gammathree"], ["betatwo", "gammathree"]]
    starts = [shared.expr(intersect(lowercase, excluded_words_dfa(w)), "k", spell)
              for w in words]
    alone = intersect(lowercase, excluded_words_dfa(words[0])).size
    assert len(rules) < 2 * alone  # written apart, the three would need 3 * alone - 2
    assert shared.expr(intersect(lowercase, excluded_words_dfa(words[1])), "k", spell) == starts[1]
    for start, excluded in zip(starts, words, strict=True):
        language = _language(start, rules)
        for word in ["alphaone", "betatwo", "gammathree", "alphaon", "betatwox", "zeta", "a"]:
            assert language.matches(word) == (word not in excluded), (excluded, word)
        assert not language.matches("") and not language.matches("Alpha")



def test_states_that_accept_nothing_get_no_rule() -> None:
    """A product's states from which no string is accepted are left out, and every rule
    written is reported with the rules it refers to (pruning takes them without walking)."""
    added: list[tuple[ast.Rule, tuple[str, ...]]] = []
    names = iter(f"s.{i}" for i in itertools.count(1))
    shared = SharedStates(lambda base: base, lambda: next(names), added.extend)
    # "a" then digits, or "b" then a state that loops forever without accepting.
    dead_end = DFA(0, frozenset({1}), (
        ((((97, 97),), 1), (((98, 98),), 2)),
        ((((48, 57),), 1),),
        ((((0, 0x10FFFF),), 2),),
    ))
    start = shared.expr(dead_end, "k", lambda ranges: ast.CharClass(ranges))
    rules = [rule for rule, _ in added]
    assert [rule.name for rule in rules] == ["k", "s.1"]
    for rule, references in added:
        assert set(references) == {node.name for node in ast.walk(rule.body)
                                   if isinstance(node, ast.RuleRef)}
    language = _language(start, rules)
    assert language.matches("a") and language.matches("a42")
    assert not language.matches("b") and not language.matches("b1") and not language.matches("")



_PATTERNS = ["[a-c]+", "a[ab]*c?", "(ab|ba)*", "[^b]*", "b*", "(a|bc)+|c", "[a-c]{0,3}"]


def _strings_up_to(length: int) -> list[str]:
    return ["".join(chars) for n in range(length + 1)
            for chars in itertools.product("abcx", repeat=n)]


@settings(max_examples=80, deadline=None)
@given(pattern=st.sampled_from(_PATTERNS), negated=st.booleans(),
       words=st.lists(st.text(alphabet="abcx", max_size=5), max_size=6))
def test_a_language_without_words_is_the_minimal_product(pattern: str, negated: bool,
                                                           words: list[str]) -> None:
    """clang-format-21.x, claude-code-settings: "not `^x-`, nor one of 192 declared names"
    was a 2,000-state product then minimized (0.16 s); it is now built from the words' trie
    over the pattern's automaton, the same minimal automaton."""
    language = minimize(dfa_from_expr(Grammar.from_regex(pattern).ast.rules[0].body))
    if negated:
        language = complement(language)
    fast = without_words(language, words)
    product = intersect(language, excluded_words_dfa(words))
    assert fast.size == product.size
    for text in _strings_up_to(4):
        assert fast.accepts(text) == product.accepts(text) == (
            language.accepts(text) and text not in words), text


# -- oneOf branches told apart by a constant (template.json's postActions) ------------------------
_ACTIONS = {
    "copy": {"source": {"type": "string"}, "overwrite": {"type": "boolean"}},
    "run": {"executable": {"type": "string"}, "arguments": {"type": "string"},
            "redirect": {"type": "boolean"}},
    "reference": {"referenceType": {"enum": ["project", "package"]},
                  "reference": {"type": "string"}},
    "restore": {"files": {"type": "array", "items": {"type": "string"}}},
}

ACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["action"],
    "properties": {"action": {"type": "string"}, "args": {"type": "object"}},
    "oneOf": [{"properties": {"action": {"const": action}, "args": {"properties": args}}}
              for action, args in _ACTIONS.items()],
}


def _action_valid(value: Any) -> bool:
    """What ``ACTION_SCHEMA`` means: the constants differ, so one branch at most holds."""
    if not isinstance(value, dict) or value.get("action") not in _ACTIONS:
        return False
    if "args" not in value:
        return True
    args = value["args"]
    if not isinstance(args, dict):
        return False
    for name, schema in _ACTIONS[value["action"]].items():
        if name not in args:
            continue
        found = args[name]
        if "enum" in schema:
            if found not in schema["enum"]:
                return False
        elif not isinstance(found, {"string": str, "boolean": bool, "array": list}[
                schema["type"]]) or (schema["type"] == "array" and not all(
                    isinstance(item, str) for item in found)):
            return False
    return True


_ARGS = [None, "{}", '{"source": "a", "overwrite": true}', '{"source": 1}', '{"overwrite": "x"}',
         '{"executable": "sh", "redirect": false}', '{"redirect": 1}', '{"reference": "x"}',
         '{"referenceType": "project"}', '{"referenceType": "other"}', '{"files": ["a"]}',
         '{"files": [1]}', '{"unknown": 1}', '{"executable": 2, "source": 2}', "[]"]


@pytest.fixture(scope="module")
def action_grammar() -> Grammar:
    return Grammar.from_json_schema(ACTION_SCHEMA, lenient=True, property_order="any")


def test_branches_failing_by_their_constant_are_not_split_further(
        action_grammar: Grammar) -> None:
    # Each branch was also written once per way of failing every other branch's "args" (as
    # well as by its constant): 1,051 rules, 220 KB (now 129 and 20 KB); those variants allow
    # nothing more.
    assert action_grammar.warnings == ()
    assert _rule_count(action_grammar) < 300
    assert len(str(action_grammar)) < 60_000


@pytest.mark.parametrize("action", [*_ACTIONS, "other"])
def test_the_language_is_the_action_schema(action_grammar: Grammar, action: str) -> None:
    for args in _ARGS:
        text = f'{{"action": "{action}"' + (f', "args": {args}}}' if args else "}")
        assert action_grammar.matches(text) == _action_valid(json.loads(text)), text
    assert not action_grammar.matches('{"args": {}}')
