"""The canonical printer: layout, comments, idempotence and language preservation."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.ebnf import ast
from grammarkit.ebnf.escapes import quote_string
from grammarkit.ebnf.lexer import tokenize
from grammarkit.ebnf.parser import parse
from grammarkit.ebnf.printer import (
    _CHOICE,
    LINE_LENGTH,
    _print,
    _spell,
    canonical_expr,
    print_expr,
    print_grammar,
    print_rule,
)


def fmt(text: str) -> str:
    result = parse(text)
    assert result.ok, result.diagnostics
    return print_grammar(result.ast, text)


def canonical_rules(grammar: ast.GrammarAST) -> list[tuple[object, ...]]:
    """What a round trip must preserve: every rule, with canonical grouping."""
    return [
        (
            rule.name,
            canonical_expr(rule.body),
            None if rule.lookahead is None else canonical_expr(rule.lookahead),
            rule.attributes,
        )
        for rule in grammar.rules
    ]


# -- layout ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('root ::= "a"', 'root ::= "a"\n'),
        ('root   ::=\n  "a"   "b"\n\n\n', 'root ::= "a" "b"\n'),
        ('root ::= ("a" "b") ("c")', 'root ::= "a" "b" "c"\n'),
        ('root ::= ("a" | ("b" | "c")) "d"', 'root ::= ("a" | "b" | "c") "d"\n'),
        ('root ::= "a" | ("b" "c")', 'root ::= "a" | "b" "c"\n'),
        ('root ::= ("a"+)? ("b")*', 'root ::= ("a"+)? "b"*\n'),
        ('root ::= ("a" "b"){2,} "c"{0,1} "d"{1,} "e"{0,} "f"{3,3} "g"{ 1 , 2 } "h"{1,-1}',
         'root ::= ("a" "b"){2,} "c"? "d"+ "e"* "f"{3} "g"{1,2} "h"+\n'),
        ('root ::= () | "" | [] | [^]', 'root ::= () | "" | [] | [^]\n'),
        ('root ::= "a" () "b"', 'root ::= "a" "b"\n'),
        ('root ::= "\\x41\\x0a" "\\u00e9\\U0001F600" "\\"\\\\"',
         'root ::= "A\\n" "é😀" "\\"\\\\"\n'),
        ('root ::= "\\x7f" "1" "\\x7F1" "\\x1b"', 'root ::= "\\u007f" "1" "߱" "\\e"\n'),
        ('root ::= [\\x41-\\x5a_\\-\\]\\^] [^\\n\\t]', 'root ::= [A-Z_\\-\\]\\^] [^\\n\\t]\n'),
        ('root ::= [^"\\\\] ["\\"]', 'root ::= [^"\\\\] [""]\n'),
        ('root ::= [a-z]+ (= ("b"))', 'root ::= [a-z]+ (= "b")\n'),
        ('root[max_tokens = 3,capture] ::= "a"', 'root[max_tokens=3, capture] ::= "a"\n'),
        ('root[capture="x"] ::= "a"', 'root[capture="x"] ::= "a"\n'),
        ('root[ lazy,stop_capture = "s" ,capture="root"] ::= "a"',
         'root[lazy, stop_capture="s", capture] ::= "a"\n'),
        ('root ::= Token(3,1, 2) ExcludeToken( 7 )', 'root ::= Token(1, 2, 3) ExcludeToken(7)\n'),
        ('root ::= TagDispatch(("<a>", x), ("<b>",x), loop_after_dispatch=true)\nx ::= "y"',
         'root ::= TagDispatch(("<a>", x), ("<b>", x))\nx ::= "y"\n'),
        (('root ::= TagDispatch(("<a>", x), loop_after_dispatch=false, excludes=("s", "t",))\n'
          'x ::= "y"'),
         ('root ::= TagDispatch(("<a>", x), loop_after_dispatch=false, excludes=("s", "t"))\n'
          'x ::= "y"\n')),
        ('root ::= TokenTagDispatch((5, x), excludes=(6,))\nx ::= "y"',
         'root ::= TokenTagDispatch((5, x), excludes=(6,))\nx ::= "y"\n'),
        ('root ::= Regex("\\\\d+\\"", flags="i", json_string=true) Substring("ab","c")',
         'root ::= Regex("\\\\d+\\"", json_string=true, flags="i") Substring("ab", "c")\n'),
    ],
)
def test_canonical_layout(text: str, expected: str) -> None:
    formatted = fmt(text)
    assert formatted == expected
    assert fmt(formatted) == formatted
    assert canonical_rules(parse(formatted).ast) == canonical_rules(parse(text).ast)


def test_classes_keep_dashes_literal() -> None:
    assert fmt("root ::= [a-] [-a] [a-z-]") == "root ::= [a\\-] [\\-a] [a-z\\-]\n"


def test_hex_escape_never_swallows_a_following_digit() -> None:
    text = fmt('root ::= "\\x01" "0" "\\u00011"')
    assert "\\x" not in text
    literals = [rule.body for rule in parse(text).ast.rules]
    assert literals == [ast.Sequence((ast.Literal("\x01"), ast.Literal("0"), ast.Literal("\x011")))]


def test_long_alternation_wraps_with_leading_bars() -> None:
    alternatives = [f'"{letter * 30}"' for letter in "abcd"]
    text = f"root ::= {' | '.join(alternatives)} (= \"z\")\n"
    formatted = fmt(text)
    lines = formatted.splitlines()
    assert lines[0] == f"root ::= {alternatives[0]}"
    assert lines[1:] == [f"    | {a}" for a in alternatives[1:-1]] + [
        f'    | {alternatives[-1]} (= "z")'
    ]
    assert fmt(formatted) == formatted


def test_short_alternation_and_long_sequence_stay_on_one_line() -> None:
    sequence = " ".join(f'"{letter * 30}"' for letter in "abcd")
    assert fmt(f"root ::= {sequence}") == f"root ::= {sequence}\n"
    exact = 'root ::= "' + "a" * (LINE_LENGTH - 17) + '" | "b"'
    assert len(exact) == LINE_LENGTH
    assert fmt(exact) == exact + "\n"
    assert fmt(exact.replace('"b"', '"bc"')).count("\n") == 2


def test_print_rule_and_expr() -> None:
    rule = ast.Rule(
        "r.x", ast.Choice((ast.Sequence((ast.Literal("a"), ast.RuleRef("b"))), ast.Literal("c"))),
        lookahead=ast.Literal("d"), attributes=(ast.Attribute("max_tokens", 4),),
    )
    assert print_rule(rule) == 'r.x[max_tokens=4] ::= "a" b | "c" (= "d")'
    assert print_expr(ast.Repeat(ast.Repeat(ast.Literal("a"), 0, 1), 2, 5)) == '("a"?){2,5}'
    assert print_expr(ast.Choice(())) == "[]"
    assert print_expr(ast.Sequence((ast.Sequence(()),))) == "()"


def test_canonical_expr_flattens_and_spells_quantifiers() -> None:
    a, b, c = ast.Literal("a"), ast.Literal("b"), ast.Literal("c")
    nested = ast.Sequence((ast.Sequence((a, ast.Choice((b,)))), ast.Sequence((c,))))
    assert canonical_expr(nested) == ast.Sequence((a, b, c))
    choice = ast.Choice((ast.Choice((a, ast.Sequence((ast.Choice((b, c)),)))),))
    assert canonical_expr(choice) == ast.Choice((a, b, c))
    assert canonical_expr(ast.Repeat(a, 0, 1, "{}")) == ast.Repeat(a, 0, 1, "?")
    assert canonical_expr(ast.Repeat(a, 2, None, "*")) == ast.Repeat(a, 2, None, "{}")
    assert canonical_expr(ast.Choice(())) == ast.CharClass(())


def test_shared_subtrees_are_printed_each_time() -> None:
    shared = ast.Choice((ast.Literal("a"), ast.Sequence((ast.Literal("b"),))))
    assert print_expr(ast.Sequence((shared, ast.Repeat(shared, 0, None)))) == (
        '("a" | "b") ("a" | "b")*'
    )


# -- comments ----------------------------------------------------------------------------------
COMMENTED = """\
# A grammar for greetings.
# Second header line.

