"""GBNF (llama.cpp): writing, reading, round trips, and xgrammar as the reference language."""

from __future__ import annotations

import importlib
import random
import time
from pathlib import Path

import lark
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.codepoints import MAX_CODEPOINT, merge
from grammarkit.convert.gbnf import from_gbnf, to_gbnf
from grammarkit.convert.lark import to_lark
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import parse
from grammarkit.grammar import Grammar
from grammarkit.sample import sample


def parsed(ebnf: str, root: str = "root") -> ast.GrammarAST:
    result = parse(ebnf, root)
    assert result.ok, [d.headline() for d in result.diagnostics]
    return result.ast


def lark_accepts(grammar: ast.GrammarAST, root: str, strings: list[str]) -> list[bool]:
    """Acceptance by Lark's Earley parser of the grammar's Lark export (tested on its own)."""
    parser = lark.Lark(to_lark(grammar, root), parser="earley")
    verdicts = []
    for s in strings:
        try:
            parser.parse(s)
            verdicts.append(True)
        except lark.exceptions.LarkError:
            verdicts.append(False)
    return verdicts


def xgrammar_accepts(ebnf: str, strings: list[str]) -> list[bool]:
    xgr = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    grammar = xgr.Grammar.from_ebnf(ebnf)
    return [_is_grammar_accept_string(grammar, s) for s in strings]


def near_misses(strings: tuple[str, ...]) -> list[str]:
    """The strings, and each with its last character dropped or doubled."""
    result = list(strings)
    for s in strings:
        result += [s[:-1], s + s[-1:]]
    return list(dict.fromkeys(result))


# -- writing -------------------------------------------------------------------------------------


def test_spelling() -> None:
    grammar = parsed(r'''
root ::= item ("," item){2,} | "q"{0,3} a_b? | [^\]a-c-] | [\^x] | [^] | "\"\\\t\x01é\u2028"
item ::= [a-z]+ | "(" root ")" | ("x" | "y")* "" | (("z"){1})?
a_b ::= Token(1, 2) ExcludeToken(3) | [\x00-\U0010FFFF] | Regex("[0-9]{2}")
''')
    assert to_gbnf(grammar, "root") == (
        'root ::= item ("," item){2,} | "q"{0,3} a-b? | [^\\]a-c\\-] | [\\x5Ex] | . '
        '| "\\"\\\\\\t\\x01é\\u2028"\n'
        'item ::= [a-z]+ | "(" root ")" | ("x" | "y")* "" | ("z"{1})?\n'
        'a-b ::= (<[1]> | <[2]>) !<[3]> | . | [0-9]{2}\n'
    )


def test_names_are_made_valid_and_unique() -> None:
    grammar = parsed('main ::= a_b a-b a.b root\na_b ::= "1"\na-b ::= "2"\na.b ::= "3"\n'
                     'root ::= "4"\n', "main")
    assert to_gbnf(grammar, "main").splitlines() == [
        "root ::= a-b a-b-2 a-b-3 root-2",
        'a-b ::= "1"',
        'a-b-2 ::= "2"',
        'a-b-3 ::= "3"',
        'root-2 ::= "4"',
    ]


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        ("ExcludeToken(1, 2)", "GK140", "`ExcludeToken` of several tokens has no GBNF equivalent"),
        ('TagDispatch(("<a>", r))', "GK140", "`TagDispatch` has no GBNF equivalent"),
        ("TokenTagDispatch((5, r))", "GK140", "`TokenTagDispatch` has no GBNF equivalent"),
        ('Substring("abc")', "GK140", "`Substring` has no GBNF equivalent"),
        ('Regex("a", json_string=true)', "GK140",
         "`Regex` with `json_string` has no GBNF equivalent"),
        ('"a"{2001}', "GK142", "llama.cpp rejects repetition counts above 2000"),
        ('"a"{0,5000}', "GK142", "llama.cpp rejects repetition counts above 2000"),
    ],
)
def test_what_gbnf_cannot_express_is_reported(body: str, code: str, message: str) -> None:
    grammar = parsed(f'root ::= "x" {body}\nr ::= "r"\n')
    with pytest.raises(GrammarError) as caught:
        to_gbnf(grammar, "root")
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.code, diagnostic.message) == (code, message)
    assert diagnostic.span is not None and diagnostic.span.start == len('root ::= "x" ')
    assert diagnostic.hint


