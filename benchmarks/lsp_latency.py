"""Language server latency: from an edit to its diagnostics, on a 1,000-line grammar, in one run.

A real client (pygls) starts ``grammarkit lsp``, opens a grammar of ``--lines`` rules, then makes
``--rounds`` rounds of an edit mix, one edit at a time, each waiting for the diagnostics of its
document version. Every edit comes in a pair whose second half restores the text:

* ``typo``/``fix``: a reference on a middle line becomes an undefined name (an error, so no lint
  warning runs) and back (the error clears: every lint rule runs again);
* the same on the third line (``typo top``/``fix top``: every rule after it moves);
* ``type``/``erase``: a character typed into a literal and erased (clean both times), and the
  same on the third line (``type top``/``erase top``: every rule after it moves and is linted);
* ``add rule``/``delete rule``: a new line with a rule nobody uses (a warning) and its removal;
* ``rename``/``rename back``: the server's rename of a rule used on several lines, applied as
  the editor applies it.

It prints the wall time from sending the change to receiving the diagnostics (debounce included:
``DEBOUNCE_SECONDS``) per edit kind and overall (median, 90th percentile, worst), and the server's
CPU time per edit (user + system, from ``/proc``: waiting for a loaded machine does not count);
then the same versions' diagnostics computed in process, incrementally as the server does and
whole (parse and lint from scratch), each right after the other so load affects both alike; the
whole document's parse and lint, and xgrammar's ``Grammar.from_ebnf`` of the same text as a
reference for the size of the work. Each publication's diagnostics are checked against
``grammarkit lint`` of the same text.

Run: ``python benchmarks/lsp_latency.py [--lines N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from grammarkit.analysis.lint import lint
from grammarkit.authoring.document import DocumentHistory, GrammarDocument
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


@dataclass(frozen=True)
class Change:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


class Client(LanguageClient):
    """Records each diagnostics publication as it arrives: version, count, time."""

    def __init__(self) -> None:
        super().__init__("lsp-latency", "1")
        self.published: asyncio.Queue[tuple[int | None, int, float]] = asyncio.Queue()


class Session:
    """The client's copy of the document, and the edits it sends."""

    def __init__(self, client: Client, text: str):
        self.client = client
        self.text = text
        self.version = 1
        self.server_pid = client._server.pid  # type: ignore[attr-defined]
        self.results: list[tuple[str, float, float, int, str]] = []
        """Per edit: kind, latency, server CPU seconds, diagnostics published, text."""

    def position(self, offset: int) -> types.Position:
        line = self.text.count("\n", 0, offset)
        return types.Position(line=line, character=offset - (self.text.rfind("\n", 0, offset) + 1))

    async def edit(self, kind: str, changes: list[Change]) -> None:
        """Send ``changes`` (applied one after the other) and wait for the diagnostics."""
        protocol_changes = []
        for change in changes:
            protocol_changes.append(types.TextDocumentContentChangePartial(
                range=types.Range(start=self.position(change.start),
                                  end=self.position(change.end)), text=change.new))
            self.text = self.text[:change.start] + change.new + self.text[change.end:]
        self.version += 1
        cpu = _cpu_seconds(self.server_pid)
        sent = time.perf_counter()
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=self.version),
            content_changes=protocol_changes))
        while True:
            got, count, arrived = await self.client.published.get()
            if got == self.version:
                break
        self.results.append((kind, arrived - sent, _cpu_seconds(self.server_pid) - cpu, count,
                             self.text))

    async def replace_word(self, kind: str, line: int, old: str, new: str) -> None:
        start = _line_start(self.text, line) + _line(self.text, line).index(old)
        await self.edit(kind, [Change(start, start + len(old), new)])

    async def rename(self, kind: str, name: str, new_name: str) -> None:
        """Ask the server to rename rule ``name`` and apply its edits, last first."""
        offset = self.text.index(f"\n{name} ::=") + 1
        answer = await self.client.text_document_rename_async(types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=self.position(offset), new_name=new_name))
        assert answer is not None and answer.changes is not None
        edits = sorted(answer.changes[URI], key=lambda e: (e.range.start.line,
                                                           e.range.start.character), reverse=True)
        changes = [Change(self._offset(e.range.start), self._offset(e.range.end), e.new_text)
                   for e in edits]
        await self.edit(kind, changes)

    def _offset(self, position: types.Position) -> int:
        return _line_start(self.text, position.line) + position.character


def _line_start(text: str, line: int) -> int:
    start = 0
    for _ in range(line):
        start = text.index("\n", start) + 1
    return start


