"""``grammarkit sample`` and ``grammarkit generate`` end to end (a small tokenizer.json)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import grammarkit as gk
from grammarkit import Grammar
from grammarkit.cli import main
from grammarkit.generate.constraint import request_field

HERE = Path(__file__).resolve().parent
GRAMMARS = HERE.parents[1] / "grammars"
POINT = str(HERE / "schemas" / "point.schema.json")


def run(args: list[str]) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="grammarkit")


@pytest.fixture(scope="module")
def tokenizer_json(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A byte-level BPE tokenizer.json with a few merges and ``<|endoftext|>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    merges = [("t", "r"), ("tr", "u"), ("tru", "e"), ("{", '"'), ('"', ":"), ("1", "2")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab, merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens(["<|endoftext|>"])
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tokenizer.save(str(path))
    return str(path)


# -- sample --------------------------------------------------------------------------------------
def test_multi_line_samples_are_numbered_blocks() -> None:
    result = run(["sample", str(GRAMMARS / "csv.ebnf"), "-n", "3", "--seed", "1"])
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if line.startswith("---")] == [
        "--- 1 ---", "--- 2 ---", "--- 3 ---"]
    assert "\\r" in result.stdout  # the CR of CRLF line ends is visible


def test_single_line_samples_one_per_line() -> None:
    result = run(["sample", "--regex", "[a-z]{2,6}@[a-z]{2,5}\\.com", "-n", "4"])
    lines = result.stdout.splitlines()
    assert result.exit_code == 0 and len(lines) == 4
    assert all(Grammar.from_regex("[a-z]{2,6}@[a-z]{2,5}\\.com").matches(x) for x in lines)


def _texts(stdout: str) -> list[str]:
    """The texts of a `sample` or `generate` JSON report."""
    report = json.loads(stdout)
    return report["samples"] if "samples" in report else [c["text"] for c in report["choices"]]


@pytest.mark.parametrize("command", [["sample"], ["generate", "--prompt", "x", "--tokenizer",
                                                   "qwen3.6", "--max-tokens", "12"]])
def test_regex_flavor(command: list[str]) -> None:
    """`--flavor python` reads the pattern as Python's `re` does: `\\Z` is the end (the
    ECMAScript default reads `\\Z` as the letter Z)."""
    python = run([*command, "--regex", "--flavor", "python", "[ab]{3}\\Z", "--seed", "3",
                  "-n", "4", "--format", "json"])
    assert python.exit_code == 0
    assert all(re.fullmatch("[ab]{3}", text) for text in _texts(python.stdout))
    ecma = run([*command, "--regex", "[ab]{3}\\Z", "--seed", "3", "--format", "json"])
    assert ecma.exit_code == 0
    assert all(re.fullmatch("[ab]{3}Z", text) for text in _texts(ecma.stdout))
    alone = run([*command, "--flavor", "python", "--format", "json", "x.ebnf"])
    assert alone.exit_code == 2
    assert json.loads(alone.stdout)["diagnostics"][0]["code"] == "GK359"


def test_python_regexes_go_to_servers_as_ebnf() -> None:
    field, text = request_field(gk.Regex("a.b\\Z", flavor="python"))
    assert field == "ebnf" and gk.Grammar.from_ebnf(text).matches("a-b")
    assert not gk.Grammar.from_ebnf(text).matches("a\nb")


def test_schema_samples_and_coverage_json() -> None:
    result = run(["sample", POINT, "-n", "4", "--coverage", "--format", "json"])
    data = json.loads(result.stdout)
    grammar = Grammar.from_json_schema(Path(POINT))
    assert all(grammar.matches(s) for s in data["samples"]) and len(data["samples"]) == 4
    assert data["coverage"]["rules"]["total"] >= 1 and data["diagnostics"] == []


def test_coverage_report_in_text() -> None:
    result = run(["sample", str(GRAMMARS / "iso8601.ebnf"), "-n", "3", "--coverage"])
    assert result.exit_code == 0
    assert "coverage:" in result.stdout and "never used:" in result.stdout


@pytest.mark.parametrize(("grammar", "code"), [
    ('root ::= Token(128010) "{" [a-z]+ "}"', "GK355"),
    ('root ::= "a"{4294967296}', "GK356"),
    ('root ::= "a" root', "GK357"),
])
def test_sample_failures_say_why(tmp_path: Path, grammar: str, code: str) -> None:
    path = tmp_path / "g.ebnf"
    path.write_text(grammar)
    text = run(["sample", str(path)])
    assert text.exit_code == 1 and code in text.stderr and text.stdout == ""
    as_json = run(["sample", str(path), "--format", "json"])
    data = json.loads(as_json.stdout)
    assert as_json.exit_code == 1 and data["samples"] is None
    assert data["diagnostics"][0]["code"] == code


def test_sample_json_for_a_grammar_with_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.ebnf"
    path.write_text("root ::= valu\n")
    result = run(["sample", str(path), "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["diagnostics"][0]["code"] == "GK103"


def test_token_samples_with_a_tokenizer(tokenizer_json: str) -> None:
    result = run(["sample", "--regex", "(true|12)( (true|12))*", "--tokenizer", tokenizer_json,
                  "-n", "3", "--format", "json", "--max-tokens", "40"])
    data = json.loads(result.stdout)
    grammar = Grammar.from_regex("(true|12)( (true|12))*")
    for item in data["samples"]:
        assert "".join(item["tokens"]) == item["text"]
        if item["finish_reason"] == "stop":
            assert grammar.matches(item["text"])
    shown = run(["sample", "--regex", "true|12", "--tokenizer", tokenizer_json, "-n", "2",
                 "--show-tokens"])
    lines = shown.stdout.split()
    assert shown.exit_code == 0 and len(lines) == 2
    assert {line.replace("│", "") for line in lines} <= {"true", "12"}
    assert any("│" in line for line in lines)  # token boundaries are shown


def test_token_grammar_previews_with_a_tokenizer(tmp_path: Path, tokenizer_json: str) -> None:
    path = tmp_path / "g.ebnf"
    end = 262  # <|endoftext|>: the stop token, also named by the grammar
    path.write_text(f'root ::= "12" Token({end - 1})')
    result = run(["sample", str(path), "--tokenizer", tokenizer_json, "-n", "1",
                  "--format", "json"])
    assert json.loads(result.stdout)["samples"][0]["token_ids"][-1] == end - 1


# -- generate ------------------------------------------------------------------------------------
def test_generate_text_and_json(tokenizer_json: str) -> None:
    args = ["generate", str(GRAMMARS / "iso8601.ebnf"), "--prompt-ids", "1,2",
            "--tokenizer", tokenizer_json, "--seed", "3"]
    text = run(args)
    assert text.exit_code == 0
    assert Grammar.from_ebnf((GRAMMARS / "iso8601.ebnf").read_text()).matches(
        text.stdout.rstrip("\n"))
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert data["choices"][0]["text"] == text.stdout.rstrip("\n")
    assert data["choices"][0]["finish_reason"] == "stop"
    assert data["usage"]["prompt_tokens"] == 2 and data["timing"]["model_calls"] >= 1


def test_generate_stream_prints_the_same_text(tokenizer_json: str) -> None:
    args = ["generate", "--regex", "[a-z]{3,8}( [a-z]{2,5}){0,3}", "--prompt", "hi",
            "--tokenizer", tokenizer_json, "--seed", "5"]
    assert run([*args, "--stream"]).stdout == run(args).stdout


def test_generate_backends_agree_at_temperature_0(tokenizer_json: str) -> None:
    args = ["generate", POINT, "--prompt", "p:", "--tokenizer", tokenizer_json,
            "--temperature", "0", "--format", "json"]
    native = json.loads(run(args).stdout)["choices"][0]
    xgrammar = json.loads(run([*args, "--backend", "xgrammar"]).stdout)["choices"][0]
    assert native["token_ids"] == xgrammar["token_ids"]


def test_generate_length_note(tokenizer_json: str) -> None:
    result = run(["generate", "--regex", "a{30}", "--prompt", "x", "--tokenizer",
                  tokenizer_json, "--max-tokens", "4", "--no-jump-forward"])
    assert result.stdout == "aaaa\n" and "reached --max-tokens" in result.stderr


@pytest.mark.parametrize(("extra", "code", "exit_code"), [
    (["--backend", "nativ"], "GK350", 2),
    (["--prompt-ids", "1,99999"], "GK352", 1),
    (["--temperature", "-1"], "GK359", 2),
    (["--prompt", "x", "--prompt-ids", "1"], "GK359", 2),
])
def test_generate_bad_input(tokenizer_json: str, extra: list[str], code: str,
                            exit_code: int) -> None:
    args = ["generate", "--regex", "a", "--tokenizer", tokenizer_json, *extra]
    if "--prompt" not in extra and "--prompt-ids" not in extra:
        args += ["--prompt", "x"]
    text = run(args)
    assert text.exit_code == exit_code and code in text.stderr
    data = json.loads(run([*args, "--format", "json"]).stdout)
    assert data["choices"] is None and data["diagnostics"][0]["code"] == code


def test_generate_without_a_model_says_what_to_pass() -> None:
    result = run(["generate", "--regex", "a", "--prompt", "x"])
    assert result.exit_code == 2 and "GK354" in result.stderr and "--tokenizer" in result.stderr


def test_generate_with_a_model_folder(tmp_path: Path, tokenizer_json: str) -> None:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json, eos_token="<|endoftext|>")
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer) + 5, n_positions=64, n_embd=8,
                                       n_layer=1, n_head=1))
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    args = ["generate", "--regex", "(true|12)(,(true|12)){0,3}", "--prompt", "list: ",
            "--model", str(tmp_path), "--temperature", "0", "--format", "json"]
    native = json.loads(run(args).stdout)
    xgrammar = json.loads(run([*args, "--backend", "xgrammar"]).stdout)
    choice = native["choices"][0]
    assert Grammar.from_regex("(true|12)(,(true|12)){0,3}").matches(choice["text"])
    assert choice["token_ids"] == xgrammar["choices"][0]["token_ids"]
    assert native["usage"]["prompt_tokens"] == len(tokenizer("list: ")["input_ids"])
    missing = run(["generate", "--regex", "a", "--prompt", "x", "--model",
                   str(tmp_path / "absent")])
    assert missing.exit_code == 2 and "GK353" in missing.stderr


def test_sample_takes_an_installed_tokenizer_by_name(tmp_path: Path) -> None:
    # `check --list-tokenizers` lists llama3 as installed; `sample --tokenizer llama3` looked
    # for it in the Hugging Face cache instead (llama.cpp's chess grammar, a new user's first try)
    path = tmp_path / "chess.ebnf"
    path.write_text('root ::= "1. " move " " move\nmove ::= [a-h] [1-8] | "O-O"\n')
    result = run(["sample", str(path), "--tokenizer", "llama3", "-n", "2", "--format", "json",
                  "--max-tokens", "20"])
    assert result.exit_code == 0, result.output
    samples = json.loads(result.stdout)["samples"]
    grammar = Grammar.from_ebnf(path.read_text())
    assert len(samples) == 2
    assert all(grammar.matches(s["text"]) for s in samples if s["finish_reason"] == "stop")


@pytest.mark.parametrize("command", [
    ["sample", "-n", "2"],
    ["generate", "--prompt", "x", "--tokenizer", "qwen3.6", "--max-tokens", "8"],
    ["check", "--tokenizer", "qwen3.6", "--samples", "5"],
])
def test_lenient_schemas(command: list[str], tmp_path: Path) -> None:
    """A real schema refers to another document: `--lenient` previews it anyway, with one
    warning line (the hint used to send users to `grammarkit convert json-schema`)."""
    schema = tmp_path / "task.schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {
        "options": {"$ref": "grunt-task.json#/additionalProperties"}}}))
    strict = run([*command, str(schema)])
    assert strict.exit_code == 1 and "GK154" in strict.stderr
    assert "add --lenient" in strict.stderr
    lenient = run([*command, str(schema), "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    assert "the lenient conversion left parts of the schema unenforced (1 warning: GK254)" \
        in lenient.stderr
    report = json.loads(run([*command, str(schema), "--lenient", "--format", "json"]).stdout)
    diagnostics = report[0]["diagnostics"] if isinstance(report, list) else report["diagnostics"]
    assert "GK254" in [d["code"] for d in diagnostics]
