"""The protocol's request checks, shared by client and server: defaults, accepted forms, and
any JSON at all gets either a checked request or a RequestError (never another exception)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grammarkit.client.protocol import (
    REQUEST_FIELDS,
    SAMPLING_DEFAULTS,
    RequestError,
    check_request,
    compile_constraint,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 300_000) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=4),
    max_leaves=12,
)
bodies = st.dictionaries(st.sampled_from(sorted(REQUEST_FIELDS | {"extra"})), json_values,
                         max_size=8)


@given(body=bodies, text_prompts=st.booleans())
def test_any_body_is_checked_or_refused_with_diagnostics(body: dict[str, Any],
                                                         text_prompts: bool) -> None:
    for name in ("ebnf", "regex", "json_schema"):  # compiling is tested elsewhere
        body.pop(name, None)
    try:
        request = check_request(body, text_prompts=text_prompts)
    except RequestError as exc:
        assert exc.diagnostics
        assert all(d.code.startswith("GK37") and d.is_error for d in exc.diagnostics)
        return
    assert request.prompts
    assert request.max_tokens >= 1 and request.n >= 1
    assert request.ignored == (("extra",) if "extra" in body else ())


def test_defaults_are_sglangs() -> None:
    request = check_request({"prompt": [1, 2]})
    assert request.model == "default" and request.prompts == ((1, 2),) and not request.batched
    for name, value in SAMPLING_DEFAULTS.items():
        assert getattr(request, name) == value
    assert (request.n, request.stream, request.echo, request.logprobs) == (1, False, False, None)
    assert request.skip_special_tokens and request.constraint is None


def test_accepted_forms() -> None:
    batch = check_request({"prompt": [[1], [2, 3]], "stop": "x", "logit_bias": {"7": -100},
                           "stream": True, "stream_options": {"include_usage": True}})
    assert batch.batched and batch.prompts == ((1,), (2, 3))
    assert batch.stop == ("x",) and batch.logit_bias == {7: -100.0} and batch.include_usage
    text = check_request({"prompt": ["a", "b"]}, text_prompts=True)
    assert text.prompts == ("a", "b")
    schema = check_request({"prompt": [1], "response_format": {"type": "json_object"}})
    assert schema.constraint == ("json_schema", '{"type": "object"}')


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(RequestError) as caught:
        check_request({"prompt": [], "max_tokens": 0, "temperature": "hot", "n": 0})
    pointers = [d.pointer for d in caught.value.diagnostics]
    assert pointers == ["/prompt", "/max_tokens", "/temperature", "/n"]


@pytest.mark.parametrize(("name", "text", "expected"), [
    ("ebnf", 'root ::= "a"+', "aaa"),
    ("regex", "[0-9]{2}", "42"),
    ("json_schema", json.dumps({"type": "integer"}), "17"),
])
def test_compile_constraint(name: str, text: str, expected: str) -> None:
    assert compile_constraint(name, text).matches(expected)


def test_json_schema_text_is_never_read_as_a_path(tmp_path: Any) -> None:
    path = tmp_path / "schema.json"
    path.write_text('{"type": "integer"}')
    with pytest.raises(RequestError, match="GK374"):
        compile_constraint("json_schema", str(path))


def test_protocol_does_not_need_httpx() -> None:
    import subprocess
    import sys

    code = ("import sys, grammarkit.client.protocol, grammarkit.client.types, "
            "grammarkit.server.engine; print('httpx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


@pytest.fixture(scope="module")
def engine() -> Any:
    from grammarkit.generate.backend import get_backend
    from grammarkit.server.engine import CompletionEngine
    from grammarkit.vocab import Vocabulary

    vocab = Vocabulary.from_tokens([bytes([b]) for b in range(256)] + [b"<|endoftext|>"])
    return CompletionEngine(get_backend("native", vocab=vocab), vocab, "m")


@given(data=st.binary(max_size=64) | bodies.map(lambda b: json.dumps(b).encode()))
def test_server_parses_any_bytes_or_refuses_them(engine: Any, data: bytes) -> None:
    try:
        request = engine.parse(data)
    except RequestError as exc:
        assert all(d.code.startswith("GK37") for d in exc.diagnostics)
    else:
        assert all(t < 257 for prompt in request.prompts for t in prompt)
