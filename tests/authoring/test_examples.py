"""Example files: the corpus format, located errors, and the documented bad/fixed examples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grammarkit import Grammar, GrammarError
from grammarkit.authoring.example_tests import run_examples, updated_text
from grammarkit.authoring.examples import format_verdict, parse_examples
from grammarkit.source import SourceText

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"


def parse(text: str) -> list:
    return parse_examples(SourceText(text, "g.examples"))


def test_inputs_are_the_lines_between_header_and_verdict() -> None:
    examples = parse("# a comment\n\n=== one ===\na\nb\n--- accept\n"
                     "=== empty ===\n--- reject\n=== trailing newline ===\nx\n\n--- reject 2:1\n")
    assert [(e.title, e.text, e.accept, e.position) for e in examples] == [
        ("one", "a\nb", True, None),
        ("empty", "", False, None),
        ("trailing newline", "x\n", False, (2, 1)),
    ]


@pytest.mark.parametrize(("text", "code", "line"), [
    ("{}\n--- accept\n", "GK400", 1),
    ("=== a ===\n{}\n=== b ===\n[]\n--- accept\n", "GK401", 1),
    ("=== a ===\n{}\n", "GK401", 1),
    ("=== a ===\n{}\n--- maybe\n", "GK402", 3),
    ("=== a ===\n{}\n--- reject 1\n", "GK402", 3),
])
def test_malformed_files_get_located_errors(text: str, code: str, line: int) -> None:
    with pytest.raises(GrammarError) as raised:
        parse(text)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == code
    assert diagnostic.position.line == line
    assert diagnostic.render().startswith(f"g.examples:{line}:1: {code}")


def _documented() -> list[tuple[str, str, str]]:
    text = DOC.read_text("utf-8")
    cases = []
    for match in re.finditer(r"^## (GK4\d\d) [a-z-]+$", text, re.MULTILINE):
        body = text[match.end():].split("\n## ", 1)[0]
        bad, fixed = re.findall(r"```examples\n(.*?)```", body, re.DOTALL)
        cases.append((match.group(1), bad, fixed))
    return cases


def test_every_examples_code_is_documented_with_examples() -> None:
    assert [code for code, _, _ in _documented()] == ["GK400", "GK401", "GK402"]


@pytest.mark.parametrize(("code", "bad", "fixed"), _documented())
def test_documented_examples_behave(code: str, bad: str, fixed: str) -> None:
    with pytest.raises(GrammarError) as raised:
        parse(bad)
    assert code in {d.code for d in raised.value.diagnostics}
    assert len(parse(fixed)) == 1


GRAMMAR = Grammar.from_ebnf('root ::= "{" [a-z]* "}"')


def test_outcomes_check_verdict_and_position() -> None:
    examples = parse("=== ok ===\n{ab}\n--- accept\n=== bad ===\n{a1}\n--- reject 1:3\n"
                     "=== wrong place ===\n{a1}\n--- reject 1:2\n=== wrong verdict ===\n{}\n"
                     "--- reject\n")
    outcomes = run_examples(GRAMMAR, examples)
    assert [o.passed for o in outcomes] == [True, True, False, False]
    assert outcomes[2].failure() == (
        'expected the failure at 1:2, but it is at 1:3: expected one of [a-z] "}" at 1:3, '
        'found "1"')
    assert outcomes[3].failure() == "expected reject, but the grammar accepts it"


def test_update_rewrites_only_verdict_lines() -> None:
    text = "=== a ===\n{}\n--- reject\n\n=== b ===\n{1}\n--- accept\n=== c ===\n{1\n--- reject 9:9\n"
    source = SourceText(text)
    new = updated_text(source, run_examples(GRAMMAR, parse_examples(source)))
    assert new == ("=== a ===\n{}\n--- accept\n\n=== b ===\n{1}\n--- reject\n=== c ===\n{1\n"
                   "--- reject 1:2\n")


def test_format_verdict() -> None:
    assert format_verdict(True) == "--- accept"
    assert format_verdict(False) == "--- reject"
    assert format_verdict(False, (3, 4)) == "--- reject 3:4"
