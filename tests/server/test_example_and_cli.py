"""The example in examples/, ``grammarkit complete`` and the ``remote`` backend, each against the
session's real server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

import grammarkit as gk
from grammarkit.cli import main
from grammarkit.client import APIConnectionError
from grammarkit.generate.backend import get_backend
from grammarkit.generate.remote import RemoteBackend
from tests.conftest import REPO_ROOT
from tests.server.conftest import API_KEY, Server


def test_example_gets_schema_json(server: Server) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GRAMMARKIT_API_KEY": API_KEY}
    result = subprocess.run([sys.executable, "examples/complete_json_schema.py", server.url],
                            cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stderr
    person = json.loads(result.stdout)
    assert set(person) == {"name", "age"} and 0 <= person["age"] <= 130


def run_cli(args: list[str], input: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, input=input,
                                env={"GRAMMARKIT_API_KEY": API_KEY})
    return result.exit_code, result.stdout, result.stderr


def test_complete_command(server: Server, tmp_path: Path) -> None:
    grammar = tmp_path / "ab.ebnf"
    grammar.write_text('root ::= "A" | "B"\n')
    code, out, err = run_cli(["complete", "--url", server.url, "--model", "m",
                              "--prompt-ids", "9703", "--max-tokens", "2", str(grammar)])
    assert code == 0, err
    assert out in {"A\n", "B\n"}
    code, out, err = run_cli(["complete", "--url", server.url, "--model", "m", "--stream",
                              "--prompt", "Hello world", "--tokenizer", "qwen3.6",
                              "--kind", "regex", "-"], input="[0-9]{4}")
    assert code == 0, err
    assert re.fullmatch(r"[0-9]{4}\n", out)


def test_complete_command_reports_errors(server: Server, tmp_path: Path) -> None:
    grammar = tmp_path / "bad.ebnf"
    grammar.write_text("root ::= a\n")
    code, _, err = run_cli(["complete", "--url", server.url, "--model", "m",
                            "--prompt-ids", "1", str(grammar)])
    assert code == 1 and "ebnf:1:10: GK103" in err
    code, _, err = run_cli(["complete", "--url", server.url, "--model", "m",
                            "--prompt-ids", "248077"])
    assert code == 1 and "400" in err and "GK375" in err
    assert API_KEY not in err
    code, _, err = run_cli(["complete", "--url", server.url, "--model", "m"])
    assert code == 2 and "--prompt-ids" in err


def test_remote_backend_sends_regex_and_schema_fields(server: Server) -> None:
    backend = get_backend("remote", url=server.url, model="m", api_key=API_KEY)
    assert isinstance(backend, RemoteBackend)
    completion = gk.generate(gk.Regex("[a-c]{2,5}"), [9703], backend=backend, max_tokens=10,
                             seed=1)
    assert re.fullmatch("[a-c]{2,5}", completion.text) and completion.finish_reason == "stop"
    schema = {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}
    chunks = list(backend.stream(gk.JsonSchema(schema), [9703],
                                 gk.SamplingParams(max_tokens=200, seed=2)))
    value = json.loads("".join(c.text for c in chunks))
    assert isinstance(value, list) and len(value) <= 2
    assert chunks[-1].finish_reason == "stop"


def test_remote_backend_through_generate_reads_the_environment(
        server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAMMARKIT_URL", server.url)
    monkeypatch.setenv("GRAMMARKIT_API_KEY", API_KEY)
    completion = gk.generate('root ::= "yes" | "no"', [9703], backend="remote", max_tokens=4)
    assert completion.text in {"yes", "no"}
    monkeypatch.setenv("GRAMMARKIT_URL", "http://127.0.0.1:9")  # discard port: refused
    with pytest.raises(APIConnectionError, match="127.0.0.1:9"):
        gk.generate('root ::= "x"', [1], backend=RemoteBackend(retries=0))


@pytest.mark.parametrize(("args", "needle"), [
    (["--lm", "gpt"], "--lm takes `random` or `hf:NAME_OR_PATH`"),
    (["--tokenizer", "no-such-tokenizer"], "neither a file nor one of qwen3.6"),
    (["--tokenizer", "README.md"], "README.md"),
])
def test_serve_refuses_bad_setup(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--port", "0", *args])
    assert result.exit_code == 2, result.output
    assert needle in result.stderr


def test_complete_command_reports_server_errors_as_json(server: Server) -> None:
    code, out, _ = run_cli(["complete", "--url", server.url, "--model", "m",
                            "--prompt-ids", "248077", "--format", "json"])
    report = json.loads(out)
    assert code == 1 and report["choices"] is None
    [diagnostic] = report["diagnostics"]
    assert diagnostic["code"] == "GK361"
    assert "400" in diagnostic["message"] and "GK375" in diagnostic["message"]
    code, out, _ = run_cli(["complete", "--url", server.url, "--model", "m",
                            "--prompt-ids", "-1", "--format", "json"])
    assert code == 1 and json.loads(out)["diagnostics"][0]["pointer"] == "/prompt/0"


class _NotAServer(BaseHTTPRequestHandler):
    """Answers every request with 200 and an HTML page: not the completions protocol."""

    def do_POST(self) -> None:
        body = b"<html>it works</html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def not_a_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _NotAServer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    thread.join()


@pytest.mark.parametrize("command", [["complete"], ["generate", "--backend", "remote"]])
def test_an_unreachable_or_broken_server_is_a_diagnostic(command: list[str], not_a_server: str,
                                                        tmp_path: Path) -> None:
    """`generate --backend remote` raised a traceback on a refused connection."""
    grammar = tmp_path / "ab.ebnf"
    grammar.write_text('root ::= "A" | "B"\n')
    for url, code in (("http://127.0.0.1:9", "GK360"), (not_a_server, "GK362")):
        args = [*command, "--url", url, "--model", "m", "--prompt-ids", "1", str(grammar)]
        exit_code, out, err = run_cli(args)
        assert exit_code == 1 and f"{code} " in err and "Traceback" not in err, err
        exit_code, out, err = run_cli([*args, "--format", "json"])
        assert exit_code == 1 and err == ""
        assert [d["code"] for d in json.loads(out)["diagnostics"]] == [code]