def _line(text: str, line: int) -> str:
    start = _line_start(text, line)
    return text[start:text.index("\n", start)]


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` (Linux ``/proc``; 0 elsewhere)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(text: str, rounds: int) -> list[tuple[str, float, float, int, str]]:
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
    session = Session(client, text)
    middle = text.count("\n") // 2
    reference = _line(text, middle).split("( ")[1].split(" ")[0]
    top_reference = _line(text, 2).split("( ")[1].split(" ")[0]
    literal = _line(text, middle).split('"')[1]
    top_literal = _line(text, 2).split('"')[1]
    renamed = _line(text, middle + 1).split(" ")[0]
    for _ in range(rounds):
        await session.replace_word("typo", middle, f"( {reference} ", f"( {reference}_typo ")
        await session.replace_word("fix", middle, f"( {reference}_typo ", f"( {reference} ")
        await session.replace_word("typo top", 2, f"( {top_reference} ", f"( {top_reference}x ")
        await session.replace_word("fix top", 2, f"( {top_reference}x ", f"( {top_reference} ")
        await session.replace_word("type", middle, f'"{literal}"', f'"{literal}z"')
        await session.replace_word("erase", middle, f'"{literal}z"', f'"{literal}"')
        await session.replace_word("type top", 2, f'"{top_literal}"', f'"{top_literal}z"')
        await session.replace_word("erase top", 2, f'"{top_literal}z"', f'"{top_literal}"')
        at = _line_start(session.text, middle)
        await session.edit("add rule", [Change(at, at, 'extra ::= "x" ws ( r1 | "y" )\n')])
        await session.edit("delete rule", [Change(at, session.text.index("\n", at) + 1, "")])
        await session.rename("rename", renamed, f"{renamed}_renamed")
        await session.rename("rename back", f"{renamed}_renamed", renamed)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return session.results


def check(results: list[tuple[str, float, float, int, str]]) -> None:
    """Each publication has as many diagnostics as ``grammarkit lint`` reports for its text."""
    expected: dict[str, int] = {}
    for kind, _, _, count, text in results:
        if text not in expected:
            expected[text] = len(lint(text))
        if count != expected[text]:
            raise AssertionError(f"{kind}: {count} diagnostics published, lint finds "
                                 f"{expected[text]}")


def replay(text: str, results: list[tuple[str, float, float, int, str]]
           ) -> dict[str, list[tuple[float, float]]]:
    """Per edit kind, the CPU time of the same versions' diagnostics in process: incrementally
    (as the server computes them) and whole, one right after the other (a fair comparison on
    a loaded machine)."""
    history = DocumentHistory()
    assert GrammarDocument(text, history=history).diagnostics == []
    times: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for kind, _, _, _, version in results:
        start = time.process_time()
        ours = GrammarDocument(version, history=history).diagnostics
        middle = time.process_time()
        whole = GrammarDocument(version).diagnostics
        times[kind].append((middle - start, time.process_time() - middle))
        assert [d.headline() for d in ours] == [d.headline() for d in whole]
    return times


def best(run: object, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()  # type: ignore[operator]
        times.append(time.process_time() - start)
    return min(times)


def _summary(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return (f"median {statistics.median(ordered) * 1000:4.0f} ms, p90 {p90 * 1000:4.0f} ms, "
            f"worst {ordered[-1] * 1000:4.0f} ms")


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--lines", type=int, default=1000)
    options.add_argument("--rounds", type=int, default=5)
    args = options.parse_args()
    text = grammar(args.lines)
    results = asyncio.run(measure(text, args.rounds))
    check(results)
    by_kind: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for kind, latency, cpu, _, _ in results:
        by_kind[kind].append((latency, cpu))
    print(f"grammar: {args.lines} lines, {len(text) / 1000:.0f} kB; debounce "
          f"{DEBOUNCE_SECONDS * 1000:.0f} ms; {len(results)} edits; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    replayed = replay(text, results)
    print(f"{'edit':<12} edit -> diagnostics (wall){'':<20} server CPU   in process: "
          "incremental / whole (CPU, median)")
    for kind, measured in by_kind.items():
        cpu = statistics.mean(c for _, c in measured) * 1000
        ours = statistics.median(i for i, _ in replayed[kind]) * 1000
        whole = statistics.median(w for _, w in replayed[kind]) * 1000
        print(f"{kind:<12} {_summary([latency for latency, _ in measured])}   {cpu:4.0f} ms"
              f"      {ours:4.0f} / {whole:4.0f} ms")
    cpu = statistics.mean(c for _, _, c, _, _ in results) * 1000
    ours = statistics.median(i for kind in replayed for i, _ in replayed[kind]) * 1000
    whole = statistics.median(w for kind in replayed for _, w in replayed[kind]) * 1000
    print(f"{'all':<12} {_summary([latency for _, latency, _, _, _ in results])}   {cpu:4.0f} ms"
          f"      {ours:4.0f} / {whole:4.0f} ms")
    parsed = best(lambda: parse(text))
    linted = best(lambda: lint(text))
    try:
        import xgrammar as xgr

        theirs = f"{best(lambda: xgr.Grammar.from_ebnf(text)) * 1000:.0f} ms"
    except ImportError:
        theirs = "(xgrammar not installed)"
    print(f"in process (CPU): whole parse {parsed * 1000:.0f} ms, whole lint (parse included) "
          f"{linted * 1000:.0f} ms; xgrammar from_ebnf {theirs}")


if __name__ == "__main__":
    main()
