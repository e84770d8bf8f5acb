"""``grammarkit test``: golden outputs, exit codes, --update, --coverage, --fail-under."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grammarkit.cli import main

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GOLDEN = HERE / "golden"
UPDATE_GOLDEN = os.environ.get("GRAMMARKIT_UPDATE_GOLDEN") == "1"

GOLDEN_CASES = {
    "test_pass": ["test", "greeting.examples"],
    "test_schema": ["test", "point.schema.json"],
    "test_grammar_path": ["test", "greeting.ebnf"],
    "test_gbnf": ["test", "--coverage", "shopping.gbnf"],
    "test_fail": ["test", "failing.examples"],
    "test_malformed": ["test", "broken.examples"],
    "test_coverage": ["test", "--coverage", "greeting.ebnf"],
    "test_fail_under": ["test", "--fail-under", "90", "greeting.ebnf"],
    "test_coverage_json": ["test", "--coverage", "--format", "json", "greeting.ebnf"],
    "test_no_examples": ["test", "failing.ebnf", "missing.ebnf"],
    "test_grammar_without_examples": ["test", "greeting.ebnf", "../../cli/data/unused.ebnf"],
    "test_empty_directory": ["test", "../golden"],
}


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="grammarkit")


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    args = GOLDEN_CASES[name]
    result = run(args)
    actual = (f"$ grammarkit {shlex.join(args)}\n[exit {result.exit_code}]\n"
              f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")
    golden = GOLDEN / f"{name}.txt"
    if UPDATE_GOLDEN:
        golden.write_text(actual, "utf-8")
    assert actual == golden.read_text("utf-8")


def test_update_rewrites_verdicts_for_review(tmp_path: Path) -> None:
    for name in ("failing.ebnf", "failing.examples"):
        shutil.copy(DATA / name, tmp_path / name)
    result = run(["test", "--update", str(tmp_path / "failing.examples")])
    assert result.exit_code == 0, result.output
    assert "verdicts updated" in result.stdout
    updated = (tmp_path / "failing.examples").read_text("utf-8")
    assert updated.count("--- accept") == 2 and "maybe\n--- reject\n" in updated
    assert "nope\n--- reject 1:3\n" in updated  # the observed position
    assert run(["test", str(tmp_path)]).exit_code == 0


def test_directories_are_searched_and_every_bundled_grammar_passes() -> None:
    grammars = HERE.parents[1] / "grammars"
    result = run(["test", "--format", "json", "--fail-under", "80", str(grammars)])
    assert result.exit_code == 0, result.output
    reports = json.loads(result.stdout)
    assert {Path(r["grammar"]).name for r in reports} == {
        p.name for p in grammars.glob("*.ebnf")}
    assert all(not r["failed"] for r in reports)
