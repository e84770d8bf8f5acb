"""Servers that die or are stopped: the client raises a clear error within its timeout, and
SIGTERM shuts the server down cleanly. Each test runs its own small server (tiny vocabulary)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from grammarkit.client import APIConnectionError, APITimeoutError, CompletionsClient
from tests.server.conftest import start_server, stop

LONG = "root ::= [a-z]+"


def test_server_frozen_or_killed_mid_stream_raises_within_the_timeout(
        tmp_path: Path, tiny_vocab: Path) -> None:
    server = start_server(tmp_path / "log", "--tokenizer", str(tiny_vocab))
    client = CompletionsClient(server.url, timeout=2, retries=0)
    try:
        for stop_how, error in ((signal.SIGSTOP, APITimeoutError),
                                (signal.SIGKILL, APIConnectionError)):
            stream = client.completions("m", [104], stream=True, ebnf=LONG, max_tokens=30000)
            chunks = iter(stream)
            for _ in range(5):
                assert next(chunks).choices[0].text
            server.process.send_signal(stop_how)
            started = time.monotonic()
            with pytest.raises(error) as caught:
                for _ in chunks:
                    pass
            assert time.monotonic() - started < 2 + 3
            message = str(caught.value)
            assert server.url in message and "chunks" in message
            server.process.send_signal(signal.SIGCONT)
    finally:
        stop(server)


def test_sigterm_stops_the_server_cleanly(tmp_path: Path, tiny_vocab: Path) -> None:
    log = tmp_path / "log"
    server = start_server(log, "--tokenizer", str(tiny_vocab))
    try:
        client = CompletionsClient(server.url, timeout=10, retries=0)
        assert client.completions("m", [104], ebnf=LONG, max_tokens=3).text
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(15) == 0
        assert "Finished server process" in server.log_text()
        assert not client.health()
        with pytest.raises(APIConnectionError, match="connection to .* failed"):
            client.completions("m", [104], ebnf=LONG, max_tokens=3)
    finally:
        stop(server)
