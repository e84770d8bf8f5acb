"""The fast paths of the front end (recursive descent, one-step scanning) agree with the careful ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.grammar_texts import generated, undefined, varied
from grammarkit.ebnf import ast, descent, parser, plain_text
from grammarkit.ebnf.lalr import SyntaxErrorAt
from grammarkit.ebnf.lexer import Lexer, tokenize
from grammarkit.ebnf.plain_text import Region
from grammarkit.ebnf.suggest import NameSuggester

GRAMMARS = Path(__file__).parents[2] / "grammars"

PIECES = (
    '"a"', '"\\n"', '""', "[a-z]", "[^x]", "[]", "x", "root", "undefined", "(", ")", "()", "|",
    "*", "+", "?", "{2}", "{1,}", "{1,3}", "{3,1}", "{1,-1}", "{1,x}", "{", "}", ",",
    'Regex("a")', "(=", '"b"', "\n", " ",
)


def builders(text: str) -> list[parser._RuleBuilder]:
    """One rule builder per definition in ``text``, as :func:`parser.parse` makes them."""
    tokens = tokenize(text).tokens
    for seq, token in enumerate(tokens):
        token.seq = seq
    problems = parser._Problems()
    definitions = [(token.payload[0], parser._span(token)) for token in tokens
                   if token.type == "RULE_NAME"]
    names = parser._rule_names(definitions, parser._span(tokens[0]), "root", problems)
    built = []
    for chunk, follower in parser._split_rules(tokens, problems):
        builder = parser._RuleBuilder(chunk, follower, names, NameSuggester(names), problems)
        builder.macros = {}
        built.append(builder)
    return built


def both_readings(builder: parser._RuleBuilder) -> tuple[object, object]:
    """``(descent's tree or None, the LALR driver's tree or "error")`` for one rule."""
    read = descent.read_rule(builder.tokens, builder)
    try:
        table = parser._parser().parse(builder.tokens, "rule", builder)
    except SyntaxErrorAt:
        table = "error"
    return read, table


@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=14))
def test_descent_agrees_with_the_lalr_tables(pieces: list[str]) -> None:
    for builder in builders("root ::= " + " ".join(pieces) + "\nx ::= \"x\"\n"):
        if "MACRO" in {token.type for token in builder.tokens}:
            continue  # macro calls are parsed before the rule; both readers need that step
        read, table = both_readings(builder)
        if read is not None:
            assert table != "error"
            # reprs include the spans, which node equality leaves out
            assert repr(read) == repr(table)


@given(st.lists(st.sampled_from((*PIECES, "[b-a]", "[\\d]", "{0,7}", "{9,2}")), min_size=1,
                max_size=14))
def test_plain_rules_get_the_diagnostics_of_the_lalr_path(pieces: list[str]) -> None:
    """What the parser checks after the descent reader read a rule (references, bounds,
    classes) is what it finds on the tokens after the LALR driver parsed it."""
    text = "root ::= " + " ".join(pieces) + "\nx ::= \"x\"\n"
    with patch.object(plain_text, "read", return_value=plain_text.Reading([Region(0, None)], [])):  # every rule: tokens
        fast = parser.parse(text)
        with patch.object(descent, "read_rule", return_value=None):
            careful = parser.parse(text)
    assert fast.diagnostics == careful.diagnostics
    assert repr(fast.ast) == repr(careful.ast)


def _element(depth: int) -> st.SearchStrategy[str]:
    """Rule body text: mostly what the plain reader takes, with everything that stops it."""
    leaf = st.sampled_from((
        '"a"', '"\\n"', '""', '"\\u00e9"', '"é"', '"\\x41"', '"\\q"', "[a-z]", "[^x]", "[]",
        "[\\]-]", "[b-a]", "x", "root", "undefined", "()", "true", 'Regex("a")', "(= \"x\")"))
    if depth == 0:
        return leaf
    inner = _element(depth - 1)
    group = st.lists(inner, min_size=1, max_size=3).map(lambda xs: "(" + " | ".join(xs) + ")")
    sequence = st.lists(inner, min_size=1, max_size=3).map(" ".join)
    quantifier = st.sampled_from(("", "", "*", "+", "?", "{2}", "{1,}", "{ 3 , 1 }", "{1,-1}",
                                  "{1,\n2}", " *", "{1,x}", " # c\n"))
    return st.tuples(st.one_of(leaf, group, sequence), quantifier).map("".join)


_RULE = st.tuples(
    st.sampled_from(("root", "x", "y", "x", "Regex", "true")),
    st.sampled_from(("", "", "", "[lazy]", " ", "[cap]")),
    st.lists(_element(2), min_size=1, max_size=3).map(" | ".join),
    st.sampled_from(("", "", "", " # c", " |", " )", " ::=", '"\\q', "[x", ' (= "x" y*)',
                     ' (= ("x") | x) # c', " (=)", ' (= "x")?')),
).map(lambda parts: f"{parts[0]}{parts[1]} ::= {parts[2]}{parts[3]}")


@given(st.sampled_from(("", "\n", "# head\n", "\0 ")),
       st.lists(st.tuples(st.sampled_from(("\n", "\r\n", "\n\n", "\n  ", " ", "\n# c\n#\n")),
                                  _RULE),
                min_size=1, max_size=5))
def test_reading_plain_rules_from_the_text_gives_what_the_tokens_give(
        head: str, rules: list[tuple[str, str]]) -> None:
    """Rules read straight from the text (and regions left to the lexer between them) parse
    to what lexing the whole text gives: the same tree, spans and diagnostics."""
    text = head + "".join(separator + rule for separator, rule in rules)
    fast = parser.parse(text)
    with patch.object(plain_text, "read", return_value=plain_text.Reading([Region(0, None)], [])):
        careful = parser.parse(text)
    assert fast.diagnostics == careful.diagnostics
    assert repr(fast.ast) == repr(careful.ast)


@pytest.mark.parametrize("text", [generated(60_000), varied(60_000), undefined(300)],
                         ids=["generated", "varied", "undefined"])
def test_big_generated_grammars_read_from_the_text_parse_as_tokens_do(text: str) -> None:
    pieces = plain_text.read(text).pieces
    assert sum(isinstance(piece, ast.Rule) for piece in pieces) > len(pieces) // 3
    fast = parser.parse(text)
    with patch.object(plain_text, "read", return_value=plain_text.Reading([Region(0, None)], [])):
        careful = parser.parse(text)
    assert fast.diagnostics == careful.diagnostics
    assert repr(fast.ast) == repr(careful.ast)


def test_descent_reads_every_plain_rule_of_the_bundled_grammars() -> None:
    read_count = 0
    for path in sorted(GRAMMARS.glob("*.ebnf")):
        for builder in builders(path.read_text("utf-8")):
            kinds = {token.type for token in builder.tokens}
            if kinds & {"MACRO", "LOOKAHEAD"}:
                continue
            read, table = both_readings(builder)
            assert read is not None, (path.name, builder.tokens[0].value)
            assert repr(read) == repr(table)
            read_count += 1
    assert read_count > 50


def test_the_kept_lalr_tables_are_what_lark_computes_from_the_dialect() -> None:
    """``syntax.lark`` stays the one definition: its tables, kept as data, are Lark's."""
    from grammarkit.ebnf.lalr import tables_from_lark
    from grammarkit.ebnf.lalr_tables import TABLES

    assert tables_from_lark() == TABLES, "syntax.lark changed: run python -m grammarkit.ebnf.lalr"


