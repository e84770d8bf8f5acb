"""CLI edges found by hostile input (issue 8) and a new user's first hour (issue 12).

Each test carries the failing input; see the golden transcripts in ``test_cli.py`` for the
ordinary outputs.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from grammarkit import Grammar
from grammarkit.cli import main

DATA = Path(__file__).resolve().parent / "data"
GREETING = str(DATA / "greeting.ebnf")


def run(args: list[str], stdin: bytes | str | None = None) -> Result:
    return CliRunner().invoke(main, args, input=stdin, catch_exceptions=False,
                              prog_name="grammarkit")


def run_process(args: list[str], cwd: Path, **options: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grammarkit", *args], cwd=cwd, text=True,
                          capture_output=True, timeout=60, check=False, **options)  # type: ignore[call-overload]


# -- fmt: never lose data ------------------------------------------------------------------------
def _limit_file_size() -> None:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))


def test_fmt_keeps_the_file_when_the_write_fails(tmp_path: Path) -> None:
    path = tmp_path / "messy.ebnf"
    original = (DATA / "messy.ebnf").read_bytes()
    path.write_bytes(original)
    completed = run_process(["fmt", str(path)], tmp_path, preexec_fn=_limit_file_size)
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert f"cannot write {path}" in completed.stderr
    assert path.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["messy.ebnf"]  # no temporary left


def test_fmt_replaces_the_file_in_one_step(tmp_path: Path) -> None:
    path = tmp_path / "messy.ebnf"
    shutil.copy(DATA / "messy.ebnf", path)
    path.chmod(0o640)
    inode = path.stat().st_ino
    assert run(["fmt", str(path)]).exit_code == 0
    assert path.stat().st_mode & 0o777 == 0o640  # permissions kept
    assert path.stat().st_ino != inode  # renamed into place, never truncated
    assert sorted(p.name for p in tmp_path.iterdir()) == ["messy.ebnf"]


def test_a_new_output_file_gets_the_usual_permissions(tmp_path: Path) -> None:
    output = tmp_path / "regex.ebnf"
    umask = os.umask(0o022)
    try:
        assert run(["convert", "regex", "ab", "-o", str(output)]).exit_code == 0
    finally:
        os.umask(umask)
    assert stat.S_IMODE(output.stat().st_mode) == 0o644  # not the temporary file's 0600


def test_output_to_a_stream_is_written_as_a_stream(tmp_path: Path) -> None:
    assert run(["convert", "regex", "ab", "-o", "/dev/null"]).exit_code == 0
    fifo = tmp_path / "out.ebnf"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    assert run(["convert", "regex", "ab", "-o", str(fifo)]).exit_code == 0
    reader.join(timeout=10)
    assert received and "root ::=" in received[0]
    assert fifo.exists() and stat.S_ISFIFO(fifo.stat().st_mode)  # not replaced by a file


def test_fmt_never_writes_a_text_that_parses_to_other_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round trip guards every write (and every patch); ``--check`` writes nothing."""
    from grammarkit.ebnf import printer

    path = tmp_path / "g.ebnf"
    path.write_text('root ::= "a"|"b"\n')
    monkeypatch.setattr(printer, "print_grammar", lambda grammar, text=None: 'root ::= "c"\n')
    for options in ([], ["--diff"]):
        result = run(["fmt", *options, str(path)])
        assert result.exit_code == 1
        assert "would change its rules" in result.stderr
    assert path.read_text() == 'root ::= "a"|"b"\n'
    result = run(["fmt", "--check", str(path)])
    assert result.exit_code == 1 and "would reformat" in result.stderr


def test_lint_reads_a_named_json_file_as_a_schema(tmp_path: Path) -> None:
    """SchemaStore names its schemas `tsconfig.json`, not `tsconfig.schema.json`: a `.json` file
    named on the command line is linted as a JSON Schema, not as 200 EBNF errors."""
    schema = tmp_path / "point.json"
    schema.write_text((DATA.parent / "schemas" / "point.schema.json").read_text())
    result = run(["lint", str(schema)])
    assert result.exit_code == 0, result.stdout
    assert "GK102" not in result.stdout and "All checks passed." in result.stdout
    broken = tmp_path / "broken.json"
    broken.write_text((DATA.parent / "schemas" / "broken.schema.json").read_text())
    expected = run(["lint", str(DATA.parent / "schemas" / "broken.schema.json")])
    result = run(["lint", str(broken)])
    assert result.exit_code == expected.exit_code == 1
    assert "GK102" not in result.stdout