def test_surrogates_never_end_a_written_range() -> None:
    grammar = ast.GrammarAST((ast.Rule("root", ast.Choice((
        ast.CharClass(((0xD000, 0xD900),)),
        ast.CharClass(((0xDA00, 0xDBFF),)),
        ast.CharClass(((0xDC00, 0xE005),), negated=True),
    ))),))
    assert to_gbnf(grammar, "root") == (
        f"root ::= [{chr(0xD000)}-\\uD7FF] | [^\\x00-\\U0010FFFF] | [^\\uE000-\\uE005]\n"
    )


def test_surrogates_may_bound_a_class_but_not_appear_in_a_literal() -> None:
    grammar = from_gbnf("root ::= [\\uD800-\\uDFFF]\n")
    assert grammar.rules[0].body == ast.CharClass(((0xD800, 0xDFFF),))
    with pytest.raises(GrammarError, match="not a Unicode scalar value"):
        from_gbnf('root ::= "\\uD800"\n')


def test_deep_expressions_are_written_without_recursion() -> None:
    expr: ast.Expr = ast.Literal("x")
    for _ in range(20_000):
        expr = ast.Choice((ast.Sequence((ast.Literal("a"), expr)), ast.Literal("b")))
    start = time.process_time()
    text = to_gbnf(ast.GrammarAST((ast.Rule("root", expr),)), "root")
    assert text.count("(") == 19_999 and time.process_time() - start < 10


def test_one_part_groups_are_unwrapped_however_deep() -> None:
    expr: ast.Expr = ast.Literal("x")
    for _ in range(100_000):
        expr = ast.Sequence((ast.Choice((expr,)),))
    grammar = ast.GrammarAST((ast.Rule("root", ast.Choice((expr, ast.Sequence(())))),))
    assert to_gbnf(grammar, "root") == 'root ::= "x" | ""\n'
    assert to_lark(grammar, "root") == 'start: "x" | ()\n'


# -- round trips -----------------------------------------------------------------------------


def normalized(expr: ast.Expr) -> ast.Expr:
    """``expr`` with what GBNF can't tell apart made equal: spelling of quantifiers, order of
    class ranges, nested sequences, one-element groups, classes of all or no characters."""
    if isinstance(expr, ast.CharClass):
        ranges = merge(list(expr.ranges))
        if not ranges:
            return ast.CharClass(((0, MAX_CODEPOINT),), negated=not expr.negated)
        return ast.CharClass(ranges, expr.negated)
    if isinstance(expr, ast.Sequence):
        items: list[ast.Expr] = []
        for item in map(normalized, expr.items):
            items.extend(item.items if isinstance(item, ast.Sequence) else (item,))
        return items[0] if len(items) == 1 else ast.Sequence(tuple(items))
    if isinstance(expr, ast.Choice):
        alternatives = tuple(normalized(a) for a in expr.alternatives)
        return alternatives[0] if len(alternatives) == 1 else ast.Choice(alternatives)
    if isinstance(expr, ast.Repeat):
        return ast.Repeat(normalized(expr.item), expr.min, expr.max, "")
    return expr