def test_deep_groups_are_left_to_the_lalr_driver() -> None:
    depth = descent.MAX_DEPTH + 1
    text = "root ::= " + "(" * depth + '"a"' + ")" * depth
    (builder,) = builders(text)
    read, table = both_readings(builder)
    assert read is None
    assert table != "error"
    assert parser.parse(text).ast.rules[0].body == parser.parse('root ::= "a"').ast.rules[0].body


ESCAPES = ("\\n", "\\\\", '\\"', "\\-", "\\]", "\\^", "\\d", "\\x41", "\\q", "\\u00e9",
           "\\ud83d", "\\U0001F600", "\\U00110000", "\\u12")


@given(st.lists(st.sampled_from(("a", "b", "-", "^", "]", "z", "\U0001f600", *ESCAPES)), max_size=10))
def test_plain_classes_scan_as_the_careful_scanner_scans_them(pieces: list[str]) -> None:
    """The one-step scanner gives the careful scanner's class token, or leaves it to it."""
    text = "[" + "".join(pieces) + "]"
    careful = Lexer(text)
    careful._char_class()
    fast = Lexer(text)
    fast._scan_common()
    value, problems = careful.tokens[0].payload
    if fast.tokens:
        assert not problems and not careful.diagnostics
        token = fast.tokens[0]
        assert (token.value, token.end, token.payload[0]) == (
            careful.tokens[0].value,
            careful.tokens[0].end,
            value,
        )
    else:  # only what needs care: escapes beyond one character, reversed ranges
        assert problems or careful.diagnostics or any(len(p) > 2 for p in pieces if p[0] == "\\")