def test_fmt_diff_without_a_final_newline_is_a_valid_patch(tmp_path: Path) -> None:
    path = tmp_path / "g.ebnf"
    path.write_text('root ::= "a"|"b"')
    result = run(["fmt", "--diff", str(path)])
    assert result.exit_code == 1
    assert "\\ No newline at end of file\n" in result.stdout
    patch = shutil.which("patch")
    if patch is None:  # the marker is still checked above
        return
    copy = tmp_path / "copy.ebnf"
    shutil.copy(path, copy)
    applied = subprocess.run([patch, str(copy)], input=result.stdout, text=True,
                             capture_output=True, timeout=30, check=False)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert copy.read_text() == 'root ::= "a" | "b"\n'


# -- directories: regular files only -------------------------------------------------------------
@pytest.mark.parametrize("args", [["lint"], ["fmt", "--check"]])
def test_a_fifo_in_a_directory_is_skipped(tmp_path: Path, args: list[str]) -> None:
    os.mkfifo(tmp_path / "pipe.ebnf")
    (tmp_path / "ok.ebnf").write_text('root ::= "a"\n')
    completed = run_process([*args, str(tmp_path)], tmp_path)  # used to block forever
    assert completed.returncode == 0, completed.stderr
    output = completed.stdout + completed.stderr  # lint reports on stdout, fmt on stderr
    assert f"{tmp_path / 'pipe.ebnf'}: GK172 skipped: not a regular file (a FIFO)" in output


