"""``grammarkit check``: golden reports, every grammar in grammars/, exit codes, bad input.

Golden files live in ``tests/check/golden/``; regenerate them with ``GRAMMARKIT_UPDATE_GOLDEN=1``
(and re-read the explanations in ``grammars_qwen3.6.txt``). Commands run at the repository root.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import grammarkit as gk
from grammarkit.check import check
from grammarkit.check.tokenizers import LoadedTokenizer
from grammarkit.cli import check as check_command
from grammarkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
UPDATE_GOLDEN = os.environ.get("GRAMMARKIT_UPDATE_GOLDEN") == "1"
SLOWEST = re.compile(r"^slowest mask: .*$", re.MULTILINE)


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="grammarkit")


def _golden(name: str, text: str) -> None:
    path = GOLDEN / f"{name}.txt"
    if UPDATE_GOLDEN:
        path.write_text(text, "utf-8")
    assert text == path.read_text("utf-8")


def test_text_report(tmp_path: Path) -> None:
    args = ["check", "grammars/json.ebnf", "grammars/iso8601.ebnf", "--tokenizer", "llama3",
            "--samples", "50"]
    result = run(args)
    stdout = SLOWEST.sub("slowest mask: <timing>", result.stdout)
    _golden("check_json_llama3", f"$ grammarkit {shlex.join(args)}\n[exit {result.exit_code}]\n"
                                 f"{stdout}")


def test_every_curated_grammar_is_clean_or_explained(qwen36: LoadedTokenizer) -> None:
    """grammars_qwen3.6.txt lists each grammar's findings; its `#` lines explain them."""
    lines = []
    for path in sorted((ROOT / "grammars").glob("*.ebnf")):
        name = f"grammars/{path.name}"
        grammar = gk.Grammar.from_ebnf(path.read_text("utf-8"), path=name)
        report = check(grammar, qwen36.vocab, encoder=qwen36.encoder, samples=50)
        found = [f"{name}: {d.code} {d.position.line}:{d.position.column}" if d.position
                 else f"{name}: {d.code}" for d in report.diagnostics]
        lines.extend(found or [f"{name}: clean"])
    golden = (GOLDEN / "grammars_qwen3.6.txt").read_text("utf-8").splitlines()
    assert lines == [line for line in golden if line and not line.startswith("#")]


def test_json_format_and_exit_code() -> None:
    result = run(["check", "--format", "json", "grammars/iso8601.ebnf", "--tokenizer", "llama3",
                  "--samples", "20"])
    assert result.exit_code == 0
    (report,) = json.loads(result.stdout)
    assert report["path"] == "grammars/iso8601.ebnf" and report["tokenizer"] == "llama3"
    assert report["ok"] and report["diagnostics"] == [] and report["max_tokens"] == 36
    assert report["shortest_completion"]["text"] == "00:00"


def test_error_finding_exits_1_and_select_ignore(tmp_path: Path) -> None:
    grammar = tmp_path / "loop.ebnf"
    grammar.write_text('root ::= "a" root\n')
    result = run(["check", str(grammar), "--tokenizer", "llama3"])
    assert result.exit_code == 1 and f"{grammar}:1:1: GK310" in result.stdout
    ignored = run(["check", str(grammar), "--tokenizer", "llama3", "--ignore", "GK31"])
    assert ignored.exit_code == 0
    bad = run(["check", str(grammar), "--tokenizer", "llama3", "--select", "GK399"])
    assert bad.exit_code == 2 and "GK399" in bad.stderr


def test_stop_token_option(tmp_path: Path) -> None:
    grammar = tmp_path / "yes.ebnf"
    grammar.write_text('root ::= "yes"\n')
    result = run(["check", str(grammar), "--tokenizer", "llama3", "--stop-token", "128009",
                  "--format", "json"])
    assert json.loads(result.stdout)[0]["vocabulary"]["stop_ids"] == [128009]


