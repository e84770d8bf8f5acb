"""The ``grammarkit`` command line: golden outputs, exit codes, file handling, bad input.

Golden files live in ``tests/cli/golden/``; regenerate them with ``GRAMMARKIT_UPDATE_GOLDEN=1``.
Commands run inside ``tests/cli/data/`` so that paths in the output are short and stable.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grammarkit import Grammar
from grammarkit.cli import main

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
GOLDEN = HERE / "golden"
UPDATE_GOLDEN = os.environ.get("GRAMMARKIT_UPDATE_GOLDEN") == "1"


def run(args: list[str], stdin: bytes | str | None = None) -> Result:
    return CliRunner().invoke(main, args, input=stdin, catch_exceptions=False,
                              prog_name="grammarkit")


def transcript(args: list[str], result: Result) -> str:
    return (f"$ grammarkit {shlex.join(args)}\n[exit {result.exit_code}]\n"
            f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")


GOLDEN_CASES = {
    "lint_text": ["lint", "greeting.ebnf", "undefined.ebnf", "unused.ebnf"],
    "lint_json": ["lint", "--format", "json", "undefined.ebnf", "unused.ebnf"],
    "lint_clean": ["lint", "greeting.ebnf", "messy.ebnf"],
    "lint_strict": ["lint", "--strict", "unused.ebnf"],
    "lint_ignore": ["lint", "--ignore", "GK201,GK202", "--strict", "unused.ebnf"],
    "lint_select_invalid": ["lint", "--select", "XY1", "unused.ebnf"],
    "lint_missing_file": ["lint", "missing.ebnf"],
    "fmt_check": ["fmt", "--check", "."],
    "fmt_diff": ["fmt", "--diff", "messy.ebnf", "greeting.ebnf"],
    "match_accepted": ["match", "greeting.ebnf", "hello, Ada"],
    "match_rejected": ["match", "greeting.ebnf", "hello Ada"],
    "match_rejected_json": ["match", "--format", "json", "greeting.ebnf", "hi, ada"],
    "match_grammar_error": ["match", "undefined.ebnf", "[1]"],
    "match_usage": ["match", "greeting.ebnf"],
    "sample_single_sentence": ["sample", "-n", "2", "unused.ebnf", "--root", "legacy"],
    "sample_json": ["sample", "--format", "json", "-n", "1", "unused.ebnf", "--root", "legacy"],
    "convert_regex": ["convert", "regex", "(ab|c)+[0-9]?"],
    "convert_regex_gbnf": ["convert", "regex", "--to", "gbnf", "(ab|c)+[0-9]?"],
    "convert_regex_lark": ["convert", "regex", "--to", "lark", "(ab|c)+[0-9]?"],
    "convert_regex_error": ["convert", "regex", "a(?=b)"],
    "convert_json_schema": ["convert", "json-schema", "../schemas/enum.schema.json"],
    "convert_json_schema_gbnf": ["convert", "json-schema", "--to", "gbnf",
                                 "../schemas/enum.schema.json"],
    "convert_json_schema_lark": ["convert", "json-schema", "--to", "lark",
                                 "../schemas/enum.schema.json"],
    "convert_json_schema_invalid": ["convert", "json-schema", "../schemas/broken.schema.json"],
    "convert_json_schema_options": ["convert", "json-schema", "--whitespace", "compact",
                                    "--indent", "2", "../schemas/enum.schema.json"],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    args = GOLDEN_CASES[name]
    actual = transcript(args, run(args))
    golden = GOLDEN / f"{name}.txt"
    if UPDATE_GOLDEN:
        golden.write_text(actual, "utf-8")
    assert golden.exists(), f"missing {golden}; run with GRAMMARKIT_UPDATE_GOLDEN=1"
    assert actual == golden.read_text("utf-8")


def test_every_golden_file_has_a_case() -> None:
    assert {path.stem for path in GOLDEN.glob("*.txt")} == set(GOLDEN_CASES)


# -- lint ----------------------------------------------------------------------------------------
def test_lint_recurses_into_directories_and_reads_stdin(tmp_path: Path) -> None:
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    (nested / "x.ebnf").write_text('root ::= "x" y\n')
    (nested / "notes.txt").write_text("not a grammar")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skip.ebnf").write_text("broken ::=")
    result = run(["lint", str(tmp_path), "-"], stdin='root ::= "a"\n')
    assert result.exit_code == 1
    assert f"{nested / 'x.ebnf'}:1:14: GK103" in result.stdout
    assert "skip.ebnf" not in result.stdout
    assert result.stdout.endswith("Found 1 error and 0 warnings in 2 files.\n")


def test_lint_json_is_one_list_over_all_files() -> None:
    result = run(["lint", "--format", "json", str(DATA)])
    report = json.loads(result.stdout)
    assert [(d["code"], Path(d["path"]).name) for d in report] == [
        ("GK103", "undefined.ebnf"), ("GK201", "unused.ebnf"),
    ]
    assert result.exit_code == 1


def test_lint_delegates_schema_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grammarkit.convert import json_schema
    from grammarkit.diagnostics import warning

    schema = tmp_path / "item.schema.json"
    schema.write_text('{"type": "object"}')
    monkeypatch.setattr(json_schema, "lint_schema_file",
                        lambda path: [warning("GK259", f"checked {Path(path).name}", None)],
                        raising=False)
    result = run(["lint", "--format", "json", str(tmp_path)])
    assert [d["message"] for d in json.loads(result.stdout)] == ["checked item.schema.json"]
    assert result.exit_code == 0


def test_lint_reports_hostile_input_as_diagnostics(tmp_path: Path) -> None:
    deep = tmp_path / "deep.ebnf"
    deep.write_text("root ::= " + "(" * 100_000 + '"a"' + ")" * 100_000 + "\n")
    binary = tmp_path / "binary.ebnf"
    binary.write_bytes(b'root ::= "\xff\xfe" # \x00\x80\n')
    result = run(["lint", str(deep), str(binary)])
    assert result.exit_code == 1
    assert "GK111" in result.stdout and "GK113" in result.stdout


# -- fmt -----------------------------------------------------------------------------------------
def test_fmt_rewrites_files_and_leaves_broken_ones(tmp_path: Path) -> None:
    for name in ("messy.ebnf", "greeting.ebnf", "undefined.ebnf"):
        shutil.copy(DATA / name, tmp_path / name)
    result = run(["fmt", str(tmp_path)])
    assert result.exit_code == 1
    assert (tmp_path / "messy.ebnf").read_text() == (
        "# Numbers, written untidily.\n"
        "root ::= sign? digits  # optional sign\n"
        'sign ::= "-" | "+"\n'
        "\n"
        "digits ::= [0-9]+\n"
    )
    for name in ("greeting.ebnf", "undefined.ebnf"):
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes()
    assert "GK103" in result.stderr
    assert result.stderr.endswith(
        "1 file reformatted, 1 file already formatted, 1 file with errors left unchanged.\n")
    assert run(["fmt", "--check", str(tmp_path / "messy.ebnf")]).exit_code == 0


def test_fmt_stdin_writes_stdout() -> None:
    result = run(["fmt", "-"], stdin="root::=(\"a\")   |\"b\"\n")
    assert result.stdout == 'root ::= "a" | "b"\n'
    assert result.exit_code == 0
    assert run(["fmt", "--check", "-"], stdin="root::=\"a\"").exit_code == 1


def test_fmt_keeps_undecodable_bytes_in_comments(tmp_path: Path) -> None:
    path = tmp_path / "latin1.ebnf"
    path.write_bytes(b'root  ::=  "a" # caf\xe9\r\n')
    assert run(["fmt", str(path)]).exit_code == 0
    assert path.read_bytes() == b'root ::= "a"  # caf\xe9\n'


def test_fmt_refuses_text_after_a_nul(tmp_path: Path) -> None:
    path = tmp_path / "nul.ebnf"
    path.write_bytes(b'root ::= "a"\n\x00rest ::= "b"\n')
    result = run(["fmt", str(path)])
    assert result.exit_code == 1
    assert "GK102 unexpected NUL character" in result.stderr
    assert path.read_bytes() == b'root ::= "a"\n\x00rest ::= "b"\n'


def test_fmt_never_writes_a_different_grammar(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from grammarkit.ebnf import printer

    path = tmp_path / "g.ebnf"
    path.write_text('root ::= "a"  |  "b"\n')
    monkeypatch.setattr(printer, "print_grammar", lambda grammar, source: 'root ::= "a"\n')
    result = run(["fmt", str(path)])
    assert result.exit_code == 1
    assert "bug in grammarkit fmt" in result.stderr
    assert path.read_text() == 'root ::= "a"  |  "b"\n'


def test_fmt_root_option(tmp_path: Path) -> None:
    path = tmp_path / "lib.ebnf"
    path.write_text('start ::= "x"   "y"\n')
    assert run(["fmt", str(path)]).exit_code == 1
    assert run(["fmt", "--root", "start", str(path)]).exit_code == 0
    assert path.read_text() == 'start ::= "x" "y"\n'


# -- match, sample -------------------------------------------------------------------------------
def test_match_reads_text_from_a_file_or_stdin(tmp_path: Path) -> None:
    text = tmp_path / "input.txt"
    text.write_bytes(b"hi, Bo")
    grammar = str(DATA / "greeting.ebnf")
    assert run(["match", grammar, "--file", str(text)]).stdout == "accepted\n"
    assert run(["match", grammar, "--file", "-"], stdin=b"hi, bo").exit_code == 1
    assert run(["match", grammar, "hi", "--file", str(text)]).exit_code == 2


def test_sample_sentences_match_the_grammar() -> None:
    result = run(["sample", "--format", "json", "-n", "8", "--seed", "3",
                  str(DATA / "greeting.ebnf")])
    sentences = json.loads(result.stdout)["samples"]
    grammar = Grammar.from_ebnf((DATA / "greeting.ebnf").read_text())
    assert len(sentences) == 8
    assert all(grammar.matches(sentence) for sentence in sentences)
    again = run(["sample", "--format", "json", "-n", "8", "--seed", "3",
                 str(DATA / "greeting.ebnf")])
    assert again.stdout == result.stdout


def test_sample_of_an_empty_language_fails(tmp_path: Path) -> None:
    path = tmp_path / "empty.ebnf"
    path.write_text('root ::= "a" root\n')
    result = run(["sample", str(path)])
    assert result.exit_code == 1
    assert "no sentence" in result.stderr


# -- convert -------------------------------------------------------------------------------------
def test_convert_regex_from_stdin_to_a_file(tmp_path: Path) -> None:
    out = tmp_path / "out.ebnf"
    result = run(["convert", "regex", "-", "-o", str(out)], stdin="[0-9]{2}\n")
    assert result.exit_code == 0
    grammar = Grammar.from_ebnf(out.read_text())
    assert grammar.matches("42") and not grammar.matches("42\n")


def test_convert_regex_python_flavor() -> None:
    result = run(["convert", "regex", "--flavor", "python", "--", r"-?\d+(?#digits)"])
    assert result.exit_code == 0
    grammar = Grammar.from_ebnf(result.stdout)
    assert grammar.matches("-12") and not grammar.matches("x")


SCHEMAS = HERE / "schemas"


@pytest.mark.parametrize(
    ("options", "valid", "invalid"),
    [
        ([], ['{ "x" : 7 }', '{"x": 0, "label": "corner"}'], ['{"x": 100}', '{"label": "origin"}']),
        (["--whitespace", "compact"], ['{"x":7}', '{"x":7,"label":"origin"}'], ['{"x": 7}']),
        (["--indent", "3"], ['{\n   "x": 7\n}'], ['{"x": 7}', '{\n  "x": 7\n}']),
    ],
)
def test_convert_json_schema_options(options: list[str], valid: list[str],
                                     invalid: list[str]) -> None:
    result = run(["convert", "json-schema", *options, str(SCHEMAS / "point.schema.json")])
    assert result.exit_code == 0, result.stderr
    grammar = Grammar.from_ebnf(result.stdout)
    assert [grammar.matches(text) for text in valid] == [True] * len(valid)
    assert [grammar.matches(text) for text in invalid] == [False] * len(invalid)


def test_convert_json_schema_from_stdin_with_warnings(tmp_path: Path) -> None:
    schema = '{"type": "string", "pattern": "a(?=b)"}'
    strict = run(["convert", "json-schema", "-"], stdin=schema)
    assert strict.exit_code == 1 and "GK154" in strict.stderr and not strict.stdout
    out = tmp_path / "out.ebnf"
    lenient = run(["convert", "json-schema", "--lenient", "-", "-o", str(out)], stdin=schema)
    assert lenient.exit_code == 0
    assert "GK254" in lenient.stderr
    assert Grammar.from_ebnf(out.read_text()).matches('"ab"')


# -- entry points --------------------------------------------------------------------------------
def test_console_script_runs_in_a_subprocess() -> None:
    script = Path(sys.executable).with_name("grammarkit")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "grammarkit"]
    completed = subprocess.run([*command, "lint", "undefined.ebnf"], cwd=DATA,
                               capture_output=True, text=True, timeout=60, check=False)
    assert completed.returncode == 1
    assert completed.stdout.startswith("undefined.ebnf:1:14: GK103 rule `valu` is not defined")


def test_python_dash_m() -> None:
    completed = subprocess.run([sys.executable, "-m", "grammarkit", "match", "greeting.ebnf", "hi"],
                               cwd=DATA, capture_output=True, text=True, timeout=60, check=False)
    assert (completed.returncode, completed.stdout) == (0, "accepted\n")


def test_importing_the_cli_stays_light() -> None:
    code = ("import sys, grammarkit.cli; "
            "print(sorted(m for m in ('lark', 'numpy', 'grammarkit.ebnf.parser', "
            "'grammarkit.analysis') if m in sys.modules))")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                               timeout=60, check=True)
    assert completed.stdout.strip() == "[]"
