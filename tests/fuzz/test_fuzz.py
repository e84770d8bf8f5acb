"""Fuzz harness: every entry point, hostile inputs, in a child process with time and memory limits.

Hypothesis mutates real inputs (the curated grammars, the parser corpus, small tokenizer files)
and generates schemas, regexes, matcher call sequences and command lines; a child process
(:mod:`tests.fuzz.worker`) runs each one under a memory limit, and the parent kills it past a
time limit. A test fails on a traceback that is not an error type the entry point documents,
on a crash, and on a timeout; ``matches``/``explain`` get a budget of their own
(``worker.MATCH_TIMEOUT``), past which ``MatchTimeout`` (GK122) is their documented answer, so an
ambiguous grammar on a long text ends in that diagnostic rather than in the parent's kill (the
hostile seeds of issue 8 run every time). CI runs it derandomized (``tests/conftest.py``); locally each run
explores new inputs. ``GRAMMARKIT_FUZZ_EXAMPLES=2000`` runs a longer campaign.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import GRAMMARS, REPO_ROOT
from tests.ebnf.corpus import VALID

WORKER = Path(__file__).with_name("worker.py")
TIME_LIMIT = 20.0
"""Seconds one input may take (a hang shows up as this timeout)."""
MEMORY_LIMIT = 2 << 30
"""Bytes of address space for the worker (a blow-up shows up as a MemoryError traceback)."""
EXAMPLES = int(os.environ.get("GRAMMARKIT_FUZZ_EXAMPLES", "0"))


def examples(default: int) -> Any:
    return settings(max_examples=EXAMPLES or default)


# -- the child process ---------------------------------------------------------------------------
class Worker:
    """A grammarkit process answering one request at a time; restarted after a kill or crash."""

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker

    def _start(self) -> subprocess.Popen[str]:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "OPENBLAS_NUM_THREADS": "1",
               "OMP_NUM_THREADS": "1"}
        return subprocess.Popen([sys.executable, str(WORKER), str(MEMORY_LIMIT)], cwd=REPO_ROOT,
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self._stderr, text=True)

    def run(self, entry: str, case: dict[str, Any]) -> dict[str, Any]:
        if self._process is None or self._process.poll() is not None:
            self._process = self._start()
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"entry": entry, "case": case}) + "\n")
        process.stdin.flush()
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(TIME_LIMIT + 15)  # the first request also imports grammarkit
        if not ready:
            self.kill()
            return {"outcome": "timeout"}
        line = process.stdout.readline()
        if not line:
            code = process.wait()
            self._process = None
            self._stderr.seek(0)
            tail = self._stderr.read()[-2000:].decode("utf-8", "replace")
            return {"outcome": "crash", "returncode": code, "stderr": tail}
        return json.loads(line)  # type: ignore[no-any-return]

    def kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def close(self) -> None:
        self.kill()
        self._stderr.close()


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    w = Worker()
    yield w
    w.close()


def check(worker: Worker, entry: str, case: dict[str, Any]) -> None:
    answer = worker.run(entry, case)
    assert answer["outcome"] in ("ok", "documented"), (
        f"{entry} {answer['outcome']} on {json.dumps(case)[:2000]}\n"
        + (answer.get("traceback") or answer.get("stderr") or ""))


# -- strategies ----------------------------------------------------------------------------------
EBNF_SEEDS = [text for text in VALID if len(text) < 300 and "000000" not in text] + [
    path.read_text("utf-8") for path in sorted(GRAMMARS.glob("*.ebnf"))]
EBNF_PIECES = ['"', "'", "::=", "|", "(", ")", "[", "]", "[^", "-", "\\", "\\x", "\\u", "*", "+",
               "?", "{2}", "{1,3}", "{0,}", "{,", "}", "(=", "#", "\n", "\r", "\x00", "é", "\udc80",
               "root", "x", "Token(1)", "ExcludeToken(0)", 'TagDispatch(("<a>", x))',
               'Regex("[a-z]+")', 'Substring("ab")', "[lazy]", "[max_tokens=2]", ",", "=", "true"]
GBNF_SEEDS = [
    'root ::= item+\nitem ::= "- " [^\\r\\n]+ "\\n"\n',
    'root ::= ws ( "a" | | "b" )\nws ::= [ \\t]*\n',
    ('root   ::= object\nobject ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )?'
     ' "}"\nvalue ::= object | string | [0-9]+\nstring ::= "\\"" [^"\\\\]* "\\""\nws ::= | " " ws\n'),
    'root ::= x{2,5} y?\nx ::= [a-c]\ny-z ::= "q"\ny ::= y-z\n',
]
GBNF_PIECES = [*EBNF_PIECES, "{2000}", "{2001}", "y-z", "ws", "::= |"]
REGEX_PIECES = ["a", "b", "é", "😀", "[", "]", "[^", "-", "^", "$", "(", ")", "(?:", "(?=", "(?P<n>",
                "(?#c)", "|", "*", "+", "?", "*?", "{2}", "{1,3}", "{,2}", "{0,40}", "\\", "\\d",
                "\\w", "\\s", "\\S", "\\b", "\\1", ".", "\\u00e9", "\\ud83d\\ude00", "\\x41", "\\n",
                "\\p{L}", "\\A", "\\Z", "\\N{BULLET}", "\\0", "\\q", "{", "}", ",", "\ud800"]
TEXTS = st.lists(st.text(max_size=24), max_size=3)


@st.composite
def mutated(draw: st.DrawFn, seeds: list[str], pieces: list[str]) -> str:
    """A seed text with a few pieces inserted, spans deleted or duplicated."""
    text = draw(st.sampled_from(seeds))
    for _ in range(draw(st.integers(0, 5))):
        at = draw(st.integers(0, len(text)))
        end = draw(st.integers(at, min(len(text), at + 12)))
        kind = draw(st.sampled_from(["insert", "insert", "delete", "duplicate"]))
        if kind == "insert":
            piece = draw(st.sampled_from(pieces) | st.text(max_size=3))
            text = text[:at] + piece + text[at:]
        elif kind == "delete":
            text = text[:at] + text[end:]
        else:
            text = text[:end] + text[at:end] + text[end:]
    return text


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6)
    | st.floats(-1e6, 1e6, allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                 max_size=3),
    max_leaves=8,
)
KEYS = st.sampled_from(["a", "b", "n", "", "é", "$x"])
NUMBERS = st.integers(-1000, 1000) | st.floats(-1e3, 1e3, allow_nan=False) | st.sampled_from(
    [0, 0.1, 1e-9, 2**53 + 1])
SCHEMA_LEAF = st.booleans() | st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array",
                             "nope"]) | st.lists(st.sampled_from(["string", "null", "integer"]),
                                                 max_size=3),
    "minimum": NUMBERS, "maximum": NUMBERS, "exclusiveMinimum": NUMBERS, "multipleOf": NUMBERS,
    "minLength": st.integers(-1, 6), "maxLength": st.integers(-1, 6),
    "minItems": st.integers(0, 4), "maxItems": st.integers(0, 4), "uniqueItems": st.booleans(),
    "pattern": st.lists(st.sampled_from(REGEX_PIECES[:30]), max_size=6).map("".join),
    "format": st.sampled_from(["date", "date-time", "email", "uuid", "ipv4", "nope"]),
    "enum": st.lists(JSON_VALUES, max_size=3), "const": JSON_VALUES,
    "$ref": st.sampled_from(["#", "#/$defs/a", "#/$defs/missing", "other.json", "#/properties/a"]),
})
SCHEMAS = st.recursive(SCHEMA_LEAF, lambda inner: st.fixed_dictionaries({}, optional={
    "type": st.sampled_from(["object", "array"]),
    "properties": st.dictionaries(KEYS, inner, max_size=3),
    "required": st.lists(KEYS, max_size=3), "additionalProperties": inner,
    "items": inner, "prefixItems": st.lists(inner, max_size=2), "contains": inner,
    "anyOf": st.lists(inner, max_size=3), "oneOf": st.lists(inner, max_size=3),
    "allOf": st.lists(inner, max_size=2), "not": inner, "if": inner, "then": inner,
    "$defs": st.dictionaries(st.just("a"), inner, max_size=1),
}), max_leaves=6)

TIKTOKEN = b"".join(base64.b64encode(t) + b" %d\n" % i
                    for i, t in enumerate([b"a", b"b", b"ab", b" ", b"<|x|>"]))
TOKENIZER_JSON = json.dumps({
    "added_tokens": [{"id": 4, "content": "<|end|>", "special": True}],
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "Ġ": 3}, "merges": ["a b"]},
}).encode()
UNIGRAM_JSON = json.dumps({
    "decoder": {"type": "Metaspace", "replacement": "▁"},
    "model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0], ["▁a", -1.0]]},
}).encode()
VOCAB_SEEDS = [TIKTOKEN, TOKENIZER_JSON, UNIGRAM_JSON]
VOCAB_PIECES = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\ud800", b"-1", b"99999999",
                b"16777215", b"9" * 40, b"null", b"\n", b" ", b"==", b"\xff", b"[" * 3000]


IDS = st.integers(-2, 40) | st.sampled_from([2**20, 2**24 - 1, 2**40]) | st.booleans() | st.none()
HOSTILE_TEXT = st.text(max_size=6) | st.sampled_from(["\ud800", "<|end|>", "", "Ġ", "▁a"])
NESTED = st.sampled_from([10, 1000, 100_000]).map(lambda n: f"__deep_{n}__")
"""Arrays nested n deep, spelled out by the worker (as objects they would strain hypothesis)."""
HOSTILE_JSON = JSON_VALUES | HOSTILE_TEXT | IDS | NESTED


@st.composite
def tokenizer_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A tokenizer.json whose model, added tokens and sibling configs hold hostile values."""
    kind = draw(st.sampled_from(["BPE", "Unigram", "WordLevel", None]))
    model: dict[str, Any] = {"type": kind} if kind else {}
    if kind == "Unigram":
        model["vocab"] = draw(st.lists(st.tuples(HOSTILE_TEXT, st.floats(-5, 0)), max_size=4))
        model["unk_id"] = draw(IDS)
    else:
        model["vocab"] = draw(st.dictionaries(HOSTILE_TEXT, IDS, max_size=4) | HOSTILE_JSON)
        model["unk_token"] = draw(HOSTILE_TEXT | st.none())
    doc: dict[str, Any] = {"model": model, "decoder": draw(st.sampled_from(
        [{"type": "ByteLevel"}, {"type": "Metaspace"}, {"type": "ByteFallback"}, None,
         {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"Regex": "x"}}]}]))}
    doc["added_tokens"] = draw(st.lists(st.fixed_dictionaries(
        {"id": IDS, "content": HOSTILE_TEXT}, optional={"special": st.booleans()}), max_size=3)
        | HOSTILE_JSON)
    config = draw(st.fixed_dictionaries({}, optional={
        "eos_token": HOSTILE_JSON, "added_tokens_decoder": st.dictionaries(
            st.text(max_size=3) | IDS.map(str), HOSTILE_JSON, max_size=2) | HOSTILE_JSON}))
    generation = draw(st.fixed_dictionaries({}, optional={"eos_token_id": HOSTILE_JSON}))
    return {"doc": doc, "tokenizer_config": config, "generation_config": generation}


