"""The incremental parser gives exactly what a whole parse gives, after any sequence of edits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.analysis.lint import lint_parsed
from grammarkit.authoring.incremental import IncrementalParser
from grammarkit.authoring.incremental_lint import IncrementalLinter
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import ParseResult, parse
from grammarkit.source import SourceText
from tests.conftest import GRAMMARS

REAL = [path.read_text() for path in sorted(GRAMMARS.glob("*.ebnf"))]

FRAGMENTS = [
    "a", "b", "r1", "root", "x_y", " ", "\n", "\r\n", "\r", "\t", '"', '"lit"', "[", "]", "[a-z]",
    "[z-a]", "(", ")", "|", "*", "+", "?", "{", "}", "{2,1}", "{,3}", ",", "::=", " ::= ", "#",
    "# grammarkit: ignore\n", "\\", "\\x41B", "-", "=", "(=", "\nroot ::= ", "\nr1 ::= ", "\na ::= ",
    "\nb[lazy] ::= ", "\nb[max_tokens=x] ::= ", "\ntrue ::= ", "TagDispatch((\"t\", a))",
    "TagDispatch((\"t\", nope))", 'Regex("[a-")', 'Regex("a")', "Token(1, 2)", "0", "9",
    "99999999999999999", ":", "'", "é", "\n\n",
]
"""Pieces of grammars and of typing mistakes: names, rule starts, open classes and strings."""


def _nodes(result: ParseResult) -> list[object]:
    """Everything a parse result holds, spans included (AST equality ignores spans)."""
    found: list[object] = []
    for rule in result.ast.rules:
        found.append((rule, rule.span, rule.name_span, [a.span for a in rule.attributes]))
        for expr in (rule.body, rule.lookahead):
            if expr is not None:
                found.extend((node, node.span) for node in ast.walk(expr))
    found.append(result.ast.comments)
    found.extend((macro, macro.span) for macro in result.regex_macros)
    return found


def _assert_same(incremental: IncrementalParser, text: str,
                 linter: IncrementalLinter | None = None, placed: bool = True) -> None:
    """The incremental parse (and lint) of ``text`` is the whole one; ``placed=False`` asks
    only for the diagnostics, as the server does for a version with errors."""
    parsed = incremental.update(text)
    expected = parse(text, incremental.root)
    assert parsed.diagnostics == expected.diagnostics  # before the rules are placed
    if linter is not None:  # the linter places them only when there is no error
        linted = lint_parsed(expected, SourceText(text), root=incremental.root)
        assert linter.lint(parsed, SourceText(text)) == linted
    if not placed:
        return
    got = parsed.result
    assert got.diagnostics == expected.diagnostics
    assert _nodes(got) == _nodes(expected)
    assert [c.start for c in parsed.chunks] == sorted(c.start for c in parsed.chunks)
    assert "".join(c.text for c in parsed.chunks) == text
    assert tuple(r for c in parsed.chunks for r in c.rules) == got.ast.rules
    assert [r.span for c in parsed.chunks for r in c.rules] == [r.span for r in got.ast.rules]
    source = SourceText(text)
    assert lint_parsed(got, source, root=incremental.root) == lint_parsed(
        expected, source, root=incremental.root)


@st.composite
def _edits(draw: st.DrawFn, start: str) -> list[str]:
    """Versions of ``start``, each one edit from the one before: typing, deleting, pasting."""
    text = start
    versions = []
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(text)))
        removed = draw(st.sampled_from([0, 0, 1, 2, 6, 40]))
        if draw(st.booleans()):
            inserted = "".join(draw(st.lists(st.sampled_from(FRAGMENTS), max_size=3)))
        else:  # a copy of another part of the text, as a paste would
            source = draw(st.integers(0, len(text)))
            inserted = text[source:source + draw(st.integers(0, 60))]
        text = text[:at] + inserted + text[at + removed:]
        versions.append(text)
    return versions


@settings(max_examples=60)
@given(st.data(), st.sampled_from(REAL), st.sampled_from([0, 1000]))
def test_edits_of_real_grammars_parse_as_a_whole_parse(data: st.DataObject, start: str,
                                                         cold_chunks: int) -> None:
    incremental, linter = (IncrementalParser(cold_chunks=cold_chunks),
                           IncrementalLinter(cold_chunks=cold_chunks))
    _assert_same(incremental, start, linter)
    for text in data.draw(_edits(start)):
        _assert_same(incremental, text, linter, placed=data.draw(st.booleans()))


@settings(max_examples=60)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
                min_size=1, max_size=5), st.sampled_from([0, 1000]), st.booleans())
def test_random_texts_parse_as_a_whole_parse(texts: list[str], cold_chunks: int,
                                             placed: bool) -> None:
    incremental, linter = (IncrementalParser(cold_chunks=cold_chunks),
                           IncrementalLinter(cold_chunks=cold_chunks))
    for k, text in enumerate(texts):
        _assert_same(incremental, text, linter, placed=placed or k == len(texts) - 1)


def test_an_edit_inside_one_rule_reparses_only_that_rule() -> None:
    rules = [f'r{k} ::= "{k}" r{k + 1}?' for k in range(100)]
    text = "root ::= r0\n" + "\n".join(rules) + "\n"
    incremental = IncrementalParser()
    incremental.parse(text)
    edited = text.replace('r50 ::= "50"', 'r50 ::= "fifty"')
    _assert_same(incremental, edited)
    assert incremental.reparsed == 1
    _assert_same(incremental, text.replace("\nr51 ::=", "\ns51 ::="))  # r50 now uses no rule
    assert incremental.reparsed == 2  # s51, and r50 (which sees `s51` next and lost `r51`)


def test_an_open_class_joins_the_rules_it_runs_into() -> None:
    text = 'root ::= a\na ::= "x"\nb ::= [ab\nc ::= "y" ]\nd ::= "z"\n'
    incremental = IncrementalParser(cold_chunks=0)
    _assert_same(incremental, text)
    _assert_same(incremental, text.replace("[ab", "[abc"))


def test_too_many_diagnostics_in_one_rule_fall_back_to_a_whole_parse() -> None:
    text = "root ::= a\na ::= " + " ".join(f"u{k}" for k in range(300)) + "\nb ::= a\n"
    incremental = IncrementalParser(cold_chunks=0)
    _assert_same(incremental, text)
    _assert_same(incremental, text + "c ::= b\n")


def test_lint_findings_of_unchanged_rules_are_reused_and_moved() -> None:
    rules = [f'r{k} ::= ("{k}" | "{k}") [a-cb] r{k + 1}?' for k in range(30)]  # GK207, GK208
    text = "root ::= r0\n" + "\n".join(rules) + '\nr30 ::= "end"{20000}\n'  # GK210
    incremental, linter = IncrementalParser(), IncrementalLinter()
    _assert_same(incremental, text, linter)
    assert linter.relinted == 32  # a new document: every chunk (found in one run)
    edited = text.replace('r20 ::= ("20" | "20")', 'r20 ::= ("20" | "21")')
    _assert_same(incremental, edited, linter)
    assert linter.relinted == 1
    _assert_same(incremental, "# a comment moves every rule\n" + edited, linter)
    assert linter.relinted == 30  # the first chunk is new; the 29 with a GK207 (its message
    # names a line) are linted again; r20 and r30 only move
