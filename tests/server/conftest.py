"""A real ``grammarkit serve`` in a subprocess on a free loopback port, shared by the session."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT

API_KEY = "gk-test-key-7d1c0e5a"
"""The session server's key; tests check it never shows up in logs or errors."""

STARTUP_SECONDS = 90


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def log_text(self) -> str:
        return self.log.read_text("utf-8", "replace")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(log: Path, *args: str, api_key: str | None = None) -> Server:
    """``grammarkit serve`` on a free port, once ``/health`` answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("GRAMMARKIT_API_KEY", None)
    if api_key is not None:
        env["GRAMMARKIT_API_KEY"] = api_key
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "grammarkit", "serve", "--port", str(port), *args],
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO_ROOT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text('utf-8', 'replace')}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return Server(url, process, log)
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the server did not start in {STARTUP_SECONDS} s")


def stop(server: Server) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(15)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The session's server: Qwen3.6 vocabulary, random LM, API key required."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    running = start_server(log, "--tokenizer", "qwen3.6", "--model", "grammarkit-test",
                           api_key=API_KEY)
    yield running
    stop(running)


@pytest.fixture
def tiny_vocab(tmp_path: Path) -> Path:
    """A ``.tiktoken`` file of the 256 single bytes and a few words: a server on it starts fast."""
    words = [bytes([b]) for b in range(256)] + [b"ab", b"abc", b"hello", b" world"]
    path = tmp_path / "tiny.tiktoken"
    path.write_text("".join(f"{base64.b64encode(w).decode()} {i}\n" for i, w in enumerate(words)))
    return path