@st.composite
def tiktoken_files(draw: st.DrawFn) -> bytes:
    ranks = st.integers(0, 2**25).map(lambda n: b"%d" % n) | st.just(b"9" * 5000)
    lines = draw(st.lists(st.tuples(st.binary(max_size=3), ranks), min_size=1, max_size=4))
    return b"".join(base64.b64encode(token) + b" " + rank + b"\n" for token, rank in lines)


@st.composite
def vocab_files(draw: st.DrawFn) -> dict[str, Any]:
    special = draw(st.none() | st.dictionaries(HOSTILE_TEXT | IDS, IDS | HOSTILE_TEXT,
                                               max_size=2))
    if draw(st.booleans()):
        return {"name": "tokenizer.json", "special_tokens": special,
                **draw(tokenizer_documents())}
    data = draw(st.sampled_from(VOCAB_SEEDS) | tiktoken_files())
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(data)))
        end = draw(st.integers(at, min(len(data), at + 16)))
        if draw(st.booleans()):
            data = data[:at] + draw(st.sampled_from(VOCAB_PIECES) | st.binary(max_size=3)) + data[at:]
        else:
            data = data[:at] + data[end:]
    name = draw(st.sampled_from(["tokenizer.json", "x.tiktoken", "x.vocab", "x.bin"]))
    return {"name": name, "data": data.hex(), "special_tokens": special}