def test_list_tokenizers() -> None:
    result = run(["check", "--list-tokenizers"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.stdout.splitlines()]
    assert {"qwen3.6", "deepseek-v4", "llama3", "cl100k", "o200k"} <= set(names)


def test_progress_bar_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check_command, "PROGRESS_AFTER_SECONDS", 0.0)
    monkeypatch.setattr(check_command, "interactive", lambda: True)
    result = run(["check", "grammars/iso8601.ebnf", "--tokenizer", "llama3", "--samples", "20"])
    assert "mask-statistics" in result.stderr and "boundaries" in result.stderr
    assert "mask-statistics" not in result.stdout
    monkeypatch.setattr(check_command, "interactive", lambda: False)
    quiet = run(["check", "grammars/iso8601.ebnf", "--tokenizer", "llama3", "--samples", "20"])
    assert quiet.stderr == ""


def test_lint_with_tokenizer(tmp_path: Path) -> None:
    grammar = tmp_path / "quoted.ebnf"
    grammar.write_text('root ::= "\\"" [^"]* "\\""\n')
    assert run(["lint", str(grammar)]).stdout == "All checks passed.\n"
    result = run(["lint", str(grammar), "--tokenizer", "llama3"])
    assert result.exit_code == 0 and f"{grammar}:1:15: GK320" in result.stdout
    assert "Found 0 errors and 1 warning in 1 file." in result.stdout
    ignored = run(["lint", str(grammar), "--tokenizer", "llama3", "--ignore", "GK320"])
    assert ignored.stdout == "All checks passed.\n"
    only_lint = run(["lint", str(grammar), "--tokenizer", "llama3", "--select", "GK2"])
    assert only_lint.stdout == "All checks passed.\n"
    only_check = run(["lint", str(grammar), "--tokenizer", "llama3", "--select", "GK32"])
    assert "GK320" in only_check.stdout


# -- bad input -----------------------------------------------------------------------------------
def test_unknown_tokenizer_lists_known_names() -> None:
    result = run(["check", "grammars/csv.ebnf", "--tokenizer", "gpt-17"])
    assert result.exit_code == 2
    assert "gpt-17: no such file and not a known tokenizer name (known: qwen3.6" in result.stderr
    assert "Traceback" not in result.output


def test_truncated_tokenizer_file(tmp_path: Path, deepseek: LoadedTokenizer) -> None:
    truncated = tmp_path / "tokenizer.json"
    truncated.write_bytes(Path(deepseek.vocab.source).read_bytes()[:5000])
    result = run(["check", "grammars/csv.ebnf", "--tokenizer", str(truncated)])
    assert result.exit_code == 2 and str(truncated) in result.stderr
    assert "truncated" in result.stderr
    (tmp_path / "empty").mkdir()
    unreadable = run(["check", "grammars/csv.ebnf", "--tokenizer", str(tmp_path / "empty")])
    assert unreadable.exit_code == 2 and "no tokenizer.json" in unreadable.stderr


def test_vocabulary_without_stop_token(tmp_path: Path) -> None:
    ranks = tmp_path / "letters.tiktoken"
    ranks.write_text("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n"
                             for b in range(256)))
    result = run(["check", "grammars/iso8601.ebnf", "--tokenizer", str(ranks)])
    assert result.exit_code == 1
    assert "GK311 the vocabulary" in result.stdout and "has no stop token" in result.stdout
    stop = run(["check", "grammars/iso8601.ebnf", "--tokenizer", str(ranks), "--stop-token", "0"])
    assert stop.exit_code == 0, stop.output


def test_schema_that_does_not_convert(tmp_path: Path) -> None:
    schema = tmp_path / "bad.schema.json"
    schema.write_text('{"type": "object", "properties": {"a": {"$ref": "#/nowhere"}}}')
    result = run(["check", str(schema), "--tokenizer", "llama3"])
    assert result.exit_code == 1 and str(schema) in result.stderr
    assert "Traceback" not in result.output
    good = tmp_path / "good.schema.json"
    good.write_text('{"type": "object", "properties": {"a": {"type": "integer"}}}')
    converted = run(["check", str(good), "--tokenizer", "llama3", "--samples", "20"])
    assert converted.exit_code == 0 and f"{good} with llama3" in converted.stdout
