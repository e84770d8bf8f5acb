"""The official JSON-Schema-Test-Suite (draft 2020-12), judged by grammarkit's own recognizer.

Every schema is converted once with ``lenient=True`` and ``property_order="any"`` (JSON objects
are unordered), and each test instance is matched in two spellings: compact, and pretty-printed
(``indent=2``) under flexible whitespace. The per-file results are compared with the checked-in
baseline ``json_schema_baseline.json``, a ratchet: no file may get fewer instances right, and
no invalid instance may ever be accepted unless the conversion warned (the soundness contract).

Set ``GRAMMARKIT_UPDATE_BASELINE=1`` to rewrite the baseline after an improvement. The
``xgrammar``-marked test runs xgrammar 0.2.8 on the same suite and checks grammarkit gets at
least as many instances right on every file.
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from grammarkit import Grammar
from grammarkit.convert.errors import SchemaError
from grammarkit.diagnostics import Severity

SUITE = (Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
         / "json-schema-test-suite" / "draft2020-12")
BASELINE = Path(__file__).with_name("json_schema_baseline.json")

pytestmark = pytest.mark.skipif(not SUITE.is_dir(), reason="conformance data not present")


@dataclass
class FileResult:
    """How grammarkit did on one file of the suite (and the EBNF of its grammars)."""

    total: int = 0
    right: int = 0
    unsound: int = 0
    mismatches: list[str] = field(default_factory=list)
    ebnf: list[str] = field(default_factory=list)


def _spellings(data: Any) -> list[str]:
    compact = json.dumps(data, separators=(",", ":"))
    pretty = json.dumps(data, indent=2)
    return [compact] if pretty == compact else [compact, pretty]


def _run_file(path: Path) -> FileResult:
    result = FileResult()
    for group in json.loads(path.read_text("utf-8")):
        try:
            grammar: Grammar | None = Grammar.from_json_schema(
                group["schema"], lenient=True, property_order="any")
            assert grammar is not None
            warned = any(d.severity is Severity.WARNING for d in grammar.warnings)
            result.ebnf.append(grammar.to_ebnf())
        except SchemaError:
            grammar, warned = None, True
        for test in group["tests"]:
            verdicts = {grammar is not None and grammar.matches(text)
                        for text in _spellings(test["data"])}
            if len(verdicts) > 1:
                result.mismatches.append(f"{group['description']} / {test['description']}")
            accepted = verdicts == {True}
            result.total += 1
            result.right += accepted == test["valid"]
            result.unsound += accepted and not test["valid"] and not warned
    return result


@pytest.fixture(scope="module")
def results() -> dict[str, FileResult]:
    return {path.name: _run_file(path) for path in sorted(SUITE.glob("*.json"))}


def _baseline() -> dict[str, Any]:
    return json.loads(BASELINE.read_text("utf-8"))


def test_soundness_contract(results: dict[str, FileResult]) -> None:
    """No invalid instance is accepted unless the conversion warned."""
    unsound = {name: r.unsound for name, r in results.items() if r.unsound}
    assert not unsound


def test_whitespace_does_not_change_verdicts(results: dict[str, FileResult]) -> None:
    """Compact and pretty-printed spellings of an instance get the same verdict."""
    assert {name: r.mismatches for name, r in results.items() if r.mismatches} == {}


def test_ratchet(results: dict[str, FileResult]) -> None:
    """No file gets fewer instances right than the checked-in baseline."""
    if os.environ.get("GRAMMARKIT_UPDATE_BASELINE"):
        baseline = _baseline() if BASELINE.exists() else {"files": {}}
        for name, result in results.items():
            entry = baseline["files"].setdefault(name, {})
            entry.update(total=result.total, grammarkit=result.right)
        baseline["grammarkit_total"] = sum(r.right for r in results.values())
        BASELINE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n", "utf-8")
    files = _baseline()["files"]
    regressions = {name: (result.right, files[name]["grammarkit"])
                   for name, result in results.items()
                   if name in files and result.right < files[name]["grammarkit"]}
    assert not regressions, "(now, baseline) per file"
    assert set(results) <= set(files), "new suite files: update the baseline"


@pytest.mark.xgrammar
def test_at_least_as_right_as_xgrammar_everywhere(results: dict[str, FileResult]) -> None:
    """xgrammar 0.2.8 on the same suite (its defaults but ``strict_mode=False``, the JSON
    Schema meaning of a missing ``additionalProperties``): grammarkit is right at least as often
    on every file. Every grammarkit grammar of the suite also compiles in xgrammar."""
    xgrammar = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    for result in results.values():
        for text in result.ebnf:
            xgrammar.Grammar.from_ebnf(text)  # grammarkit's EBNF compiles unchanged
    behind = {}
    xgrammar_results = {}
    for path in sorted(SUITE.glob("*.json")):
        right = accepted_invalid = 0
        for group in json.loads(path.read_text("utf-8")):
            try:
                compiled = xgrammar.Grammar.from_json_schema(json.dumps(group["schema"]),
                                                             strict_mode=False)
            except Exception:  # noqa: BLE001 - xgrammar raises bare RuntimeErrors
                compiled = None
            for test in group["tests"]:
                text = json.dumps(test["data"], separators=(",", ":"))
                accepted = compiled is not None and _is_grammar_accept_string(compiled, text)
                right += accepted == test["valid"]
                accepted_invalid += accepted and not test["valid"]
        xgrammar_results[path.name] = (right, accepted_invalid)
        if results[path.name].right < right:
            behind[path.name] = (results[path.name].right, right)
    if os.environ.get("GRAMMARKIT_UPDATE_BASELINE"):
        baseline = _baseline()
        for name, (right, accepted_invalid) in xgrammar_results.items():
            baseline["files"][name].update(xgrammar=right, xgrammar_invalid_accepted=accepted_invalid)
        baseline["xgrammar_total"] = sum(r for r, _ in xgrammar_results.values())
        BASELINE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n", "utf-8")
    assert not behind, "(grammarkit, xgrammar) right per file"