MATCHER_GRAMMARS = [
    'root ::= "a"+ "b"', 'root ::= "{" [0-9]* "}"', "root ::= Token(11) | [ab]+",
    'root ::= TokenTagDispatch((2, x), loop_after_dispatch=false)\nx ::= "b"',
    'root ::= "€" | "a" root', 'root ::= ExcludeToken(3)* "}"', 'root ::= ""',
]
ACTIONS = st.lists(st.tuples(st.sampled_from(["accept", "accept", "accept_np"]),
                             st.integers(-2, 14))
                   | st.tuples(st.just("string"), st.text(max_size=4))
                   | st.tuples(st.just("rollback"), st.integers(-1, 4))
                   | st.tuples(st.sampled_from(["mask", "jump", "reset"]), st.none()),
                   max_size=12)

EBNF_TEXTS = mutated(EBNF_SEEDS, EBNF_PIECES)
CLI_COMMANDS = st.sampled_from([
    ["lint", "g.ebnf"], ["lint", "--format", "json", "--strict", "."], ["lint", "g.gbnf"],
    ["fmt", "g.ebnf"], ["fmt", "--diff", "."], ["fmt", "--check", "-"], ["fmt", "g.gbnf"],
    ["match", "g.ebnf", "--file", "t.txt"], ["match", "--format", "json", "g.ebnf", "--text"],
    ["match", "g.ebnf", "--"], ["convert", "regex", "--"], ["convert", "regex", "--flavor",
                                                             "python", "--format", "json", "--"],
    ["convert", "json-schema", "s.json"], ["convert", "json-schema", "--lenient", "--format",
                                            "json", "s.json"],
    ["convert", "gbnf", "g.gbnf", "--to", "gbnf"], ["convert", "json-schema", "-"],
    ["sample", "g.ebnf", "-n", "2"], ["sample", "--format", "json", "g.ebnf"],
    ["lint", "--select"], ["match"], ["convert", "gbnf", "missing.gbnf"],
    ["check", "g.ebnf", "--tokenizer", "v.tiktoken"], ["check", "--format", "json", "s.schema.json",
                                                       "--tokenizer", "v.tiktoken"],
    ["sample", "g.ebnf", "-n", "2", "--tokenizer", "v.tiktoken", "--max-tokens", "6"],
    ["generate", "g.ebnf", "--tokenizer", "v.tiktoken", "--prompt-ids", "0", "--max-tokens", "6"],
    ["generate", "--format", "json", "s.schema.json", "--tokenizer", "v.tiktoken", "--prompt",
     "a"], ["test", "g.ebnf", "--coverage"], ["test", "--update", "."], ["diagram", "g.ebnf"],
    ["lint", "g.ebnf", "--tokenizer", "v.tiktoken"], ["fmt", "g.gbnf", "--diff"],
])
"""Every command that runs to completion on files (``serve``, ``lsp`` and ``complete`` wait on
a network or a client); ``v.tiktoken`` is a tiny vocabulary, ``g.examples`` holds ``texts``."""


