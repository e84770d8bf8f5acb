"""Load on the local ``/v1/completions`` server: requests per second and p50/p99 latency for 1, 8
and 64 concurrent clients, and the share of server time spent in grammar work (compiling the
grammar, computing token masks), with grammarkit's native backend and xgrammar side by side.

Each backend runs in its own ``grammarkit serve`` subprocess (random LM over the Qwen3.6
vocabulary) on a free loopback port; the clients are one asyncio process using
:class:`grammarkit.client.AsyncCompletionsClient`. Every request must succeed: a lost or failed
request aborts the run.

    python benchmarks/serve_load.py [--requests-per-client 4] [--max-tokens 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from grammarkit.client import AsyncCompletionsClient

ROOT = Path(__file__).resolve().parents[1]
CONCURRENCY = (1, 8, 64)
SCHEMA = json.dumps({
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 12},
                   "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
                   "age": {"type": "integer", "minimum": 0, "maximum": 120}},
    "required": ["name", "age"],
})


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start(backend: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRAMMARKIT_API_KEY", None)
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "grammarkit", "serve", "--port", str(port), "--backend",
             backend, "--log-level", "warning"], stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the {backend} server exited:\n{log.read_text()}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"the {backend} server did not start")


def metrics(url: str) -> dict[str, float]:
    text = httpx.get(url + "/metrics", timeout=10).text
    return {name.removeprefix("grammarkit_"): float(value)
            for name, value in (line.split() for line in text.splitlines() if line)}


async def load(url: str, clients: int, per_client: int, max_tokens: int
               ) -> tuple[float, list[float]]:
    """Wall seconds and per-request latencies of ``clients`` concurrent loops."""
    latencies: list[float] = []

    async def loop(client: AsyncCompletionsClient, worker: int) -> None:
        for k in range(per_client):
            started = time.perf_counter()
            response = await client.completions("default", [9703, 25, worker], json_schema=SCHEMA,
                                                max_tokens=max_tokens, seed=worker * 1000 + k)
            if not response.choices or response.choices[0].finish_reason is None:
                raise SystemExit(f"request lost: {response}")
            latencies.append(time.perf_counter() - started)

    async with AsyncCompletionsClient(url, timeout=600, retries=0,
                                      max_connections=clients) as client:
        started = time.perf_counter()
        await asyncio.gather(*(loop(client, w) for w in range(clients)))
        return time.perf_counter() - started, latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_backend(backend: str, args: argparse.Namespace, log: Path
                ) -> dict[int, tuple[float, float, float, float, int]]:
    process, url = start(backend, log)
    try:
        asyncio.run(load(url, 1, 2, args.max_tokens))  # warm-up: grammar compiled, caches filled
        results = {}
        for clients in CONCURRENCY:
            before = metrics(url)
            per_client = max(1, args.requests_per_client * 8 // clients) if clients < 8 \
                else args.requests_per_client
            wall, latencies = asyncio.run(load(url, clients, per_client, args.max_tokens))
            after = metrics(url)
            served = int(after["requests_total"] - before["requests_total"])
            if served != len(latencies) or len(latencies) != clients * per_client:
                raise SystemExit(f"{backend}: {clients * per_client} sent, {served} served")
            grammar = after["grammar_seconds_total"] - before["grammar_seconds_total"]
            total = after["generation_seconds_total"] - before["generation_seconds_total"]
            results[clients] = (len(latencies) / wall, percentile(latencies, 0.5),
                                percentile(latencies, 0.99), grammar / total if total else 0.0,
                                len(latencies))
        return results
    finally:
        process.terminate()
        process.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests-per-client", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=16)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        native = run_backend("native", args, Path(folder) / "native.log")
        reference = run_backend("xgrammar", args, Path(folder) / "xgrammar.log")
    print(f"JSON-schema requests, max_tokens={args.max_tokens}, random LM over the Qwen3.6 "
          "vocabulary; every request succeeded")
    print(f"{'clients':>7} {'requests':>8} | {'native rps':>10} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'grammar':>7} | {'xgr rps':>8} {'p50 ms':>8} {'p99 ms':>8} {'grammar':>7} | "
          f"{'rps ratio':>9}")
    for clients in CONCURRENCY:
        n_rps, n50, n99, n_share, count = native[clients]
        x_rps, x50, x99, x_share, _ = reference[clients]
        print(f"{clients:>7} {count:>8} | {n_rps:>10.1f} {n50 * 1e3:>8.0f} {n99 * 1e3:>8.0f} "
              f"{n_share:>7.0%} | {x_rps:>8.1f} {x50 * 1e3:>8.0f} {x99 * 1e3:>8.0f} "
              f"{x_share:>7.0%} | {n_rps / x_rps:>8.2f}x")


if __name__ == "__main__":
    main()
