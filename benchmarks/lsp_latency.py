"""Language server latency: from an edit to its diagnostics, on a 1,000-line grammar, in one run.

A real client (pygls) starts ``grammarkit lsp``, opens a grammar of ``--lines`` rules, then makes
``--edits`` edits one at a time: each replaces one reference on a middle line (alternately with an
undefined name, which is an error, and back, which is clean) and waits for the diagnostics of
that document version. It prints the wall time from sending the change to receiving them
(debounce included: ``DEBOUNCE_SECONDS``), beside the same document's parse and lint in process,
and xgrammar's ``Grammar.from_ebnf`` of the same text as a reference for the size of the work.

Run: ``python benchmarks/lsp_latency.py [--lines N] [--edits N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from grammarkit.analysis.lint import lint
from grammarkit.authoring.language_server import DEBOUNCE_SECONDS
from grammarkit.ebnf.parser import parse

URI = "file:///bench/grammar.ebnf"


def grammar(lines: int) -> str:
    """``lines`` rules shaped like hand-written ones, every reference defined."""
    rules = ['root ::= ws "{" ws r1 ws ("," ws r2)* ws "}" ws', 'ws ::= [ \\t\\n]{0,8}']
    for k in range(1, lines - 1):
        a, b = (k * 7) % (lines - 2) + 1, (k * 13) % (lines - 2) + 1
        rules.append(f'r{k} ::= "key_{k}" ws ":" ws ( r{a} | [a-z0-9_]+ | "null" ) '
                     f'("," ws r{b}){{0,2}}')
    return "\n".join(rules) + "\n"


class Client(LanguageClient):
    """Records the version of each diagnostics publication as it arrives."""

    def __init__(self) -> None:
        super().__init__("lsp-latency", "1")
        self.published: asyncio.Queue[tuple[int | None, int, float]] = asyncio.Queue()


async def measure(text: str, edits: int) -> list[float]:
    client = Client()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(ls: Client, params: types.PublishDiagnosticsParams) -> None:
        ls.published.put_nowait((params.version, len(params.diagnostics), time.perf_counter()))

    await client.start_io(sys.executable, "-m", "grammarkit", "lsp")
    await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    client.initialized(types.InitializedParams())
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=URI, language_id="ebnf", version=1, text=text)))
    await client.published.get()
    lines = text.splitlines()
    line = len(lines) // 2
    column = lines[line].index("( r") + 2
    name = lines[line][column:].split(" ", 1)[0]
    latencies = []
    for version in range(2, edits + 2):
        new = name + "_typo" if version % 2 == 0 else name
        old_length = len(name) if version % 2 == 0 else len(name) + len("_typo")
        sent = time.perf_counter()
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=types.Position(line=line, character=column),
                                  end=types.Position(line=line, character=column + old_length)),
                text=new)]))
        while True:
            got, count, arrived = await client.published.get()
            if got == version:
                break
        expected = 1 if version % 2 == 0 else 0
        if count != expected:
            raise AssertionError(f"version {version}: {count} diagnostics, expected {expected}")
        latencies.append(arrived - sent)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return latencies


def best(run: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--lines", type=int, default=1000)
    options.add_argument("--edits", type=int, default=20)
    args = options.parse_args()
    text = grammar(args.lines)
    latencies = asyncio.run(measure(text, args.edits))
    parsed = best(lambda: parse(text))
    linted = best(lambda: lint(text))
    try:
        import xgrammar as xgr

        theirs = f"{best(lambda: xgr.Grammar.from_ebnf(text)) * 1000:.0f} ms"
    except ImportError:
        theirs = "(xgrammar not installed)"
    print(f"grammar: {args.lines} lines, {len(text) / 1000:.0f} kB; debounce "
          f"{DEBOUNCE_SECONDS * 1000:.0f} ms")
    print(f"edit -> diagnostics: median {statistics.median(latencies) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms over {len(latencies)} edits")
    print(f"in process: parse {parsed * 1000:.0f} ms, lint (parse included) "
          f"{linted * 1000:.0f} ms; xgrammar from_ebnf {theirs}")


if __name__ == "__main__":
    main()
