"""Lark export: the exported text, run by Lark's Earley parser, accepts what xgrammar accepts."""

from __future__ import annotations

import importlib
import random
import re
import time
from pathlib import Path

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.convert.lark import to_lark
from grammarkit.convert.regex import regex_to_ast
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import parse
from grammarkit.grammar import Grammar

GRAMMARS_DIR = Path(__file__).resolve().parents[2] / "grammars"

# (name, root, EBNF text, strings worth trying besides random derivations)
GRAMMARS: list[tuple[str, str, str, tuple[str, ...]]] = [
    ("json", "root", r'''
root ::= value
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= "" | " " | "\n" [ \t]{0,20}
''', ('{"a": [1, 2.5e3, "x\\n"], "b": null}', '[1,]', '"\\u00e9"', '{"a" 1}')),
    ("arithmetic", "root", r'''
root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= number | "(" expr ")" | "-" factor
number ::= [0-9]+ ("." [0-9]+)?
''', ("1+2*(3-4)/5", "--1", "(1", "1.")),
    ("left recursion", "root", r'''
root ::= root "," item | item
item ::= [a-z]+
''', ("a,bc,d", "a,", ",a")),
    ("names", "main", r'''
main ::= a_b a-b A a .x _x x.y start root r.1
a_b ::= "1"
a-b ::= "2"
A ::= "3"
a ::= "4"
.x ::= "5"
_x ::= "6"
x.y ::= "7"
start ::= "8"
root ::= "9"
r.1 ::= "0"
unused ::= Token(1)
''', ("1234567890", "123456789")),
    ("escapes and classes", "root", r'''
root ::= "\"\\\n\t\r\f\v\0\e\u00e9😀\x01'" | [\]\-\^\[\\/&~|] | [^a-z\n] | [\x00-\U0010FFFF] | [^]
''', ("\"\\\n\t\r\f\v\0\x1bé😀\x01'", "]", "-", "^", "[", "\\", "/", "&", "~", "|", "a", "\n")),
    ("repetitions", "root", r'''
root ::= ("ab"{2,3} | [x-z]{0,2} "q"?)+ ("c"{3,})? "d"{0} ("e"{1,}){1} "end"
''', ("ababeend", "xqccceend", "ccceend", "abeend", "eeeeend")),
    ("unicode", "root", r'''
root ::= [α-ω]+ "→" [\u4e00-\u9fff]{1,3} "😀"* [^\u0000-\u007f]?
''', ("αβ→中文😀😀", "α→中é", "a→中")),
    ("macros and lookahead", "root", r'''
root ::= Regex("[a-c]+x?") "-" Regex("\\d{2}") w " " w
w ::= [a-z]+ (= [ ])
''', ("abx-12 ab cd", "ab-1 x y")),
    ("empty strings", "root", r'''
root ::= "" | "a" () "b" | ("" | "c")*
''', ("", "ab", "ccc", "a")),
]


# -- a random derivation sampler ---------------------------------------------------------------


class _TooDeep(Exception):
    pass


def derive(grammar: ast.GrammarAST, root: str, rng: random.Random) -> str | None:
    """A random string of the grammar's language, or ``None`` if no short one was found."""
    rules = grammar.rule_map()

    def go(expr: ast.Expr, depth: int) -> str:
        if depth > 40:
            raise _TooDeep
        if isinstance(expr, ast.Literal):
            return expr.value
        if isinstance(expr, ast.CharClass):
            if expr.negated:
                pool = [c for c in "aZ0 \n-é中😀" if not any(lo <= ord(c) <= hi
                                                            for lo, hi in expr.ranges)]
                return rng.choice(pool)
            low, high = rng.choice(expr.ranges)
            return chr(rng.choice([low, high, rng.randint(low, high)]))
        if isinstance(expr, ast.RuleRef):
            return go(rules[expr.name].body, depth + 1)
        if isinstance(expr, ast.Sequence):
            return "".join(go(item, depth + 1) for item in expr.items)
        if isinstance(expr, ast.Choice):
            return go(rng.choice(expr.alternatives), depth + 1)
        if isinstance(expr, ast.Repeat):
            high = expr.min + 2 if expr.max is None else min(expr.max, expr.min + 2)
            return "".join(go(expr.item, depth + 1) for _ in range(rng.randint(expr.min, high)))
        if isinstance(expr, ast.RegexMacro):
            return go(regex_to_ast(expr.pattern), depth + 1)
        raise TypeError(f"cannot derive from {type(expr).__name__}")

    for _ in range(20):
        try:
            return go(rules[root].body, 0)
        except _TooDeep:
            continue
    return None