def random_grammar(rng: random.Random) -> ast.GrammarAST:
    """Three rules with random bodies, references included (recursion too)."""
    alphabet = "ab\"\\\n-]^[é😀\x01\u2028"

    def body(depth: int) -> ast.Expr:
        kind = rng.choice(["literal", "class", "ref", "token"]
                          + ["seq", "choice", "repeat"] * (depth > 0) * 2)
        if kind == "ref":
            return ast.RuleRef(f"r{rng.randint(0, 2)}")
        if kind == "token":
            return ast.TokenSet((rng.randint(0, 99),), exclude=rng.random() < 0.5)
        if kind == "literal":
            return ast.Literal("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 3))))
        if kind == "class":
            ranges = tuple((lo, lo + rng.choice([0, 2])) for lo in
                           sorted({ord(rng.choice(alphabet)) for _ in range(rng.randint(0, 3))}))
            return ast.CharClass(merge(list(ranges)), negated=rng.random() < 0.3)
        if kind == "repeat":
            low = rng.choice([0, 1, 2, 7])
            return ast.Repeat(body(depth - 1), low, rng.choice([None, low, low + 1, 2000]))
        parts = tuple(body(depth - 1) for _ in range(rng.randint(2, 3)))
        return ast.Sequence(parts) if kind == "seq" else ast.Choice(parts)

    return ast.GrammarAST(tuple(ast.Rule(f"r{k}", body(3)) for k in range(3)))


@settings(max_examples=80)
@given(st.randoms(use_true_random=False))
def test_reading_the_written_text_gives_back_the_grammar(rng: random.Random) -> None:
    grammar = random_grammar(rng)
    text = to_gbnf(grammar, "r0").replace("root", "r0")
    read = from_gbnf(text, "r0")
    reachable = {rule.name for rule in read.rules}
    assert [(r.name, normalized(r.body)) for r in read.rules] == [
        (r.name, normalized(r.body)) for r in grammar.rules if r.name in reachable
    ]


EBNF_GRAMMARS = {
    "json": (r'''
root ::= value
value ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= "" | " " | "\n" [ \t]{0,20}
''', ('{"a": [1, 2.5e3, "x\\n"], "b": null}', '[true,false]', '"\\u00e9"', '{"a" 1}', "-0")),
    "escapes": (r'''
root ::= "\"\\\n\t\r\f\v\0\e\u00e9😀\x01'" | [\]\-\^\[\\/] | [^a-z\n] | [\x00-\U0010FFFF] x.y
x.y ::= [^] | "_"{2,3} | ("a" | "") ("b"? "c")+
''', ("\"\\\n\t\r\f\v\0\x1bé😀\x01'", "]", "-", "^", "[", "\\", "/", "a", "\n", "a__", "zac",
      "abcc")),
}


@pytest.mark.xgrammar
@pytest.mark.parametrize("name", sorted(EBNF_GRAMMARS))
def test_written_gbnf_reads_back_to_the_same_language(name: str) -> None:
    ebnf, examples = EBNF_GRAMMARS[name]
    strings = near_misses(examples)
    read = from_gbnf(to_gbnf(parsed(ebnf), "root"))
    assert lark_accepts(read, "root", strings) == xgrammar_accepts(ebnf, strings)


GRAMMARS_DIR = Path(__file__).resolve().parents[2] / "grammars"


@pytest.mark.xgrammar
@pytest.mark.parametrize("path", sorted(GRAMMARS_DIR.glob("*.ebnf")), ids=lambda p: p.name)
def test_curated_grammars_survive_a_gbnf_round_trip(path: Path) -> None:
    ebnf = path.read_text("utf-8")
    original = Grammar.from_ebnf(ebnf)
    members = sample(original, n=10, seed=3)
    strings = list(dict.fromkeys(members + [s[:-1] for s in members] + [s + s[:1] for s in members]))
    read = Grammar(from_gbnf(to_gbnf(original.ast, "root")))
    assert [read.matches(s) for s in strings] == xgrammar_accepts(ebnf, strings)


# -- reading hand-written GBNF -------------------------------------------------------------------

JSON_GBNF = r'''# llama.cpp's grammars/json.gbnf
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [1-9] [0-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
'''

ARITHMETIC_GBNF = r'''root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
'''

LIST_GBNF = '''root ::= item+

# Excludes various line break characters
item ::= "- " [^\\r\\n\\x0b\\x0c\\x85\\u2028\\u2029]+ "\\n"
'''

SCHEMA_GBNF = r'''char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\bfnrt] | "u" [0-9a-fA-F]{4})
item ::= "{" space item-name-kv "," space item-age-kv "}" space
item-age ::= ([0-9] | ([1-8] [0-9] | [9] [0-9]) | "1" ([0-4] [0-9] | [5] "0")) space
item-age-kv ::= "\"age\"" space ":" space item-age
item-name ::= "\"" char{1,100} "\"" space
item-name-kv ::= "\"name\"" space ":" space item-name
root ::= "[" space item ("," space item){1,3} "]" space
space ::= | " " | "\n" [ \t]{0,20}
'''

HAND_WRITTEN = {
    "json": (JSON_GBNF, ('{"a": [1, 2.5e3, "x\\n"], "b": null}', "{}", '{"a":1}',
                         '{ "k" : "\\u00e9" }', '[1]', '{"a" 1}')),
    "arithmetic": (ARITHMETIC_GBNF, ("a+b=c\n", "(x1 * 2)=y\n1=2\n", "a=b", "a+=b\n")),
    "list": (LIST_GBNF, ("- one\n- two\n", "- \u2028\n", "- x", "-  y\n")),
    "schema": (SCHEMA_GBNF, ('[{"name": "Ann", "age": 150}]',
                             '[{"name":"a","age":7},{"name":"b","age":99}]',
                             '[{"name": "Ann", "age": 151}]', '[{"name": "", "age": 1}]')),
}


@pytest.mark.xgrammar
@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_hand_written_gbnf_means_what_xgrammar_reads_in_it(name: str) -> None:
    gbnf, examples = HAND_WRITTEN[name]
    strings = near_misses(examples)
    as_ebnf = gbnf.replace("::= |", '::= "" |')  # the dialect has no empty alternative
    verdicts = xgrammar_accepts(as_ebnf, strings)
    assert lark_accepts(from_gbnf(gbnf), "root", strings) == verdicts
    assert any(verdicts) and not all(verdicts)
    rewritten = from_gbnf(to_gbnf(from_gbnf(gbnf), "root"))
    assert lark_accepts(rewritten, "root", strings) == verdicts


def test_gbnf_only_syntax() -> None:
    grammar = from_gbnf(
        'root ::= 1st true rule_x . <[7]> !<[8]> "a"*+ "b"{ 2 , 3 } |\r\n'
        '  "c" # comment\r\n'
        "1st ::= [^\\-\\[]\n"
        "true ::= ()\n"
        "rule_x ::=\n"
    )
    rules = grammar.rule_map()
    assert list(rules) == ["root", ".1st", ".true", "rule_x"]
    assert rules["root"].body == ast.Choice((
        ast.Sequence((
            ast.RuleRef(".1st"), ast.RuleRef(".true"), ast.RuleRef("rule_x"),
            ast.CharClass(((0, MAX_CODEPOINT),)), ast.TokenSet((7,)),
            ast.TokenSet((8,), exclude=True),
            ast.Repeat(ast.Repeat(ast.Literal("a"), 0, None, "*"), 1, None, "+"),
            ast.Repeat(ast.Literal("b"), 2, 3, "{}"),
        )),
        ast.Literal("c"),
    ))
    assert rules[".1st"].body == ast.CharClass(((0x2D, 0x2D), (0x5B, 0x5B)), negated=True)
    assert rules[".true"].body == ast.Literal("")
    assert rules["rule_x"].body == ast.Literal("")


def test_spans_point_into_the_gbnf_text() -> None:
    text = 'root ::= "ab" [c-d]{2}\n'
    body = from_gbnf(text).rules[0].body
    assert isinstance(body, ast.Sequence)
    literal, repeat = body.items
    assert literal.span is not None and text[literal.span.start : literal.span.end] == '"ab"'
    assert repeat.span is not None and text[repeat.span.start : repeat.span.end] == "[c-d]{2}"


# -- errors --------------------------------------------------------------------------------------

# (text, code, (start, end) or None, a fragment of the hint)
BAD_GBNF = [
    ('root ::= "a" | b\n', "GK103", (15, 16), "define `b"),
    ('root ::= "a"\nroot ::= "b"\n', "GK104", (13, 17), "last definition"),
    ('main ::= "a"\n', "GK105", None, "define `root"),
    ('root ::= "abc\n', "GK141", (9, 10), 'end it with `"`'),
    ("root ::= [a-", "GK141", (9, 10), "end it with `]`"),
    ('root ::= "\\q"\n', "GK141", (10, 12), "GBNF escapes"),
    ('root ::= "\\x4"\n', "GK141", (10, 12), "\\x41"),
    ('root ::= "\\U00110000"\n', "GK141", (10, 20), "hex digits"),
    ("root ::= [z-a]\n", "GK141", (10, 13), "lower character first"),
    ("root ::= []\n", "GK141", (9, 11), "empty string"),
    ("root ::= [^]\n", "GK141", (9, 12), "empty string"),
    ('root ::= ("a"\n', "GK141", (14, 14), "close the group"),
    ('root ::= "a")\n', "GK141", (12, 13), "inside `( )`"),
    ('root ::= "a"\n  | "b"\n', "GK141", (15, 16), "letters, digits"),
    ("root ::= *\n", "GK141", (9, 10), "after a literal"),
    ('root "a"\n', "GK141", (5, 6), "root ::="),
    ('::= "a"\n', "GK141", (0, 1), "starts with its name"),
    ('root ::= "a"{3001}\n', "GK142", (12, 18), "2000"),
    ('root ::= "a"{1,3001}\n', "GK142", (12, 20), "2000"),
    ('root ::= "a"{3,1}\n', "GK141", (12, 17), "{1,3}"),
    ('root ::= "a"{x}\n', "GK141", (13, 14), "{m,n}"),
    ("root ::= <think>\n", "GK141", (9, 11), "<[id]>"),
    ("root ::= !<[x]>\n", "GK141", (9, 11), "<[id]>"),
]


@pytest.mark.parametrize(("text", "code", "span", "hint"), BAD_GBNF,
                         ids=[repr(case[0]) for case in BAD_GBNF])
def test_bad_gbnf(text: str, code: str, span: tuple[int, int] | None, hint: str) -> None:
    with pytest.raises(GrammarError) as caught:
        from_gbnf(text)
    first = caught.value.diagnostics[0]
    assert first.code == code
    assert ((first.span.start, first.span.end) if first.span else None) == span
    assert first.hint is not None and hint in first.hint
    assert first.source is not None and first.source.path == "<gbnf>"


def test_every_bad_rule_is_reported_and_good_ones_still_count() -> None:
    text = 'root ::= a b e\na ::= [z-a]\nb ::= "\\q"\nc ::= "ok"\nd ::= c c)\n'
    with pytest.raises(GrammarError) as caught:
        from_gbnf(text)
    found = [(d.code, d.position.line if d.position else None) for d in caught.value.diagnostics]
    assert found == [("GK103", 1), ("GK141", 2), ("GK141", 3), ("GK141", 5)]


def test_at_most_200_diagnostics_are_reported_then_a_note() -> None:
    with pytest.raises(GrammarError) as caught:
        from_gbnf("x ::= ]\n" * 1000)
    diagnostics = caught.value.diagnostics
    assert [d.code for d in diagnostics] == ["GK141"] * 200 + ["GK100"]
    assert diagnostics[-1].message == "801 more diagnostics not shown"


def test_errors_render_with_a_caret() -> None:
    with pytest.raises(GrammarError) as caught:
        from_gbnf('root ::= "a"\nx ::= [b-a]\n')
    assert caught.value.render().splitlines()[:4] == [
        "<gbnf>:2:8: GK141 character range is reversed",
        "  |",
        "2 | x ::= [b-a]",
        "  |        ^^^",
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("root ::= " + "(" * 100_000, "GK141"),
        ("root ::= " + "(" * 900 + '"a"' + ")" * 900 + "\n", None),
        ('root ::= "' + "a" * 500_000, "GK141"),
        ("root ::= " + '"a" ' * 100_000 + "\n", None),
        ("x ::= [\n" * 20_000, "GK141"),
        ("root ::= " + "a | " * 50_000 + "a\na ::= \"\"\n", None),
        ('root ::= "a"{' + "9" * 5000 + "}\n", "GK142"),
        ("root ::= <[" + "9" * 5000 + "]>\n", "GK141"),
    ],
    ids=["deep", "nested", "unterminated", "long", "many errors", "wide", "huge count",
         "huge token"],
)
def test_hostile_gbnf_is_handled_quickly(text: str, code: str | None) -> None:
    start = time.process_time()
    if code is None:
        from_gbnf(text)
    else:
        with pytest.raises(GrammarError) as caught:
            from_gbnf(text)
        assert caught.value.diagnostics[0].code == code
    assert time.process_time() - start < 10  # generous: catches quadratic blow-ups, not jitter


