"""docs/diagnostics.md documents every code the package emits, with examples that behave."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import grammarkit
from grammarkit.analysis.lint import lint
from grammarkit.analysis.rules import RULES

PACKAGE = Path(grammarkit.__file__).parent
DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
HEADING = re.compile(r"^## (GK\d{3}|GK\d\dx) ([a-z0-9-]+)$", re.MULTILINE)
EBNF_BLOCK = re.compile(r"```ebnf\n(.*?)```", re.DOTALL)


def _sections() -> dict[str, tuple[str, str]]:
    """Code -> (name, section text)."""
    text = DOC.read_text("utf-8")
    found = list(HEADING.finditer(text))
    sections = {}
    for k, match in enumerate(found):
        end = found[k + 1].start() if k + 1 < len(found) else len(text)
        assert match.group(1) not in sections, f"{match.group(1)} is documented twice"
        sections[match.group(1)] = (match.group(2), text[match.end():end])
    return sections


def _emitted_codes() -> set[str]:
    codes = set()
    for path in PACKAGE.rglob("*.py"):
        codes.update(re.findall(r'"(GK\d\d\d)"', path.read_text("utf-8")))
    return codes


def test_every_emitted_code_is_documented() -> None:
    emitted = _emitted_codes()
    assert {rule.code for rule in RULES} <= emitted
    documented = set(_sections())
    missing = sorted(emitted - documented)
    assert not missing, f"add these codes to docs/diagnostics.md: {missing}"


def test_lint_rules_are_documented_under_their_names() -> None:
    sections = _sections()
    for rule in RULES:
        assert sections[rule.code][0] == rule.name


def _examples() -> list[tuple[str, str, str]]:
    cases = []
    for code, (_, body) in _sections().items():
        blocks = EBNF_BLOCK.findall(body)
        if len(blocks) == 2:
            cases.append((code, blocks[0], blocks[1]))
    return cases


def test_lint_rules_and_parser_errors_have_bad_and_fixed_examples() -> None:
    with_examples = {code for code, _, _ in _examples()}
    expected = {rule.code for rule in RULES}
    expected |= {f"GK1{n:02d}" for n in range(1, 16)} - {"GK111", "GK113"}
    assert expected <= with_examples


@pytest.mark.parametrize(("code", "bad", "fixed"), _examples())
def test_examples_behave_as_documented(code: str, bad: str, fixed: str) -> None:
    assert code in {d.code for d in lint(bad)}
    fixed_found = lint(fixed)
    assert not any(d.is_error for d in fixed_found), fixed_found
    assert code not in {d.code for d in fixed_found}


def test_suppression_example_is_silent() -> None:
    text = DOC.read_text("utf-8")
    intro = text[: text.index("# Errors")]
    (example,) = EBNF_BLOCK.findall(intro)
    assert "grammarkit: ignore" in example
    assert lint(example) == []