@given(st.lists(st.sampled_from(("a", "'", "\U0001f600", *ESCAPES)), max_size=10))
def test_plain_strings_scan_as_the_careful_scanner_scans_them(pieces: list[str]) -> None:
    text = '"' + "".join(pieces) + '"'
    careful = Lexer(text)
    careful._string()
    fast = Lexer(text)
    fast._scan_common()
    if fast.tokens:
        assert not careful.diagnostics
        token = fast.tokens[0]
        assert (token.value, token.payload) == (careful.tokens[0].value, careful.tokens[0].payload)
    else:
        slow = ("\\x41", "\\U00110000", "\\u12", "\\d", "\\q", "\\-", "\\]", "\\^")
        assert careful.diagnostics or any(p in slow for p in pieces)


def test_grammars_are_linted_without_importing_lark() -> None:
    """A pre-commit hook never needs Lark's import: plain grammars never need the LALR tables,
    and the others get them kept as data."""
    script = (
        "import sys\n"
        "from grammarkit.analysis.lint import lint\n"
        "lint('root ::= \"a\" ([0-9]+ | item){2,3}\\nitem ::= \"x\"*\\n')\n"
        "lint('root ::= Regex(\"[a-z]+\") x (= \"b\")\\nx[lazy] ::= [a-z]* # c\\n')\n"
        "print('lark' in sys.modules)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"


def test_a_huge_class_scans_as_the_careful_scanner_scans_it() -> None:
    """Past a few hundred characters the one-step scanner shares one range per character."""
    text = "[" + "".join(chr(0x4E00 + k % 50) + "a\U0001f600é" for k in range(300)) + "]"
    careful = Lexer(text)
    careful._char_class()
    fast = Lexer(text)
    fast._scan_common()
    assert fast.tokens[0].payload[0] == careful.tokens[0].payload[0]
    assert len(fast.tokens[0].payload[0].ranges) == 1200


# -- lazy reading: rules certified plain by whole-text passes, bodies read when first used ----

def _lazy_and_eager(text: str) -> tuple[plain_text.Reading, plain_text.Reading]:
    return plain_text.read(text, lazy_from="root"), plain_text.read(text)


def _certified(reading: plain_text.Reading) -> bool:
    return bool(reading.pieces) and all(type(p) is plain_text._UnreadRule for p in reading.pieces)


@given(st.sampled_from(("", "\n", "# head\n", "\0 ", "\x01")),
       st.lists(st.tuples(st.sampled_from(("\n", "\r\n", "\n\n", "\n  ", " ", "\r", "\n# c\n")),
                          _RULE),
                min_size=1, max_size=5))
def test_lazy_parsing_gives_what_reading_now_gives(head: str, rules: list[tuple[str, str]]) -> None:
    """Whether or not the text is certified, a lazy parse has the same tree, spans and
    diagnostics."""
    text = head + "".join(separator + rule for separator, rule in rules)
    lazy = parser.parse(text, lazy=True)
    eager = parser.parse(text)
    assert lazy.diagnostics == eager.diagnostics
    assert repr(lazy.ast) == repr(eager.ast)


_PLAIN_LEAVES = ('"a"', '"\\n"', '""', '"{3,1}"', '"[" ', '"]"', '"(" ', '"|"', '"#"', "[a-z]",
                 "[^x]", "[]", '["]', "[(]", "[{]", "[b-a]", "[-]", "x", "root", "y", "undefined",
                 "()", "true", "Token", "x[", '"\\q"', '"\\u00e9"', "-", ".a", "_")


def _plain_element(depth: int) -> st.SearchStrategy[str]:
    """Rule body text of plain tokens, with a few that are not (or not plain)."""
    leaf = st.sampled_from(_PLAIN_LEAVES)
    if depth == 0:
        return leaf
    inner = _plain_element(depth - 1)
    group = st.lists(inner, min_size=1, max_size=3).map(lambda xs: "(" + " | ".join(xs) + ")")
    sequence = st.lists(inner, min_size=1, max_size=3).map(" ".join)
    quantifier = st.sampled_from(("", "", "*", "+", "?", "{2}", "{1,}", "{1,-1}", "{1,\n2}",
                                  "{ 3 , 1 }", "*?", "{0,3}", "{1,-1x}", ")", "|", "(", ""))
    joined = st.tuples(st.one_of(leaf, group, sequence), quantifier).map("".join)
    return st.one_of(joined, st.tuples(joined, joined).map("".join))  # tokens without space


@given(st.sampled_from(("", "\n", "  ", "\n\n")),
       st.lists(st.tuples(st.sampled_from(("\n", "\r\n", "\n\n", "\n  ", "\n\t")),
                          st.sampled_from(("root", "x", "y", "Regex", "true")),
                          st.sampled_from((" ::= ", "::=", " ::=\n  ", "\n::= ", "[x] ::= ")),
                          st.lists(_plain_element(2), min_size=1, max_size=3).map(" | ".join)),
                min_size=1, max_size=5))
@settings(max_examples=300)
def test_a_text_of_plain_rules_is_certified_and_read_lazily_as_now(
        head: str, rules: list[tuple[str, str, str, str]]) -> None:
    """Certified texts read lazily to the rules reading now gives; every text of plain rules
    (read without regions, references defined, no comment, shallow groups, a rule's name and
    ``::=`` on one line) is certified."""
    text = head + "".join("".join(parts) for parts in rules).lstrip("\r\n\t ")
    lazy, eager = _lazy_and_eager(text)
    defined = {p.name for p in eager.pieces if isinstance(p, ast.Rule)}
    plain = (all(isinstance(p, ast.Rule) for p in eager.pieces) and not eager.comments
             and all(r.name in defined for r in eager.references)
             and all(assign != "\n::= " for *_, assign, _ in rules))
    assert _certified(lazy) == plain
    if plain:
        assert [repr(p) for p in lazy.pieces] == [repr(p) for p in eager.pieces]
        assert all(type(p) is ast.Rule for p in lazy.pieces)  # read now, and ordinary again


@pytest.mark.parametrize("text", [
    'root ::= foo["] "\nfoo ::= "x"\n',  # an attribute block that scans as a class
    'root ::= [{1}-a]\n',  # a reversed range around braces
    'root ::= "[" ) "]"\n',  # a class only inside strings
    'root ::= "a" x\nx\n::= "b"\n',  # `::=` on the next line
    'root ::= "a"\rx ::= "b"\n',  # a lone carriage return
    'root ::= "a"{3,1}\n',
    'root ::= "a" true\n',
    'root ::= Regex("a")\n',
    'root ::= "a" # c\n',
    'root ::= "a" (= "b")\n',
    'root ::= "a" undefined\n',
    'root ::= "\x01"\n',
    "root ::= " + "(" * plain_text._CERTIFIED_DEPTH + '"a"' + ")" * plain_text._CERTIFIED_DEPTH,
])
def test_texts_the_passes_must_not_certify(text: str) -> None:
    lazy, _ = _lazy_and_eager(text)
    assert not _certified(lazy)
    assert parser.parse(text, lazy=True).diagnostics == parser.parse(text).diagnostics


def test_an_unread_rule_behaves_as_the_rule_it_becomes() -> None:
    import copy
    import pickle
    from dataclasses import replace

    text = 'root ::= "a" x{0,3} | ([a-z] x)+\nx ::= "b" | root\n'
    (eager, _) = plain_text.read(text).pieces
    fresh = lambda: plain_text.read(text, lazy_from="root").pieces[0]
    assert type(fresh()) is plain_text._UnreadRule
    assert fresh() == eager and eager == fresh() and hash(fresh()) == hash(eager)
    assert repr(fresh()) == repr(eager)
    assert pickle.loads(pickle.dumps(fresh())) == eager
    assert copy.deepcopy(fresh()) == eager
    assert replace(fresh(), name="y") == replace(eager, name="y")
    rule = fresh()
    assert (rule.name, rule.name_span, rule.lookahead, rule.attributes) == (
        "root", eager.name_span, None, ())
    assert type(rule) is plain_text._UnreadRule  # those fields are there before reading
    assert (rule.span, rule.body) == (eager.span, eager.body)
    assert type(rule) is ast.Rule


def test_a_first_verdict_reads_only_the_rules_it_reaches() -> None:
    from grammarkit.grammar import Grammar

    text = generated(60_000)
    grammar = Grammar.from_ebnf(text)
    assert grammar.matches('"key_1"') is False
    unread = sum(type(rule) is plain_text._UnreadRule for rule in grammar.ast.rules)
    assert unread > len(grammar.ast.rules) // 2
    assert repr(grammar.ast) == repr(parser.parse(text).ast)


def test_a_chain_its_root_reaches_through_first_names_is_read_now() -> None:
    """Its first verdict reads every rule: certifying them first would only add to that."""
    chain = "".join(f'r{k} ::= "w{k}" | r{k + 1}\n' for k in range(3000)) + 'r3000 ::= "end"\n'
    assert not _certified(plain_text.read(chain, lazy_from="r0"))
    assert _certified(plain_text.read(chain, lazy_from="r2500"))  # reaches 501 rules