def mutate(text: str, rng: random.Random) -> str:
    i = rng.randint(0, len(text))
    c = rng.choice('a0 ",[]{}()-+\\')
    if not text or rng.random() < 0.4:
        return text[:i] + c + text[i:]
    i = min(i, len(text) - 1)
    return text[:i] + (c if rng.random() < 0.5 else "") + text[i + 1 :]


def probe_strings(grammar: ast.GrammarAST, root: str, seed: int,
                  extra: tuple[str, ...] = ()) -> list[str]:
    rng = random.Random(seed)
    members = [s for s in (derive(grammar, root, rng) for _ in range(12)) if s is not None]
    near = [mutate(s, rng) for s in members]
    return list(dict.fromkeys([*extra, *members, *near, ""]))


def lark_accepts(text: str, strings: list[str]) -> list[bool]:
    parser = lark.Lark(text, parser="earley")
    verdicts = []
    for s in strings:
        try:
            parser.parse(s)
            verdicts.append(True)
        except lark.exceptions.LarkError:
            verdicts.append(False)
    return verdicts


def xgrammar_accepts(ebnf: str, root: str, strings: list[str]) -> list[bool]:
    xgr = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    grammar = xgr.Grammar.from_ebnf(ebnf, root_rule_name=root)
    return [_is_grammar_accept_string(grammar, s) for s in strings]


def parsed(ebnf: str, root: str) -> ast.GrammarAST:
    result = parse(ebnf, root)
    assert result.ok, [d.headline() for d in result.diagnostics]
    return result.ast


# -- differential --------------------------------------------------------------------------------


@pytest.mark.xgrammar
@pytest.mark.parametrize(("name", "root", "ebnf", "extra"), GRAMMARS, ids=[g[0] for g in GRAMMARS])
def test_exported_grammar_accepts_what_xgrammar_accepts(name: str, root: str, ebnf: str,
                                                        extra: tuple[str, ...]) -> None:
    grammar = parsed(ebnf, root)
    strings = probe_strings(grammar, root, seed=len(ebnf), extra=extra)
    ours = lark_accepts(to_lark(grammar, root), strings)
    theirs = xgrammar_accepts(ebnf, root, strings)
    assert [(s, o) for s, o, t in zip(strings, ours, theirs) if o != t] == []
    assert any(theirs) and not all(theirs), "the probe strings must tell languages apart"


@pytest.mark.xgrammar
@pytest.mark.parametrize("path", sorted(GRAMMARS_DIR.glob("*.ebnf")), ids=lambda p: p.name)
def test_curated_grammars_export(path: Path) -> None:
    ebnf = path.read_text("utf-8")
    grammar = parsed(ebnf, "root")
    try:
        exported = to_lark(grammar, "root")
    except GrammarError as exc:
        assert {d.code for d in exc.diagnostics} == {"GK140"}
        return
    strings = probe_strings(grammar, "root", seed=1)
    assert lark_accepts(exported, strings) == xgrammar_accepts(ebnf, "root", strings)


# -- the text ------------------------------------------------------------------------------------


def test_spelling() -> None:
    grammar = parsed(r'''
root ::= item ("," item){2,} | "q"{0,3} Item? | [^\]a-c/] | [^] | "\"\t\x01é"
item ::= [a-z]+ | "(" root ")"
Item ::= ("a" | "b")* ""
''', "root")
    assert to_lark(grammar, "root") == (
        'start: item ("," item) ~ 2 ("," item)* | _repeat item_2? | /[^\\]a-c\\/]/ '
        '| /(?s:.)/ | "\\"\\t\\x01é"\n'
        'item: /[a-z]/+ | "(" start ")"\n'
        'item_2: ("a" | "b")* ()\n'
        '_repeat: "q" ~ 0..3\n'
    )


def test_only_reachable_rules_are_written_and_the_root_may_have_any_name() -> None:
    grammar = parsed('main ::= "a" start\nstart ::= "b"\nunused ::= "c"\n', "main")
    assert to_lark(grammar, "main") == 'start: "a" start_2\nstart_2: "b"\n'


def test_surrogates_never_end_a_written_range() -> None:
    grammar = ast.GrammarAST((ast.Rule("root", ast.Choice((
        ast.CharClass(((0xD000, 0xD900),)),
        ast.CharClass(((0xDA00, 0xDBFF),)),
        ast.CharClass(((0xDC00, 0xE005),), negated=True),
    ))),))
    assert to_lark(grammar, "root") == (
        f"start: /[{chr(0xD000)}-\\ud7ff]/ | /[^\\x00-\\U0010ffff]/ | /[^\\ue000-\\ue005]/\n"
    )


def test_deeply_nested_expressions_are_written_without_recursion() -> None:
    expr: ast.Expr = ast.Literal("x")
    for _ in range(20_000):
        expr = ast.Repeat(ast.Choice((ast.Sequence((expr, ast.Literal("y"))), ast.Literal(""))),
                          0, 1, "?")
    start = time.process_time()
    text = to_lark(ast.GrammarAST((ast.Rule("root", expr),)), "root")
    assert text.count(")?") == 20_000 and time.process_time() - start < 10


