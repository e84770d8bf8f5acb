"""The real server over HTTP: the provider's curl examples, refused inputs, constraints honoured,
concurrency, and the API key. Raw ``httpx`` posts exercise the server's own checks (the client
would refuse these requests before sending)."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from grammarkit.client import (
    AsyncCompletionsClient,
    AuthenticationError,
    BadRequestError,
    CompletionsClient,
)
from tests.server.conftest import API_KEY, Server

MODEL = "grammarkit-test"
AB = 'root ::= "A" | "B"'
PERSON = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 16},
                   "age": {"type": "integer", "minimum": 0, "maximum": 150}},
    "required": ["name", "age"],
    "additionalProperties": False,
}


def post(server: Server, body: object, *, key: str | None = API_KEY, raw: bytes | None = None
         ) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    content = raw if raw is not None else json.dumps(body).encode()
    return httpx.post(server.url + "/v1/completions", content=content,
                      headers={"Content-Type": "application/json", **headers}, timeout=60)


def assert_error(response: httpx.Response, status: int, *needles: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["object"] == "error"
    assert body["code"] == status
    assert body["type"] == {400: "BadRequestError", 401: "AuthenticationError",
                            413: "RequestTooLargeError"}[status]
    for needle in needles:
        assert needle in body["message"], body["message"]
    return str(body["message"])


@pytest.fixture(scope="module")
def client(server: Server) -> CompletionsClient:
    return CompletionsClient(server.url, API_KEY, timeout=60)


# -- the provider's examples -------------------------------------------------------------------

def test_curl_example_gives_a_or_b(server: Server) -> None:
    response = post(server, {"model": MODEL, "prompt": [9703], "max_tokens": 2,
                             "temperature": 0, "ebnf": AB})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["object"] == "text_completion" and body["model"] == MODEL
    assert body["id"].startswith("cmpl-")
    (choice,) = body["choices"]
    assert choice["text"] in {"A", "B"}
    assert choice["finish_reason"] == "stop"
    assert body["usage"]["prompt_tokens"] == 1
    assert body["usage"]["total_tokens"] == 1 + body["usage"]["completion_tokens"]
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


def test_curl_streaming_example_yields_chunks_then_done(server: Server) -> None:
    body = {"model": MODEL, "prompt": [9703], "max_tokens": 2, "temperature": 0, "ebnf": AB,
            "stream": True, "stream_options": {"include_usage": True}}
    with httpx.stream("POST", server.url + "/v1/completions", json=body, timeout=60,
                      headers={"Authorization": f"Bearer {API_KEY}"}) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        events = [line.removeprefix("data: ") for line in response.iter_lines()
                  if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    *text_chunks, usage_chunk = chunks
    assert "".join(c["choices"][0]["text"] for c in text_chunks) in {"A", "B"}
    assert text_chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["choices"][0]["finish_reason"] is None for c in text_chunks[:-1])
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["prompt_tokens"] == 1


def test_client_stream_keeps_the_usage_chunk(client: CompletionsClient) -> None:
    with client.completions(MODEL, [9703], stream=True, max_tokens=2, temperature=0, ebnf=AB,
                            stream_options={"include_usage": True}) as stream:
        chunks = list(stream)
    assert "".join(c.choices[0].text for c in chunks if c.choices) in {"A", "B"}
    assert stream.usage is not None and stream.usage.prompt_tokens == 1
    assert chunks[-1].usage == stream.usage and not chunks[-1].choices


# -- constraints are honoured ------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1])
def test_json_schema_request_gives_matching_json(client: CompletionsClient, seed: int) -> None:
    response = client.completions(MODEL, [9703, 25], json_schema=PERSON, max_tokens=300,
                                  seed=seed)
    choice = response.choices[0]
    assert choice.finish_reason == "stop", choice
    value = json.loads(choice.text)
    assert set(value) == {"name", "age"}
    assert isinstance(value["name"], str) and len(value["name"]) <= 16
    age = value["age"]  # JSON Schema integers include 7.0 and -0.0
    assert isinstance(age, (int, float)) and float(age).is_integer() and 0 <= age <= 150


def test_regex_request_gives_matching_text(client: CompletionsClient) -> None:
    pattern = r"[0-9]{3}-[a-z]{2,4}"
    response = client.completions(MODEL, [9703], regex=pattern, max_tokens=50, n=3, seed=4)
    assert len(response.choices) == 3
    for choice in response.choices:
        assert re.fullmatch(pattern, choice.text), choice.text


def test_batch_n_echo_and_logprobs(client: CompletionsClient) -> None:
    hello = [9419, 1814]  # "Hello world" in the Qwen3.6 tokenizer
    response = client.completions(MODEL, [hello, [9703]], ebnf=AB, n=2, echo=True, logprobs=3,
                                  max_tokens=4, seed=0)
    assert [c.index for c in response.choices] == [0, 1, 2, 3]
    for choice in response.choices[:2]:
        assert choice.text[:len("Hello world")] == "Hello world"
        assert choice.text[len("Hello world"):] in {"A", "B"}
    for choice in response.choices:
        logprobs = choice.logprobs
        assert logprobs is not None and logprobs.tokens
        assert "".join(logprobs.tokens) == choice.text[-1:]
        assert all(len(top) <= 3 for top in logprobs.top_logprobs if top is not None)
        assert all(value is not None and value <= 0 for value in logprobs.token_logprobs)
    assert response.usage is not None and response.usage.prompt_tokens == 3


def test_models_and_health(client: CompletionsClient, server: Server) -> None:
    (card,) = client.models()
    assert card.id == MODEL
    assert httpx.get(server.url + "/health").status_code == 200  # no key needed


# -- refused input: 4xx with SGLang's error body, never a 500 or a hang -----------------------

@pytest.mark.parametrize(("prompt", "needle"), [
    (["hello"], "takes token ids, not text"),
    ("hello", "takes token ids, not text"),
    ([], "prompt is empty"),
    ([[9703], []], "prompt is empty"),
    ([True, 5], "got true"),
    ([-3], "got -3"),
    ([1.5], "got 1.5"),
    ([9703, "a"], "mixes"),
    ([[9703], 5], "mixes"),
    ({"ids": [1]}, "not an object"),
])
def test_refused_prompt_forms(server: Server, prompt: object, needle: str) -> None:
    message = assert_error(post(server, {"model": MODEL, "prompt": prompt, "ebnf": AB}), 400,
                           "GK370", needle)
    assert "/prompt" in message


@pytest.mark.parametrize(("body", "needles"), [
    ({"max_tokens": 0}, ["GK371", "max_tokens must be positive"]),
    ({"max_tokens": "16"}, ["GK371", "max_tokens must be an integer"]),
    ({"temperature": -1}, ["temperature"]),
    ({"top_p": 0}, ["top_p"]),
    ({"stop": ["a", "b", "c", "d", "e"]}, ["up to 4"]),
    ({"n": 2, "best_of": 1}, ["GK373", "best_of"]),
    ({"regex": "a", "ebnf": AB}, ["GK372", "one constraint"]),
    ({"json_schema": {"type": "object"}}, ["GK371", "JSON text"]),
    ({"json_schema": "{not json"}, ["GK374", "not valid JSON"]),
    ({"stream": "yes"}, ["stream must be true or false"]),
    ({"structural_tag": "{}"}, ["GK378", "not supported"]),
    ({"response_format": {"type": "xml"}}, ["GK371", "response_format"]),
    ({"response_format": {"type": "json_object"}, "regex": "a"}, ["GK372"]),
    ({"prompt": [248077]}, ["GK375", "beyond the vocabulary", "/prompt/0"]),
    ({"prompt": [[1], [2, 999999]]}, ["GK375", "/prompt/1/1"]),
    ({"stop_token_ids": [10**7]}, ["GK375", "stop_token_ids"]),
    ({"n": 65}, ["GK379"]),
])
def test_refused_fields(server: Server, body: dict[str, object], needles: list[str]) -> None:
    assert_error(post(server, {"model": MODEL, "prompt": [9703], **body}), 400, *needles)


def test_grammar_that_does_not_compile_gets_located_diagnostic(server: Server) -> None:
    message = assert_error(post(server, {"model": MODEL, "prompt": [1],
                                         "ebnf": 'root ::= "a" valu'}), 400, "GK103")
    assert message.startswith("ebnf:1:14: GK103")
    assert "^^^^" in message


def test_schema_that_does_not_convert_names_the_keyword(server: Server) -> None:
    schema = json.dumps({"type": "object", "properties": {"a": {"type": "strin"}}})
    assert_error(post(server, {"model": MODEL, "prompt": [1], "json_schema": schema}), 400,
                 "GK150", "json_schema#/properties/a/type")


def test_regex_that_does_not_convert(server: Server) -> None:
    assert_error(post(server, {"model": MODEL, "prompt": [1], "regex": "a(b"}), 400,
                 "regex:1:2: GK131")


@pytest.mark.parametrize("raw", [b'{"model": "m", "prompt": [1],', b"\xff\xfe", b"[1, 2]", b""])
def test_malformed_json(server: Server, raw: bytes) -> None:
    assert_error(post(server, None, raw=raw), 400)


def test_unknown_fields_are_ignored_and_named(server: Server) -> None:
    response = post(server, {"model": MODEL, "prompt": [9703], "ebnf": AB, "max_tokens": 2,
                             "frobnicate": 1, "temperature": 0})
    assert response.status_code == 200
    assert response.headers["x-grammarkit-ignored-fields"] == "frobnicate"


def test_fields_without_effect_are_named(server: Server) -> None:
    response = post(server, {"model": MODEL, "prompt": [9703], "ebnf": AB, "max_tokens": 2,
                             "best_of": 2, "suffix": "!", "lora_path": "x"})
    assert response.status_code == 200
    assert response.headers["x-grammarkit-ignored-fields"] == "best_of,suffix,lora_path"


def test_response_format_constrains_to_json(client: CompletionsClient) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}}
    response = client.completions(MODEL, [9703], response_format=schema, max_tokens=600, seed=0)
    assert response.choices[0].finish_reason == "stop"
    assert set(json.loads(response.text)) == {"name", "age"}
    any_object = client.completions(MODEL, [9703], response_format={"type": "json_object"},
                                    max_tokens=8, seed=0, n=4)
    assert all(c.text.lstrip(" \t\r\n").startswith("{") for c in any_object.choices)


def test_huge_body_gets_413(server: Server) -> None:
    raw = b'{"model": "m", "prompt": [' + b"1," * 600_000 + b"1]}"
    assert_error(post(server, None, raw=raw), 413, "GK377", "limit")

    def chunked() -> Iterator[bytes]:  # no Content-Length: counted while read
        yield b'{"model": "m", "prompt": ['
        for _ in range(100):
            yield b"1," * 10_000
        yield b"1]}"

    response = httpx.post(server.url + "/v1/completions", content=chunked(), timeout=60,
                          headers={"Authorization": f"Bearer {API_KEY}"})
    assert_error(response, 413, "GK377")


def test_error_mid_request_does_not_break_the_server(server: Server) -> None:
    # a connection dropped while the body is being sent: the server keeps serving
    with socket_to(server) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n"
                     b"Authorization: Bearer " + API_KEY.encode() + b"\r\n\r\n{\"model\"")
    response = post(server, {"model": MODEL, "prompt": [9703], "ebnf": AB, "max_tokens": 2})
    assert response.status_code == 200


def test_client_leaving_mid_stream_does_not_stall_the_server(server: Server) -> None:
    body = {"model": MODEL, "prompt": [9703], "ebnf": "root ::= [a-z]+", "max_tokens": 5000,
            "ignore_eos": True, "stream": True}
    with httpx.stream("POST", server.url + "/v1/completions", json=body, timeout=60,
                      headers={"Authorization": f"Bearer {API_KEY}"}) as response:
        lines = response.iter_lines()
        assert next(lines).startswith("data: ")
        assert active(server) >= 1
    deadline = time.monotonic() + 10
    while active(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert active(server) == 0  # generation stopped with the client, not 5000 tokens later
    response = post(server, {"model": MODEL, "prompt": [9703], "ebnf": AB, "max_tokens": 2})
    assert response.status_code == 200


def active(server: Server) -> float:
    text = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {API_KEY}"}).text
    values = dict(line.split() for line in text.splitlines())
    return float(values["grammarkit_requests_active"])


def socket_to(server: Server) -> socket.socket:
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


# -- API key -----------------------------------------------------------------------------------

def test_wrong_key_gets_401_and_the_key_never_leaks(server: Server) -> None:
    wrong = "gk-wrong-key-0f9a"
    client = CompletionsClient(server.url, wrong, retries=0)
    with pytest.raises(AuthenticationError) as caught:
        client.completions(MODEL, [9703], ebnf=AB, max_tokens=2)
    assert caught.value.status_code == 401
    assert wrong not in str(caught.value) and wrong not in repr(caught.value)
    assert wrong not in repr(client) and API_KEY not in repr(CompletionsClient(server.url,
                                                                              API_KEY))
    assert_error(post(server, {"model": MODEL, "prompt": [1]}, key=None), 401)
    assert httpx.get(server.url + "/v1/models").status_code == 401
    log = server.log_text()
    assert "401" in log  # the refused requests are logged ...
    assert wrong not in log and API_KEY not in log  # ... without any key


def test_client_errors_carry_the_server_message(client: CompletionsClient) -> None:
    with pytest.raises(BadRequestError) as caught:
        client.completions(MODEL, [248077], ebnf=AB)
    assert "GK375" in caught.value.message and caught.value.type == "BadRequestError"
    assert API_KEY not in str(caught.value)


# -- concurrency -------------------------------------------------------------------------------

def test_200_concurrent_requests_all_succeed(server: Server) -> None:
    async def run() -> list[str]:
        async with AsyncCompletionsClient(server.url, API_KEY, timeout=120,
                                          max_connections=200) as client:
            responses = await asyncio.gather(*(
                client.completions(MODEL, [9703, i], ebnf=AB, max_tokens=1, seed=i)
                for i in range(200)))
        return [r.text for r in responses]

    texts = asyncio.run(run())
    assert len(texts) == 200 and set(texts) <= {"A", "B"}


def test_event_loop_serves_while_a_long_request_generates(server: Server) -> None:
    async def health_after(delay: float) -> float:
        await asyncio.sleep(delay)
        async with httpx.AsyncClient() as plain:
            assert (await plain.get(server.url + "/health", timeout=60)).status_code == 200
        return time.monotonic()

    async def run() -> tuple[float, float, float]:
        async with AsyncCompletionsClient(server.url, API_KEY, timeout=120) as client:
            started = time.monotonic()
            long = client.completions(MODEL, [9703], ebnf="root ::= [a-z]+", ignore_eos=True,
                                      max_tokens=600, seed=0)
            response, health_done = await asyncio.gather(long, health_after(0.3))
            assert response.usage is not None and response.usage.completion_tokens == 600
            return started, health_done, time.monotonic()

    started, health_done, finished = asyncio.run(run())
    # a blocking handler would answer /health only once the 600 tokens are done
    assert health_done - started < (finished - started) / 2, (started, health_done, finished)
