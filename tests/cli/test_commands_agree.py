"""Every command that reads a grammar or a schema file treats it the same way (issues 8 and 12).

``match``, ``lint`` and ``fmt`` were fixed first; ``sample``, ``generate`` and ``check`` read
their inputs through other paths, which kept the old behaviour: a missing file printed plain
text under ``--format json``, a device was called "no such file", a llama.cpp ``.gbnf`` file got
``GK101`` and a hint about ``""``, and schema hints told the command line to ``pass
lenient=True`` (or, in ``lint``, to add a ``--lenient`` that ``lint`` does not have).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from grammarkit.cli import main

GENERATE = ["generate", "--prompt", "x", "--format", "json"]
SAMPLE = ["sample", "-n", "1", "--format", "json"]
UNIQUE = '{"type": "array", "uniqueItems": true}'
"""A schema no command converts without --lenient (GK154)."""


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="grammarkit")


# -- issue 8, item 21: with --format json every outcome is JSON on stdout ------------------------
@pytest.mark.parametrize(("command", "empty"), [(SAMPLE, "samples"), (GENERATE, "choices")])
def test_unreadable_inputs_are_json_too(tmp_path: Path, command: list[str], empty: str) -> None:
    missing = str(tmp_path / "missing.ebnf")
    result = run([*command, missing])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert report[empty] is None
    (diagnostic,) = report["diagnostics"]
    assert diagnostic["code"] == "GK171" and "no such file" in diagnostic["message"]
    bad_schema = tmp_path / "bad.schema.json"
    bad_schema.write_text("{nope")
    report = json.loads(run([*command, str(bad_schema)]).stdout)
    assert report["diagnostics"][0]["code"] == "GK171"


def test_unreadable_tokenizer_is_json_too(tmp_path: Path) -> None:
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"')
    sparse = tmp_path / "sparse.tiktoken"
    sparse.write_bytes(b"aGVsbG8= 16777215")
    result = run([*SAMPLE, str(grammar), "--tokenizer", str(sparse)])
    assert result.exit_code == 2
    assert "out of range" in json.loads(result.stdout)["diagnostics"][0]["message"]


@pytest.mark.parametrize("options", [["--select", "ZZZ9"], ["--tokenizer", "SPARSE"]])
def test_lint_json_is_one_list_on_usage_errors_too(tmp_path: Path, options: list[str]) -> None:
    # `lint --help`: "with --format json the report is always one JSON list on stdout"
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"')
    sparse = tmp_path / "sparse.tiktoken"
    sparse.write_bytes(b"aGVsbG8= 16777215")
    args = [str(sparse) if word == "SPARSE" else word for word in options]
    result = run(["lint", "--format", "json", *args, str(grammar)])
    assert result.exit_code == 2
    (diagnostic,) = json.loads(result.stdout)
    assert diagnostic["code"] in ("GK171", "GK174")
    assert ("ZZZ9" if "--select" in options else "out of range") in diagnostic["message"]


@pytest.mark.parametrize(("args", "empty"), [
    (["match", "MISSING", "x", "--format", "json"], {"accepted": None,
                                                     "ignored_final_line_break": False}),
    (["match", "--format=json", "--timeout", "-1", "MISSING", "x"], {"accepted": None,
                                                                     "ignored_final_line_break": False}),
    (["convert", "regex", "--format", "json", "--flavor", "perl", "a"], {"grammar": None}),
    (["convert", "json-schema", "MISSING", "--format", "json"], {"grammar": None}),
    (["lint", "--format", "json", "MISSING"], None),
    (["sample", "--format", "json", "-n", "zero", "MISSING"], {"samples": None}),
    (["generate", "--format", "json", "--max-tokens", "many", "MISSING"], {"choices": None}),
    (["complete", "--format", "json", "--url", "u", "--model", "m", "MISSING"],
     {"choices": None}),
    (["check", "--format", "json", "--samples", "none", "MISSING"],
     [{"path": None, "tokenizer": None, "ok": False}]),
    (["test", "--format", "json", "MISSING"],
     [{"path": None, "grammar": None, "passed": 0, "failed": []}]),
])
def test_errors_in_the_arguments_are_json_too(tmp_path: Path, args: list[str],
                                              empty: Any) -> None:
    # click reads the arguments before the command body: a missing file or a bad option value
    # was click's plain `Error: ...` even with --format json
    missing = str(tmp_path / "missing.ebnf")
    result = run([missing if word == "MISSING" else word for word in args])
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    if isinstance(empty, list):  # a list of reports (check, test): the failure's one report
        (report,) = report
        empty = empty[0]
    diagnostics = report if empty is None else report.pop("diagnostics")
    assert empty is None or report == empty
    (diagnostic,) = diagnostics
    assert diagnostic["code"] == "GK174" and "Invalid value" in diagnostic["message"]


@pytest.mark.parametrize(("args", "code"), [
    (["check", "--format", "json", "--tokenizer", "no-such-vocabulary", "GRAMMAR"], "GK171"),
    (["check", "--format", "json", "GRAMMAR"], "GK174"),  # no --tokenizer
    (["test", "--format", "json", "EXAMPLES"], "GK400"),
])
def test_failures_in_the_body_of_list_commands_are_json(tmp_path: Path, args: list[str],
                                                        code: str) -> None:
    # `check --format json --tokenizer nope` printed click's `Error: --tokenizer: ...` as text
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"\n')
    examples = tmp_path / "g.examples"
    examples.write_text("a\n")  # no `=== title ===` header
    paths = {"GRAMMAR": str(grammar), "EXAMPLES": str(examples)}
    result = run([paths.get(word, word) for word in args])
    assert result.exit_code in (1, 2) and result.stderr == ""
    (report,) = json.loads(result.stdout)
    assert report["path"] is None and [d["code"] for d in report["diagnostics"]] == [code]


def test_errors_in_the_arguments_stay_text_without_format_json(tmp_path: Path) -> None:
    result = run(["match", str(tmp_path / "missing.ebnf"), "--", "--format", "json"])
    assert result.exit_code == 2
    assert result.stdout == "" and "does not exist" in result.stderr


def test_check_json_reports_grammar_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ebnf"
    broken.write_text("root ::= valu\n")
    schema = tmp_path / "unique.schema.json"
    schema.write_text(UNIQUE)
    tiny = tmp_path / "tiny.tiktoken"
    tiny.write_bytes(b"YQ== 0\nWw== 1\nXQ== 2\n")
    result = run(["check", "--format", "json", "--tokenizer", str(tiny), str(broken), str(schema)])
    assert result.exit_code == 1
    reports = json.loads(result.stdout)  # used to be [] with the errors as text on stderr
    assert [(r["path"], r["ok"]) for r in reports] == [(str(broken), False), (str(schema), False)]
    assert [[d["code"] for d in r["diagnostics"]] for r in reports] == [["GK103"], ["GK154"]]


def test_a_device_is_not_called_missing() -> None:
    result = run(["sample", "/dev/null"])
    assert result.exit_code == 2
    assert "not a regular file (a device)" in result.stderr and "no such file" not in result.stderr


# -- issue 12, item 6: GBNF files ---------------------------------------------------------------
LLAMA_LIST = 'root ::= item+\nitem ::= "- " [a-z]+ "\\n"\nws ::= | " " | "\\n"\n'
"""llama.cpp's style: an empty alternative, which XGrammar EBNF spells ``""``."""