root ::= greeting ("," name)? # trailing root
greeting ::= "hello"   # trailing greeting
    | "hi" # inside, moved above
    | "hey"
# about name


name ::= [A-Z] # inside too
  [a-z]*
# the end
"""

COMMENTED_FORMATTED = """\
# A grammar for greetings.
# Second header line.

root ::= greeting ("," name)?  # trailing root
# trailing greeting
# inside, moved above
greeting ::= "hello" | "hi" | "hey"
# about name

# inside too
name ::= [A-Z] [a-z]*
# the end
"""


def test_comments_are_kept_and_placed() -> None:
    assert fmt(COMMENTED) == COMMENTED_FORMATTED
    assert fmt(COMMENTED_FORMATTED) == COMMENTED_FORMATTED


def test_comments_without_source_get_their_own_lines() -> None:
    result = parse(COMMENTED)
    printed = print_grammar(result.ast)
    assert [line for line in printed.splitlines() if line.startswith("#")] == [
        "# A grammar for greetings.", "# Second header line.", "# trailing root",
        "# trailing greeting", "# inside, moved above", "# about name", "# inside too",
        "# the end",
    ]
    assert "" not in printed.splitlines()
    assert fmt(printed) == printed


def test_comment_text_is_sanitised() -> None:
    grammar = ast.GrammarAST(
        (ast.Rule("root", ast.Literal("a"), span=ast.Span(0, 12)),),
        (ast.Comment(" two\nlines  ", ast.Span(20, 30)),),
    )
    assert print_grammar(grammar) == 'root ::= "a"\n# two lines\n'


def test_crlf_source() -> None:
    text = 'root ::= "a" # t\r\n\r\n# c\r\nx ::= "b"\r\n'
    assert fmt(text) == 'root ::= "a"  # t\n\n# c\nx ::= "b"\n'


def test_grammar_without_rules_or_comments_prints_nothing() -> None:
    assert print_grammar(ast.GrammarAST(())) == ""


# -- robustness --------------------------------------------------------------------------------
def test_deep_trees_print_iteratively() -> None:
    expr: ast.Expr = ast.Literal("a")
    for depth in range(20_000):
        expr = ast.Repeat(expr, 0, 1) if depth % 2 else ast.Sequence((expr, ast.Literal("b")))
    text = print_expr(expr)
    assert text.count("(") == text.count(")") == 10_000
    assert text.endswith(' "b")?')


def test_large_grammar_prints_without_blowing_up() -> None:
    rules = "\n".join(
        f'r{i} ::= ("x{i}" | r{i + 1}) [a-z]* # note {i}' for i in range(3000)
    )
    text = f"root ::= r0\n{rules}\nr3000 ::= \"end\"\n"
    result = parse(text)
    started = time.perf_counter()
    formatted = print_grammar(result.ast, text)
    assert time.perf_counter() - started < 30  # a guard against quadratic blow-ups, not a speed test
    assert formatted.count("\n") == 3002


# -- properties --------------------------------------------------------------------------------
RULE_NAMES = ("root", "a", "b-c", "d.e", "_f")

_code_points = st.characters(exclude_categories=["Cs"], max_codepoint=0x10FFFF)
_text = st.text(_code_points, max_size=6)
_low_high = st.tuples(_code_points, _code_points).map(lambda p: tuple(sorted(map(ord, p))))
_tag_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
                    min_size=1, max_size=4)
_tags = st.lists(st.tuples(_tag_text, st.sampled_from(RULE_NAMES)), min_size=1, max_size=3)

_leaves = st.one_of(
    st.builds(ast.Literal, _text),
    st.builds(ast.CharClass, st.lists(_low_high, max_size=3).map(tuple), st.booleans()),
    st.builds(ast.RuleRef, st.sampled_from(RULE_NAMES)),
    st.just(ast.Sequence(())),
    st.builds(ast.TokenSet,
              st.sets(st.integers(0, 10**6), min_size=1, max_size=3).map(sorted).map(tuple),
              st.booleans()),
    st.builds(ast.TagDispatch, _tags.map(tuple), st.booleans(),
              st.lists(st.just("\x00"), max_size=1).map(tuple)),
    st.builds(ast.TokenTagDispatch,
              st.lists(st.tuples(st.integers(0, 99), st.sampled_from(RULE_NAMES)),
                       min_size=1, max_size=2).map(tuple),
              st.booleans(), st.lists(st.integers(100, 200), max_size=2).map(tuple)),
    st.builds(ast.RegexMacro, _text, st.booleans(), st.sampled_from(["", "i"])),
    st.builds(ast.Substring, st.lists(_text, min_size=1, max_size=3).map(tuple)),
)


def _repeat(item: ast.Expr, low: int, extra: int | None) -> ast.Repeat:
    return ast.Repeat(item, low, None if extra is None else low + extra)


def _extend(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    return st.one_of(
        st.builds(ast.Sequence, st.lists(inner, max_size=4).map(tuple)),
        st.builds(ast.Choice, st.lists(inner, min_size=1, max_size=4).map(tuple)),
        st.builds(_repeat, inner, st.integers(0, 3), st.none() | st.integers(0, 3)),
    )


expressions = st.recursive(_leaves, _extend, max_leaves=12)
_lookaheads = st.none() | st.builds(ast.Literal, st.text(_code_points, min_size=1, max_size=3))
_attributes = st.lists(
    st.sampled_from([
        ast.Attribute("max_tokens", 7), ast.Attribute("capture", "cap"),
        ast.Attribute("lazy", None), ast.Attribute("stop_capture", "cap"),
    ]),
    max_size=3, unique=True,
).map(tuple)


@st.composite
def grammars(draw: st.DrawFn, body: st.SearchStrategy[ast.Expr] = expressions) -> ast.GrammarAST:
    names = draw(st.permutations(RULE_NAMES))
    rules = tuple(
        ast.Rule(name, draw(body), draw(_lookaheads), draw(_attributes)) for name in names
    )
    return ast.GrammarAST(rules)


@settings(max_examples=150)
@given(grammars())
def test_printed_ast_parses_back_to_its_canonical_form(grammar: ast.GrammarAST) -> None:
    text = print_grammar(grammar)
    result = parse(text)
    assert result.ok, (text, result.diagnostics)
    assert canonical_rules(result.ast) == canonical_rules(grammar)
    assert print_grammar(result.ast, text) == text


@settings(max_examples=300)
@given(expressions)
def test_one_walk_printing_matches_printing_the_canonical_tree(expr: ast.Expr) -> None:
    """The fast path (print a canonical tree as it is, checking as it goes) against the
    reference (canonicalise, then print), on canonical trees and on trees it must refuse."""
    canonical = canonical_expr(expr)
    reference = _print(canonical, _CHOICE)
    assert _spell(canonical, _CHOICE) == reference
    assert print_expr(expr) == reference
    rule = ast.Rule("r", expr)
    assert print_rule(rule) == print_rule(ast.Rule("r", canonical))


def explicit(expr: ast.Expr) -> str:
    """A deliberately non-canonical rendering: every group parenthesised, every bound spelled
    out, every character escaped by number."""
    if isinstance(expr, ast.Literal):
        return '"' + "".join(f"\\U{ord(c):08x}" for c in expr.value) + '"'
    if isinstance(expr, ast.CharClass):
        body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in expr.ranges)
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, ast.Sequence):
        return "(" + "  ".join(explicit(item) for item in expr.items) + ")"
    if isinstance(expr, ast.Choice):
        return "(" + "\n  |".join(explicit(item) for item in expr.alternatives) + ")"
    if isinstance(expr, ast.Repeat):
        upper = "-1" if expr.max is None else str(expr.max)
        return f"({explicit(expr.item)}){{ {expr.min} , {upper} }}"
    return print_expr(expr)


def explicit_grammar(grammar: ast.GrammarAST) -> str:
    return "".join(f"{rule.name} ::= {explicit(rule.body)}\n" for rule in grammar.rules)


@settings(max_examples=100)
@given(grammars())
def test_non_canonical_text_formats_to_the_same_grammar(grammar: ast.GrammarAST) -> None:
    grammar = ast.GrammarAST(tuple(ast.Rule(r.name, r.body) for r in grammar.rules))
    text = explicit_grammar(grammar)
    result = parse(text)
    assert result.ok, (text, result.diagnostics)
    assert canonical_rules(result.ast) == canonical_rules(grammar)
    formatted = print_grammar(result.ast, text)
    assert formatted == print_grammar(grammar)
    assert fmt(formatted) == formatted


_COMMENT_TEXT = st.text(st.characters(exclude_characters="\r\n\x00", exclude_categories=["Cs"]),
                        max_size=8)


@st.composite
def messy_texts(draw: st.DrawFn) -> str:
    """A canonical grammar re-spaced at random, with comments and blank lines between tokens."""
    canonical = print_grammar(draw(grammars()))
    tokens = tokenize(canonical).tokens[:-1]
    pieces = []
    for k, token in enumerate(tokens):
        if k:
            if token.type == "RULE_NAME":
                gap = draw(st.sampled_from(["\n", "\n\n", "\n\n\n"]))
            elif token.type in ("ASSIGN", "INT", "COMMA", "RBRACE") or tokens[k - 1].type in (
                "LBRACE", "INT", "COMMA"
            ):
                gap = " "
            else:
                gap = draw(st.sampled_from([" ", "\n  ", "\t", "\n\n  "]))
            if "\n" in gap and draw(st.booleans()):
                gap = f"  #{draw(_COMMENT_TEXT)}{gap}"
            pieces.append(gap)
        pieces.append(token.value)
    if draw(st.booleans()):
        pieces.append(f"  #{draw(_COMMENT_TEXT)}")
    return "#" + draw(_COMMENT_TEXT) + "\n" + "".join(pieces) + "\n"


def _comment_texts(text: str) -> list[str]:
    return sorted(c.text.rstrip() for c in parse(text).ast.comments)


@settings(max_examples=100)
@given(messy_texts())
def test_formatting_is_idempotent_and_keeps_comments(text: str) -> None:
    result = parse(text)
    assert result.ok, (text, result.diagnostics)
    formatted = print_grammar(result.ast, text)
    assert fmt(formatted) == formatted
    assert _comment_texts(formatted) == _comment_texts(text)
    assert canonical_rules(parse(formatted).ast) == canonical_rules(result.ast)
    assert not re.search(r"\n\n\n", formatted)


# -- differential: xgrammar accepts the output and agrees on the language -----------------------


def _plain(references: tuple[str, ...]) -> st.SearchStrategy[ast.Expr]:
    """Small macro-free bodies over ``ab`` referencing only ``references``.

    The rules are kept acyclic: xgrammar 0.2.8 crashes (SIGSEGV) on some recursive rules
    without a finite derivation, such as ``x ::= x{2,3}``.
    """
    leaves = st.one_of(
        st.builds(ast.Literal, st.text("ab", max_size=2)),
        st.builds(ast.CharClass, st.sampled_from([((97, 98),), ((98, 98),), ()]), st.booleans()),
        st.just(ast.Sequence(())),
        *([st.builds(ast.RuleRef, st.sampled_from(references))] if references else []),
    )
    return st.recursive(leaves, _extend, max_leaves=6)


XGRAMMAR_CASES = [
    COMMENTED,
    'root ::= ("a" | "b"){2,3} "c"{0,1} | x+ (= "a")\nx ::= [^a-c] | "\\u00e9" ""',
    ('root ::= TagDispatch(("<t>", x), loop_after_dispatch=false, excludes=("</", ))\n'
     'x ::= "y"'),
    'root ::= Regex("[0-9]+\\\\.[0-9]*", json_string=false) | Substring("abc")',
    'root[max_tokens=3, capture="c"] ::= "a"',
    'root[lazy, stop_capture="s"] ::= "a"',
]


@pytest.mark.xgrammar
@pytest.mark.parametrize("text", XGRAMMAR_CASES)
def test_xgrammar_accepts_the_output(text: str) -> None:
    import xgrammar

    xgrammar.Grammar.from_ebnf(fmt(text))


@pytest.mark.xgrammar
@settings(max_examples=50)
@given(grammars())
def test_xgrammar_accepts_any_printed_grammar(grammar: ast.GrammarAST) -> None:
    import xgrammar

    xgrammar.Grammar.from_ebnf(print_grammar(grammar))


@pytest.mark.xgrammar
@settings(max_examples=25)
@given(st.tuples(_plain(("a", "b-c")), _plain(("b-c",)), _plain(())),
       st.lists(st.text("abc", max_size=4), min_size=4, max_size=4))
def test_xgrammar_language_is_preserved(bodies: tuple[ast.Expr, ...], samples: list[str]) -> None:
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    grammar = ast.GrammarAST(
        tuple(ast.Rule(name, body) for name, body in zip(("root", "a", "b-c"), bodies))
    )
    original = xgrammar.Grammar.from_ebnf(explicit_grammar(grammar))
    formatted = xgrammar.Grammar.from_ebnf(print_grammar(grammar))
    for sample in samples:
        assert _is_grammar_accept_string(original, sample) == _is_grammar_accept_string(
            formatted, sample
        ), sample


def test_quote_string_round_trip_in_print_expr() -> None:
    value = "\x00\x7f\u2028\"\\é\U0001F600"
    printed = print_expr(ast.Literal(value))
    assert printed == quote_string(value)
    assert parse(f"root ::= {printed}").ast.rules[0].body == ast.Literal(value)
