"""Client behaviour a local server cannot show: retries and backoff, the chat-only 404, the
provider's model list, broken streams, API-key hygiene. Responses come from an
``httpx.MockTransport`` that records the requests it saw."""

from __future__ import annotations

import asyncio
import json
import logging
import warnings
from collections.abc import Callable

import httpx
import pytest

from grammarkit.client import (
    APIConnectionError,
    AsyncCompletionsClient,
    BadRequestError,
    ChatOnlyModelError,
    ChatOnlyModelWarning,
    CompletionsClient,
    GrammarLintWarning,
    InternalServerError,
    RateLimitError,
    RequestError,
    ResponseFormatError,
)
from grammarkit.client.models import known_models

KEY = "sk-client-test-5e2b"
OK = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "GLM-5.2",
      "choices": [{"index": 0, "text": "A", "logprobs": None, "finish_reason": "stop",
                   "matched_stop": 151329}],
      "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3,
                "prompt_tokens_details": {"cached_tokens": 1}, "reasoning_tokens": 0}}
SGLANG_400 = {"object": "error", "message": "Prompt cannot be empty", "type": "BadRequestError",
              "param": None, "code": 400}

Handler = Callable[[httpx.Request], httpx.Response]


class Recorder:
    """A mock server answering with ``responses`` in turn (the last one repeats)."""

    def __init__(self, *responses: httpx.Response | Exception):
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.responses[min(len(self.requests), len(self.responses)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def client_for(recorder: Recorder, **options: object) -> CompletionsClient:
    options.setdefault("backoff", 0.001)
    return CompletionsClient("http://provider.test/v1", KEY,
                             transport=httpx.MockTransport(recorder), **options)  # type: ignore[arg-type]


def sse(*events: object) -> httpx.Response:
    text = "".join(f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events)
    return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


def test_request_body_headers_and_typed_response() -> None:
    recorder = Recorder(httpx.Response(200, json=OK))
    response = client_for(recorder).completions("GLM-5.2", [9703], max_tokens=2, temperature=0,
                                                ebnf='root ::= "A" | "B"', stop="x")
    (request,) = recorder.requests
    assert request.url == "http://provider.test/v1/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(request.content) == {"model": "GLM-5.2", "prompt": [9703], "max_tokens": 2,
                                           "temperature": 0, "ebnf": 'root ::= "A" | "B"',
                                           "stop": "x"}
    assert response.text == "A" and response.choices[0].matched_stop == 151329
    assert response.usage is not None and response.usage.cached_tokens == 1
    assert response.usage.reasoning_tokens == 0


def test_grammar_objects_and_schemas_become_their_fields() -> None:
    import grammarkit as gk

    recorder = Recorder(httpx.Response(200, json=OK))
    client = client_for(recorder)
    client.completions("GLM-5.2", [1], ebnf=gk.Grammar.from_ebnf('root ::= "x"'))
    client.completions("GLM-5.2", [1], json_schema={"type": "integer"})
    client.completions("GLM-5.2", [1], constraint=gk.Regex("[0-9]+"))
    client.completions("GLM-5.2", [1], constraint=gk.JsonSchema({"type": "boolean"}))
    sent = [json.loads(r.content) for r in recorder.requests]
    assert sent[0]["ebnf"].startswith("root ::=")
    assert json.loads(sent[1]["json_schema"]) == {"type": "integer"}
    assert sent[2]["regex"] == "[0-9]+"
    assert json.loads(sent[3]["json_schema"]) == {"type": "boolean"}


@pytest.mark.parametrize(("prompt", "fields", "needle"), [
    (["hello"], {}, "GK370"),
    ([], {}, "GK370"),
    ([True], {}, "GK370"),
    ([-1], {}, "GK370"),
    ([1, "a"], {}, "GK370"),
    ([1], {"max_tokens": 0}, "max_tokens must be positive"),
    ([1], {"best_of": 2, "stream": True}, "best_of cannot be used with stream"),
    ([1], {"n": 3, "best_of": 2}, "best_of (2) must be at least n (3)"),
    ([1], {"stop": ["a"] * 5}, "up to 4"),
    ([1], {"ebnf": "root ::= a"}, "ebnf:1:10: GK103"),
    ([1], {"regex": "a(b"}, "regex:1:2: GK131"),
    ([1], {"json_schema": {"type": "strin"}}, "GK150"),
])
def test_refused_before_sending(prompt: object, fields: dict[str, object], needle: str) -> None:
    recorder = Recorder(httpx.Response(200, json=OK))
    with pytest.raises(RequestError) as caught:
        client_for(recorder).completions("GLM-5.2", prompt, **fields)  # type: ignore[arg-type]
    assert needle in str(caught.value)
    assert not recorder.requests


def test_text_prompts_when_the_server_takes_them() -> None:
    recorder = Recorder(httpx.Response(200, json=OK))
    client_for(recorder, text_prompts=True).completions("GLM-5.2", ["hello", "hi"], suffix="!",
                                                        echo=True, best_of=2, user="u")
    assert json.loads(recorder.requests[0].content)["prompt"] == ["hello", "hi"]


def test_unknown_keyword_is_a_type_error_and_extra_body_passes_through() -> None:
    recorder = Recorder(httpx.Response(200, json=OK))
    client = client_for(recorder)
    with pytest.raises(TypeError, match="extra_body"):
        client.completions("GLM-5.2", [1], max_token=3)
    client.completions("GLM-5.2", [1], extra_body={"session_params": {"id": "s"}},
                       ignore_eos=True, rid="r1", top_logprobs_num=2)
    sent = json.loads(recorder.requests[0].content)
    assert sent["session_params"] == {"id": "s"} and sent["rid"] == "r1"


def test_lint_warnings_are_shown() -> None:
    recorder = Recorder(httpx.Response(200, json=OK))
    with pytest.warns(GrammarLintWarning, match="GK207"):
        client_for(recorder).completions("GLM-5.2", [1], ebnf='root ::= "a" | "a"')


def test_retries_with_backoff_on_429_and_5xx_then_succeeds() -> None:
    recorder = Recorder(httpx.Response(429, json={"message": "slow down"},
                                       headers={"retry-after": "0"}),
                        httpx.Response(503, text="busy"),
                        httpx.Response(200, json=OK))
    assert client_for(recorder, retries=2).completions("GLM-5.2", [1]).text == "A"
    assert len(recorder.requests) == 3


def test_retries_run_out() -> None:
    recorder = Recorder(httpx.Response(500, json=SGLANG_400 | {"code": 500,
                                                                "message": "boom"}))
    with pytest.raises(InternalServerError, match="boom"):
        client_for(recorder, retries=2).completions("GLM-5.2", [1])
    assert len(recorder.requests) == 3
    recorder = Recorder(httpx.Response(429, json={"error": {"message": "quota",
                                                            "type": "rate_limit"}}))
    with pytest.raises(RateLimitError, match="quota"):
        client_for(recorder, retries=1).completions("GLM-5.2", [1])


def test_connection_errors_are_retried() -> None:
    recorder = Recorder(httpx.ConnectError("refused"), httpx.Response(200, json=OK))
    assert client_for(recorder, retries=1).completions("GLM-5.2", [1]).text == "A"
    recorder = Recorder(httpx.ConnectError("refused"))
    with pytest.raises(APIConnectionError, match="refused"):
        client_for(recorder, retries=2).completions("GLM-5.2", [1])
    assert len(recorder.requests) == 3


def test_4xx_is_never_retried_and_carries_the_server_message() -> None:
    recorder = Recorder(httpx.Response(400, json=SGLANG_400))
    with pytest.raises(BadRequestError) as caught:
        client_for(recorder, retries=3).completions("GLM-5.2", [1])
    assert len(recorder.requests) == 1
    assert caught.value.message == "Prompt cannot be empty"
    assert caught.value.type == "BadRequestError" and caught.value.status_code == 400


def test_404_on_completions_points_to_chat_completions() -> None:
    recorder = Recorder(httpx.Response(404, json={"object": "error", "code": 404,
                                                  "message": "model not found",
                                                  "type": "NotFoundError"}))
    with pytest.raises(ChatOnlyModelError) as caught:
        client_for(recorder).completions("SomeModel", [1])
    message = str(caught.value)
    assert "chat-only" in message and "chat_completions(" in message
    assert "response_format={\"type\": \"json_object\"}" in message


def test_chat_only_models_warn_before_sending() -> None:
    assert known_models()["Kimi-K2.6"] is False and known_models()["GLM-5.1"] is True
    recorder = Recorder(httpx.Response(200, json=OK))
    with pytest.warns(ChatOnlyModelWarning, match="chat_completions"):
        client_for(recorder).completions("Qwen3.6-35B-A3B", [1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client_for(recorder).completions("GLM-5.2", [1])


def test_chat_completions_with_json_object() -> None:
    answer = {"id": "c", "object": "chat.completion", "created": 1, "model": "Kimi-K2.6",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "{\"a\": 1}"}}],
              "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}}
    recorder = Recorder(httpx.Response(200, json=answer))
    response = client_for(recorder).chat_completions(
        "Kimi-K2.6", [{"role": "user", "content": "json please"}],
        response_format={"type": "json_object"}, max_tokens=20)
    assert json.loads(response.text) == {"a": 1}
    (request,) = recorder.requests
    assert request.url.path == "/v1/chat/completions"
    assert json.loads(request.content)["response_format"] == {"type": "json_object"}


def test_stream_ends_at_done_and_keeps_usage() -> None:
    chunk = {"id": "c", "object": "text_completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "text": "A", "finish_reason": None}]}
    usage = {**chunk, "choices": [], "usage": OK["usage"]}
    recorder = Recorder(sse(chunk, usage, "[DONE]", chunk))
    stream = client_for(recorder).completions("GLM-5.2", [1], stream=True,
                                              stream_options={"include_usage": True})
    chunks = list(stream)
    assert len(chunks) == 2  # nothing after [DONE]
    assert stream.usage is not None and stream.usage.total_tokens == 3
    assert recorder.requests[0].headers["accept"] == "text/event-stream"


def test_stream_without_done_or_with_an_error_event_raises() -> None:
    chunk = {"id": "c", "object": "text_completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "text": "A"}]}
    with pytest.raises(APIConnectionError, match=r"without data: \[DONE\]"):
        list(client_for(Recorder(sse(chunk))).completions("GLM-5.2", [1], stream=True))
    error = {"error": {"object": "error", "message": "grammar died", "code": 400,
                       "type": "BadRequestError"}}
    with pytest.raises(BadRequestError, match="grammar died"):
        list(client_for(Recorder(sse(chunk, error, "[DONE]"))).completions("GLM-5.2", [1],
                                                                           stream=True))
    with pytest.raises(ResponseFormatError):
        list(client_for(Recorder(sse("{oops"))).completions("GLM-5.2", [1], stream=True))


def test_malformed_responses_raise_response_format_error() -> None:
    for bad in (httpx.Response(200, text="<html>"), httpx.Response(200, json={"choices": 3}),
                httpx.Response(200, json={"choices": [{"text": "no index"}]})):
        with pytest.raises(ResponseFormatError):
            client_for(Recorder(bad)).completions("GLM-5.2", [1])


def test_api_key_from_environment_never_printed(monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("GRAMMARKIT_API_KEY", KEY)
    recorder = Recorder(httpx.Response(401, json={"object": "error", "code": 401,
                                                  "type": "AuthenticationError",
                                                  "message": "bad key"}))
    client = CompletionsClient("http://provider.test", transport=httpx.MockTransport(recorder))
    caplog.set_level(logging.DEBUG)
    with pytest.raises(Exception) as caught:
        client.completions("GLM-5.2", [1])
    assert recorder.requests[0].headers["authorization"] == f"Bearer {KEY}"
    shown = [repr(client), str(caught.value), repr(caught.value), caplog.text,
             repr(caught.value.__cause__), repr(caught.value.__context__)]
    assert not any(KEY in text for text in shown)
    assert "<hidden>" in repr(client)


def test_async_client_retries_and_streams() -> None:
    chunk = {"id": "c", "object": "text_completion", "created": 1, "model": "m",
             "choices": [{"index": 0, "text": "B", "finish_reason": "stop"}]}
    recorder = Recorder(httpx.Response(502, text="bad gateway"), httpx.Response(200, json=OK),
                        sse(chunk, "[DONE]"))

    async def run() -> tuple[str, str]:
        async with AsyncCompletionsClient("http://provider.test", KEY, backoff=0.001,
                                          transport=httpx.MockTransport(recorder)) as client:
            whole = await client.completions("GLM-5.2", [1])
            stream = await client.completions("GLM-5.2", [1], stream=True)
            return whole.text, await stream.text()

    assert asyncio.run(run()) == ("A", "B")
    assert len(recorder.requests) == 3