def test_sample_reads_gbnf_files(tmp_path: Path) -> None:
    path = tmp_path / "list.gbnf"
    path.write_text(LLAMA_LIST)
    result = run([*SAMPLE, str(path)])
    assert result.exit_code == 0, result.stdout
    (text,) = json.loads(result.stdout)["samples"]
    assert re.fullmatch(r"(- [a-z]+\n)+", text)


def test_gbnf_text_in_an_ebnf_file_gets_the_gbnf_note(tmp_path: Path) -> None:
    path = tmp_path / "list.ebnf"
    path.write_text(LLAMA_LIST)
    result = run(["sample", str(path)])
    assert result.exit_code == 1
    assert "GK173" in result.stderr and "grammarkit convert gbnf" in result.stderr


# -- issue 12, item 7: hints name what the command showing them accepts -------------------------
def _options_of(command: list[str]) -> str:
    """The ``--help`` of ``command`` (its name: one word, or two for ``convert``)."""
    return run([*command[: 2 if command[0] == "convert" else 1], "--help"]).stdout


@pytest.mark.parametrize("command", [["lint"], ["sample"], ["generate", "--prompt", "x"],
                                     ["check", "--tokenizer", "TINY"],
                                     ["convert", "json-schema"]])
def test_schema_hints_name_options_of_the_command_or_of_convert(tmp_path: Path,
                                                                command: list[str]) -> None:
    schema = tmp_path / "unique.schema.json"
    schema.write_text(UNIQUE)
    tiny = tmp_path / "tiny.tiktoken"
    tiny.write_bytes(b"YQ== 0\nWw== 1\nXQ== 2\n")
    args = [str(tiny) if word == "TINY" else word for word in command]
    result = run([*args, str(schema)])
    assert result.exit_code == 1
    shown = result.stdout + result.stderr
    hints = [line for line in shown.splitlines() if "help:" in line]
    assert hints and "GK154" in shown and "lenient=True" not in shown
    options = _options_of(command)
    for hint in hints:
        for option in re.findall(r"--[a-z][a-z-]+", hint):
            assert option in options or f"grammarkit convert json-schema {option}" in hint, hint


def test_remote_generation_asks_for_token_ids_on_the_command_line(tmp_path: Path) -> None:
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"')
    remote = ["--backend", "remote", "--url", "http://127.0.0.1:9", str(grammar)]
    result = run([*GENERATE, *remote])  # refused before any request is sent
    assert result.exit_code == 2
    (diagnostic,) = json.loads(result.stdout)["diagnostics"]
    assert diagnostic["code"] == "GK359" and "--prompt-ids" in diagnostic["message"]
    result = run(["generate", "--prompt-ids", "1,-3", "--format", "json", *remote])
    (diagnostic,) = json.loads(result.stdout)["diagnostics"]  # the client's own code, unwrapped
    assert diagnostic["code"] == "GK370" and diagnostic["message"].startswith("token ids")


def test_an_unusable_cache_directory_is_one_warning_line_per_problem(tmp_path: Path) -> None:
    # issue 14, bad input: a cache directory that cannot be used costs "a warning at most"; the
    # command line printed Python's `file.py:172: CacheWarning: ...` with a source line, per file
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a" [a-z]*\n')
    tiny = tmp_path / "tiny.tiktoken"
    tiny.write_bytes(b"YQ== 0\nYg== 1\nYWI= 2\n")
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("")
    result = subprocess.run(
        [sys.executable, "-m", "grammarkit", "check", "--tokenizer", str(tiny), str(grammar)],
        check=False, capture_output=True, text=True, timeout=120,
        env={**os.environ, "GRAMMARKIT_CACHE_DIR": str(not_a_directory)})
    assert result.returncode in (0, 1) and "findings:" in result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert lines == sorted(set(lines), key=lines.index)  # no message twice
    assert lines and all(line.startswith("warning: cannot ") for line in lines)
    assert f"cache files in {not_a_directory}" in lines[0]