# -- the tests -----------------------------------------------------------------------------------
@examples(60)
@given(text=EBNF_TEXTS, texts=TEXTS)
def test_ebnf(worker: Worker, text: str, texts: list[str]) -> None:
    check(worker, "ebnf", {"text": text, "texts": texts})


HOSTILE_SEEDS = {
    "nullable-star-chain": {"text": "root ::= " + '"x"* "y"* "z"* ' * 1000,
                            "texts": ["xyz" * 10, "zyx" * 300]},
    "optional-chain": {"text": "root ::= " + '"a"? ' * 4000, "texts": ["a" * 4000]},
    "ambiguous": {"text": 'root ::= x\nx ::= x x | "a" | ""', "texts": ["a" * 2000]},
}
"""Inputs that once took minutes and gigabytes (issue 8 items 7 and 8): each must now end, or
stop with a documented diagnostic (GK121 memory ceiling, GK122 match timeout), within the
child's time and memory limits."""


@pytest.mark.parametrize("name", sorted(HOSTILE_SEEDS))
def test_hostile_seeds(worker: Worker, name: str) -> None:
    check(worker, "ebnf", HOSTILE_SEEDS[name])


def _nested(depth: int, inner: str) -> str:
    return "(x(?:" * depth + inner + ")*|y)" * depth