@settings(max_examples=200)
@given(st.text(alphabet='root::= "ab\\x[]^-()|*+?{},.#<>!0123\n', max_size=40))
def test_arbitrary_text_reads_or_raises_a_located_error(text: str) -> None:
    try:
        from_gbnf(text)
    except GrammarError as exc:
        assert exc.diagnostics
        for diagnostic in exc.diagnostics:
            assert diagnostic.hint
            if diagnostic.span is not None:
                assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text)


def test_another_root_can_be_named() -> None:
    grammar = from_gbnf('main ::= "a" 9lives\n9lives ::= "b"\n', root="main")
    assert [rule.name for rule in grammar.rules] == ["main", ".9lives"]
    with pytest.raises(GrammarError, match="GK105"):
        from_gbnf('main ::= "a"\n', root="other")


def test_lazy_rules_are_refused_not_dropped() -> None:
    # Dropping `lazy` would make the export accept `5151!`, which the original refuses.
    grammar = Grammar.from_ebnf('root ::= x "!"\nx[lazy] ::= [0-9]+')
    with pytest.raises(GrammarError) as info:
        grammar.to_gbnf()
    (d,) = info.value.diagnostics
    assert d.code == "GK140" and "lazy" in d.message and d.position is not None


def test_a_literal_with_a_surrogate_escape_is_refused() -> None:
    # `\uD800` is valid in the dialect (xgrammar accepts it) but not in UTF-8 GBNF text.
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf('root ::= "a\\uD800"').to_gbnf()
    assert [d.code for d in info.value.diagnostics] == ["GK140"]