def test_lint_json_reports_skipped_and_unreadable_files(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.ebnf")
    (tmp_path / "ok.ebnf").write_text('root ::= "a"\n')
    result = run(["lint", "--format", "json", str(tmp_path)])
    report = json.loads(result.stdout)
    assert [(d["code"], d["severity"]) for d in report] == [("GK172", "note")]
    assert result.exit_code == 0


def test_an_explicitly_named_fifo_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.ebnf"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text('root ::= "a"\n'))
    writer.start()
    result = run(["lint", str(fifo)])
    writer.join(timeout=10)
    assert result.exit_code == 0 and "All checks passed." in result.stdout


def test_a_device_is_refused(tmp_path: Path) -> None:
    result = run(["lint", "/dev/zero"])  # used to read until memory ran out
    assert result.exit_code == 2
    assert "/dev/zero: GK171 cannot read /dev/zero: not a regular file" in result.stdout
    result = run(["match", GREETING, "--file", "/dev/zero"])
    assert result.exit_code == 2 and "not a regular file (a device)" in result.stderr


# -- match: how the text gets in -----------------------------------------------------------------
def test_match_text_starting_with_a_dash() -> None:
    grammar = Grammar.from_ebnf('root ::= "- " [a-z]+').to_ebnf()
    assert run(["match", "-", "--", "- milk"], stdin=grammar).stdout == "accepted\n"
    assert run(["match", "--text", "- milk", "-"], stdin=grammar).stdout == "accepted\n"
    help_text = run(["match", "--help"]).stdout
    assert "--text" in help_text and "--" in help_text and "final line break" in help_text


def test_match_text_starting_with_a_dash_without_dashes_says_how(tmp_path: Path) -> None:
    grammar = tmp_path / "list.ebnf"
    grammar.write_text('root ::= "- " [a-z]+\n')
    result = run(["match", str(grammar), "- milk"])
    assert result.exit_code == 2
    assert "grammarkit match GRAMMAR -- '- milk'" in result.stderr
    assert "--text" in result.stderr
    result = run(["match", str(grammar), "--fromat", "json", "x"])  # a misspelt long option
    assert result.exit_code == 2 and "--format" in result.stderr
    assert "starts with `-`" not in result.stderr


def test_match_timeout_is_a_diagnostic_naming_the_option(tmp_path: Path) -> None:
    grammar = tmp_path / "ambiguous.ebnf"
    grammar.write_text('root ::= x\nx ::= x x | "a" | ""\n')
    text = tmp_path / "long.txt"
    text.write_text("a" * 3000)
    result = run(["match", "--timeout", "0.3", str(grammar), "--file", str(text)])
    assert result.exit_code == 1 and result.stdout == ""
    assert f"{text}: GK122 matching did not finish within 0.3 s" in result.stderr
    assert "--timeout" in result.stderr and "timeout=" not in result.stderr
    result = run(["match", "--format", "json", "--timeout", "0.3", str(grammar), "a" * 3000])
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["accepted"] is None
    assert [d["code"] for d in report["diagnostics"]] == ["GK122"]
    assert run(["match", "--timeout", "0", str(grammar), "a" * 50]).stdout == "accepted\n"


def test_examples_past_the_match_timeout_are_an_input_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from grammarkit.authoring import example_tests
    from grammarkit.automata.earley import MatchTimeout

    def too_slow(grammar: Grammar, examples: list[object]) -> list[object]:
        raise MatchTimeout(60.0, 615, 3000)

    (tmp_path / "amb.ebnf").write_text('root ::= x\nx ::= x x | "a" | ""\n')
    (tmp_path / "amb.examples").write_text("=== long ===\n" + "a" * 3000 + "\n--- accept\n")
    monkeypatch.setattr(example_tests, "run_examples", too_slow)
    result = run(["test", str(tmp_path / "amb.examples")])
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "matching did not finish within 60 s" in result.stderr


def test_match_text_from_stdin(tmp_path: Path) -> None:
    assert run(["match", GREETING, "--file", "-"], stdin="hi, Bo\n").stdout == "accepted\n"
    assert run(["match", GREETING], stdin="hi, Bo").exit_code == 2  # stdin only when asked


def test_match_file_with_a_final_newline(tmp_path: Path) -> None:
    text = tmp_path / "instance.txt"
    text.write_bytes(b"hi, Bo\n")
    result = run(["match", GREETING, "--file", str(text)])
    assert (result.exit_code, result.stdout) == (0, "accepted\n")
    text.write_bytes(b"hi, Bo\r\n")
    assert run(["match", GREETING, "--file", str(text)]).exit_code == 0
    text.write_bytes(b"hi, Bo\n\n")  # only one final line break is forgiven
    assert run(["match", GREETING, "--file", str(text)]).exit_code == 1
    assert run(["match", GREETING, "hi, Bo\n"]).exit_code == 1  # TEXT is taken exactly


def test_match_file_keeps_a_newline_the_grammar_wants(tmp_path: Path) -> None:
    grammar = tmp_path / "line.ebnf"
    grammar.write_text('root ::= [a-z]+ "\\n"\n')
    text = tmp_path / "line.txt"
    text.write_bytes(b"abc\n")
    assert run(["match", str(grammar), "--file", str(text)]).exit_code == 0


def test_match_explains_token_ids(tmp_path: Path) -> None:
    grammar = tmp_path / "tool.ebnf"
    grammar.write_text('root ::= Token(128010) "{" [a-z]* "}"\n')
    result = run(["match", str(grammar), "{}"])
    assert result.exit_code == 1
    assert "GK175" in result.stderr and "Token(128010)" in result.stderr
    assert "TokenMatcher" in result.stderr
    assert "grammarkit sample GRAMMAR --tokenizer" in result.stderr  # the CLI's own way


# -- --format json: every outcome is JSON on stdout ----------------------------------------------
def test_match_json_on_grammar_errors() -> None:
    result = run(["match", "--format", "json", str(DATA / "undefined.ebnf"), "[1]"])
    report = json.loads(result.stdout)
    assert report["accepted"] is None
    assert [d["code"] for d in report["diagnostics"]] == ["GK103"]
    assert result.exit_code == 1


def test_match_json_on_usage_and_input_errors(tmp_path: Path) -> None:
    report = json.loads(run(["match", "--format", "json", GREETING]).stdout)
    assert report["accepted"] is None and report["diagnostics"][0]["code"] == "GK174"
    unreadable = tmp_path / "secret.txt"
    unreadable.write_text("x")
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):  # running as root
        return
    result = run(["match", "--format", "json", GREETING, "--file", str(unreadable)])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["diagnostics"][0]["code"] == "GK171"


def test_convert_json_on_success_and_failure() -> None:
    ok = run(["convert", "regex", "--format", "json", "[0-9]+"])
    report = json.loads(ok.stdout)
    assert Grammar.from_ebnf(report["grammar"]).matches("42") and report["diagnostics"] == []
    bad = run(["convert", "regex", "--format", "json", "a(?=b)"])
    report = json.loads(bad.stdout)
    assert report["grammar"] is None and report["diagnostics"][0]["code"] == "GK130"
    assert bad.exit_code == 1


# -- GBNF ----------------------------------------------------------------------------------------
LLAMA_LIST = (
    "# a list, in llama.cpp's own grammars/list.gbnf style\n"
    'root ::= item+\nitem ::= "- " [^\\r\\n\\x0b\\x0c\\x85\\u2028\\u2029]+ "\\n"\n'
    'ws ::= | " " | "\\n"\n'
)