HOSTILE_SCHEMAS = {
    "deep-const": {"const": json.loads("[" * 254 + "1" + "]" * 254)},
    "deep-pattern": {"type": "string", "pattern": "^" + _nested(490, "a") + "$"},
    "many-properties": {"type": "object", "required": [f"p{i}" for i in range(1500)],
                        "properties": {f"p{i}": {"type": "integer"} for i in range(1500)}},
}
"""Schemas that raised ``RecursionError`` (a const or pattern nested as deep as the loader and
the regex parser allow; objects with hundreds of properties, issue 8 item 1)."""


@pytest.mark.parametrize("name", sorted(HOSTILE_SCHEMAS))
def test_hostile_schemas(worker: Worker, name: str) -> None:
    check(worker, "schema", {"schema": HOSTILE_SCHEMAS[name], "lenient": False,
                             "whitespace": "flexible", "instances": [[1], "xy", {"p0": 1}]})


@examples(30)
@given(text=mutated(GBNF_SEEDS, GBNF_PIECES), texts=TEXTS)
def test_gbnf(worker: Worker, text: str, texts: list[str]) -> None:
    check(worker, "gbnf", {"text": text, "texts": texts})


@examples(40)
@given(pattern=st.lists(st.sampled_from(REGEX_PIECES), max_size=10).map("".join),
       flavor=st.sampled_from(["ecma", "python"]), texts=TEXTS)
def test_regex(worker: Worker, pattern: str, flavor: str, texts: list[str]) -> None:
    check(worker, "regex", {"pattern": pattern, "flavor": flavor, "texts": texts})


@examples(40)
@given(schema=SCHEMAS, lenient=st.booleans(),
       whitespace=st.sampled_from(["flexible", "compact"]),
       instances=st.lists(JSON_VALUES, max_size=3))
def test_json_schema(worker: Worker, schema: Any, lenient: bool, whitespace: str,
                     instances: list[Any]) -> None:
    check(worker, "schema", {"schema": schema, "lenient": lenient, "whitespace": whitespace,
                             "instances": instances})


@examples(80)
@given(case=vocab_files())
def test_vocabulary_files(worker: Worker, case: dict[str, Any]) -> None:
    check(worker, "vocabulary", case)


@examples(40)
@given(text=st.sampled_from(MATCHER_GRAMMARS) | EBNF_TEXTS, actions=ACTIONS,
       max_rollback=st.sampled_from([-1, 0, 2]))
def test_matcher_calls(worker: Worker, text: str, actions: list[Any], max_rollback: int) -> None:
    check(worker, "matcher", {"text": text, "actions": actions, "max_rollback": max_rollback})


@examples(40)
@given(command=CLI_COMMANDS, extra=st.lists(st.text(max_size=8), max_size=2),
       grammar=EBNF_TEXTS, gbnf=mutated(GBNF_SEEDS, GBNF_PIECES), schema=SCHEMAS,
       text=st.text(max_size=12), stdin=st.text(max_size=30))
def test_cli(worker: Worker, command: list[str], extra: list[str], grammar: str, gbnf: str,
             schema: Any, text: str, stdin: str) -> None:
    examples = "".join(f"=== {i} ===\n{t}\n--- {verdict}\n\n" for i, (t, verdict)
                       in enumerate([(text, "accept"), (stdin, "reject 1:1")]))
    files = {"g.ebnf": grammar, "g.gbnf": gbnf, "s.json": json.dumps(schema), "t.txt": text,
             "s.schema.json": json.dumps(schema), "g.examples": examples,
             "v.tiktoken": TIKTOKEN.decode()}
    check(worker, "cli", {"args": [*command, *extra], "files": files, "stdin": stdin})