@pytest.mark.parametrize(
    ("body", "macro"),
    [
        ("Token(1, 2)", "`Token`"),
        ("ExcludeToken(7)", "`ExcludeToken`"),
        ('TagDispatch(("<a>", r))', "`TagDispatch`"),
        ("TokenTagDispatch((5, r))", "`TokenTagDispatch`"),
        ('Substring("abc")', "`Substring`"),
        ('Regex("a+", flags="i")', "`Regex` with `flags`"),
    ],
)
def test_macros_without_a_lark_equivalent_are_named(body: str, macro: str) -> None:
    grammar = parsed(f'root ::= "x" {body}\nr ::= "r"\n', "root")
    with pytest.raises(GrammarError) as caught:
        to_lark(grammar, "root")
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.code == "GK140"
    assert diagnostic.message == f"{macro} has no Lark equivalent"
    assert diagnostic.span is not None and diagnostic.span.start == len('root ::= "x" ')
    assert diagnostic.hint


def test_undefined_rules_and_a_missing_root_are_reported() -> None:
    grammar = ast.GrammarAST((ast.Rule("root", ast.RuleRef("nowhere", ast.Span(3, 10))),))
    with pytest.raises(GrammarError) as caught:
        to_lark(grammar, "root")
    assert [(d.code, d.span) for d in caught.value.diagnostics] == [("GK103", ast.Span(3, 10))]
    with pytest.raises(GrammarError) as caught:
        to_lark(grammar, "main")
    assert [d.code for d in caught.value.diagnostics] == ["GK105"]


# -- random grammars -----------------------------------------------------------------------------


def random_grammar(rng: random.Random) -> ast.GrammarAST:
    """Three rules of random regex-like bodies; a rule may refer to the ones after it."""
    alphabet = "ab\"\\\n-]^é😀/"

    def body(depth: int, rule: int) -> ast.Expr:
        kind = rng.choice(["literal", "class", "ref"] + ["seq", "choice", "repeat"] * (depth > 0))
        if kind == "ref" and rule < 2:
            return ast.RuleRef(f"r{rng.randint(rule + 1, 2)}")
        if kind in ("literal", "ref"):
            return ast.Literal("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 2))))
        if kind == "class":
            low = ord(rng.choice(alphabet))
            return ast.CharClass(((low, low + rng.choice([0, 3])),), negated=rng.random() < 0.3)
        if kind == "repeat":
            low = rng.choice([0, 1, 2])
            return ast.Repeat(body(depth - 1, rule), low, rng.choice([None, low, low + 2]))
        parts = tuple(body(depth - 1, rule) for _ in range(rng.randint(1, 3)))
        return ast.Sequence(parts) if kind == "seq" else ast.Choice(parts)

    return ast.GrammarAST(tuple(ast.Rule(f"r{k}", body(3, k)) for k in range(3)))


def python_regex(grammar: ast.GrammarAST, expr: ast.Expr) -> str:
    """An independent recognizer for acyclic grammars: rules inlined into a Python pattern."""
    if isinstance(expr, ast.RuleRef):
        return python_regex(grammar, grammar.rule_map()[expr.name].body)
    if isinstance(expr, ast.Literal):
        return re.escape(expr.value)
    if isinstance(expr, ast.CharClass):
        body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in expr.ranges)
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, ast.Sequence):
        return "".join(f"(?:{python_regex(grammar, item)})" for item in expr.items)
    if isinstance(expr, ast.Choice):
        return "(?:" + "|".join(python_regex(grammar, a) for a in expr.alternatives) + ")"
    assert isinstance(expr, ast.Repeat)
    high = "" if expr.max is None else str(expr.max)
    return f"(?:{python_regex(grammar, expr.item)}){{{expr.min},{high}}}"


@settings(max_examples=40)
@given(st.randoms(use_true_random=False))
def test_random_grammars_export_to_equivalent_lark(rng: random.Random) -> None:
    grammar = random_grammar(rng)
    pattern = re.compile(python_regex(grammar, ast.RuleRef("r0")))
    strings = probe_strings(grammar, "r0", rng.randint(0, 10**6))
    expected = [pattern.fullmatch(s) is not None for s in strings]
    assert lark_accepts(to_lark(grammar, "r0"), strings) == expected


def test_lazy_rules_are_refused_not_dropped() -> None:
    grammar = Grammar.from_ebnf('root ::= x "!"\nx[lazy] ::= [0-9]+')
    with pytest.raises(GrammarError) as info:
        grammar.to_lark()
    assert [d.code for d in info.value.diagnostics] == ["GK140"]