def test_convert_gbnf(tmp_path: Path) -> None:
    path = tmp_path / "list.gbnf"
    path.write_text(LLAMA_LIST)
    result = run(["convert", "gbnf", str(path)])
    assert result.exit_code == 0, result.stderr
    assert Grammar.from_ebnf(result.stdout).matches("- milk\n- eggs\n")
    broken = tmp_path / "broken.gbnf"
    broken.write_text('root ::= "a" (\n')
    result = run(["convert", "gbnf", str(broken)])
    assert result.exit_code == 1 and f"{broken}:2:1: GK141" in result.stderr


def test_lint_and_fmt_read_gbnf_files(tmp_path: Path) -> None:
    (tmp_path / "list.gbnf").write_text(LLAMA_LIST)
    result = run(["lint", str(tmp_path)])
    assert "GK101" not in result.stdout
    assert "GK201" in result.stdout  # `ws` is unused, found in the converted grammar
    assert "list.gbnf" in result.stdout
    assert run(["fmt", "--check", str(tmp_path)]).exit_code == 0


def test_gbnf_fed_as_ebnf_gets_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "list.ebnf"
    path.write_text(LLAMA_LIST)
    result = run(["lint", str(path)])
    assert result.exit_code == 1
    assert "GK173" in result.stdout and f"convert gbnf {path} -o" in result.stdout
    result = run(["lint", "-"], stdin=LLAMA_LIST)
    assert "GK173" in result.stdout and "convert gbnf - -o" in result.stdout
    result = run(["match", str(path), "--text", "- milk\n"])  # and wherever a grammar loads
    assert result.exit_code == 1 and "GK173" in result.stderr


# -- help texts ----------------------------------------------------------------------------------
def test_regex_flavors_are_explained_in_help() -> None:
    help_text = " ".join(run(["convert", "regex", "--help"]).stdout.split())
    assert "ASCII" in help_text and "newline" in help_text


def test_every_command_module_is_registered_and_loaded_only_when_run() -> None:
    # Commands are imported lazily (start-up cost): a module defining `command` that is
    # missing from COMMANDS would silently vanish from the command line.
    import importlib
    import pkgutil

    import click

    from grammarkit import cli

    modules = [info.name for info in pkgutil.iter_modules(cli.__path__)]
    defining = sorted(name for name in modules
                      if hasattr(importlib.import_module(f"grammarkit.cli.{name}"), "command"))
    assert defining == sorted(cli.COMMANDS)
    for name in cli.COMMANDS:
        assert cli.main.get_command(click.Context(cli.main), name) is not None
    loaded = subprocess.run(
        [sys.executable, "-c", ("import sys; from grammarkit.cli import main; "
                                "print(sorted(m for m in sys.modules "
                                "if m.startswith('grammarkit.cli.')))")],
        check=True, capture_output=True, text=True).stdout
    assert loaded.strip() == "[]"


@pytest.mark.parametrize("args", [
    ["lint", "NUL"], ["fmt", "--check", "NUL"], ["check", "--tokenizer", "qwen3.6", "NUL"],
    ["test", "NUL"], ["diagram", "NUL"], ["convert", "json-schema", "NUL"],
    ["convert", "gbnf", "NUL"], ["convert", "regex", "a", "-o", "NUL"],
    ["match", "GRAMMAR", "--file", "NUL"], ["complete", "--url", "u", "--model", "m", "NUL"],
])
def test_a_file_name_with_a_nul_byte_is_a_usage_error(args: list[str], tmp_path: Path) -> None:
    # click's exists=True check raised `ValueError: embedded null byte` (found by the fuzz test)
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"\n')
    names = {"NUL": "g\x00.ebnf", "GRAMMAR": str(grammar)}
    result = run([names.get(word, word) for word in args])
    assert result.exit_code == 2, result.output
    assert "contains a NUL byte" in result.stderr and result.exception is not None
    assert isinstance(result.exception, SystemExit)


def test_the_command_line_skips_the_final_collections_unless_xgrammar_is_loaded(
        tmp_path: Path) -> None:
    grammar = tmp_path / "g.ebnf"
    grammar.write_text('root ::= "a"+\n')
    code = ("import atexit, gc, sys\n{load}from grammarkit.cli import main\n"
            "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0))\n"
            f"main(['match', {str(grammar)!r}, 'aaa'])\n")
    for load, frozen in (("", "True"), ("import xgrammar\n", "False")):
        done = subprocess.run([sys.executable, "-c", code.format(load=load)], cwd=tmp_path,
                              text=True, capture_output=True, check=False,
                              env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["accepted", "frozen", frozen]
        assert "leaked" not in done.stderr  # nanobind's report of instances alive at exit
