"""The fuzz harness's child process: runs one entry point per request, reports how it ended.

Reads one JSON request per line on stdin (``{"entry": ..., "case": ...}``) and answers one JSON
line: ``{"outcome": "ok"}``, ``{"outcome": "documented", "type": ...}`` for an exception the
entry point documents, or ``{"outcome": "traceback", "traceback": ...}`` for anything else.
The worker limits its own address space (``argv[1]`` bytes); the parent enforces the time limit
and restarts the worker when it dies or is killed.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

import grammarkit as gk
from grammarkit.automata.earley import MatchTimeout
from grammarkit.cli import main as cli_main

GrammarError = gk.GrammarError
VOCAB = gk.Vocabulary.from_tokens(
    [b"a", b"b", b"ab", b"{", b"}", b'"', b" ", b"0", b"1", b"\xe2", b"\x82\xac", b"<|end|>"],
    special_ids=[11], stop_ids=[11])

MATCH_TIMEOUT = 2.0
"""Seconds one ``matches`` or ``explain`` may take: past it ``MatchTimeout`` (GK122) is the
documented answer, so hostile and ambiguous grammars end well within the parent's time limit."""

Entry = Callable[[Any], None]
DEEP = re.compile(r'"__deep_(\d+)__"')
"""A placeholder for arrays nested that deep, in generated JSON documents."""


def _exercise(grammar: gk.Grammar, texts: list[str]) -> None:
    """What a user does with a grammar that loaded: print, export, match, explain."""
    gk.Grammar.from_ebnf(grammar.to_ebnf(), grammar.root)
    for export in (grammar.to_gbnf, grammar.to_lark):
        try:
            export()
        except GrammarError:
            pass
    for text in texts:
        grammar.matches(text, timeout=MATCH_TIMEOUT)
        grammar.explain(text.encode("utf-8", "surrogatepass"), timeout=MATCH_TIMEOUT)


def ebnf(case: dict[str, Any]) -> None:
    gk.lint(case["text"], path="fuzz.ebnf")
    _exercise(gk.Grammar.from_ebnf(case["text"]), case["texts"])


def gbnf(case: dict[str, Any]) -> None:
    _exercise(gk.Grammar.from_gbnf(case["text"]), case["texts"])


def regex(case: dict[str, Any]) -> None:
    _exercise(gk.Grammar.from_regex(case["pattern"], flavor=case["flavor"]), case["texts"])


def schema(case: dict[str, Any]) -> None:
    grammar = gk.Grammar.from_json_schema(case["schema"], lenient=case["lenient"],
                                          whitespace=case["whitespace"])
    _exercise(grammar, [json.dumps(value) for value in case["instances"]])


def vocabulary(case: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / case["name"]
        if "doc" in case:
            for name in ("doc", "tokenizer_config", "generation_config"):
                target = path if name == "doc" else Path(folder, f"{name}.json")
                text = DEEP.sub(lambda m: "[" * int(m[1]) + "]" * int(m[1]), json.dumps(case[name]))
                target.write_text(text, "utf-8")
        else:
            path.write_bytes(bytes.fromhex(case["data"]))
        special = case["special_tokens"]
        if isinstance(special, dict):  # JSON keys are strings: give some back as ints
            special = {int(k) if k.lstrip("-").isdigit() else k: v for k, v in special.items()}
        vocab = gk.Vocabulary.from_file(path, special_tokens=special)
        vocab.to_arrays()


def matcher(case: dict[str, Any]) -> None:
    grammar = gk.Grammar.from_ebnf(case["text"])
    m = gk.TokenMatcher(grammar, VOCAB, max_rollback_tokens=case["max_rollback"])
    bitmask = gk.allocate_token_bitmask(1, VOCAB.vocab_size)
    for action, argument in case["actions"]:
        if action == "accept":
            m.accept_token(argument)
        elif action == "accept_np":
            m.accept_token(np.int64(argument))
        elif action == "string":
            m.accept_string(argument)
        elif action == "rollback":
            try:
                m.rollback(argument)
            except ValueError:  # documented: more steps than are kept
                pass
        elif action == "mask":
            m.fill_next_token_bitmask(bitmask)
        elif action == "jump":
            m.find_jump_forward_string()
        elif action == "reset":
            m.reset()
        m.is_terminated()


def cli(case: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, text in case["files"].items():
            Path(folder, name).write_bytes(text.encode("utf-8", "surrogateescape"))
        cwd = os.getcwd()
        os.chdir(folder)
        try:
            result = CliRunner().invoke(cli_main, case["args"], input=case["stdin"],
                                        catch_exceptions=True)
        finally:
            os.chdir(cwd)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    if result.exit_code not in (0, 1, 2):
        raise AssertionError(f"exit code {result.exit_code}")


ENTRIES: dict[str, tuple[Entry, tuple[type[BaseException], ...]]] = {
    "ebnf": (ebnf, (GrammarError, MatchTimeout)),
    "gbnf": (gbnf, (GrammarError, MatchTimeout)),
    "regex": (regex, (GrammarError, MatchTimeout)),
    "schema": (schema, (GrammarError, MatchTimeout)),  # SchemaError is a GrammarError
    "vocabulary": (vocabulary, (gk.VocabularyError,)),
    "matcher": (matcher, (GrammarError,)),
    "cli": (cli, ()),
}
"""Entry point -> (runner, the exception types it documents)."""


def serve(memory_limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    for line in sys.stdin:
        request = json.loads(line)
        run, documented = ENTRIES[request["entry"]]
        try:
            run(request["case"])
            answer: dict[str, Any] = {"outcome": "ok"}
        except documented as exc:
            answer = {"outcome": "documented", "type": type(exc).__name__}
        except BaseException:  # noqa: BLE001 - the harness reports every other exception
            answer = {"outcome": "traceback", "traceback": traceback.format_exc()}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
