"""docs/diagnostics.md's GK3xx examples behave as documented, on the vocabulary each names."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import grammarkit as gk
from grammarkit.check import CODES
from grammarkit.check.tokenizers import LoadedTokenizer, load_tokenizer
from tests.check.conftest import letters_vocabulary

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
SECTION = re.compile(r"^## (GK3[0-4]\d) ([a-z0-9-]+)$", re.MULTILINE)
HEADING = re.compile(r"^#{1,2} ", re.MULTILINE)
EXAMPLE = re.compile(r"```ebnf (tokenizer=\S+(?: \w+=\S*)*)\n(.*?)```", re.DOTALL)
_LOADED: dict[str, LoadedTokenizer] = {}


def _sections() -> dict[str, str]:
    """Code -> its section's text, up to the next heading."""
    text = DOC.read_text("utf-8")
    sections = {}
    for match in SECTION.finditer(text):
        end = HEADING.search(text, match.end())
        sections[match.group(1)] = text[match.end(): end.start() if end else None]
    return sections


def _tokenizer(name: str) -> LoadedTokenizer:
    if name not in _LOADED:
        _LOADED[name] = (LoadedTokenizer(letters_vocabulary(), None, name) if name == "letters"
                         else load_tokenizer(name))
    return _LOADED[name]


def _run(info: str, grammar: str) -> Any:
    options = dict(part.split("=", 1) for part in info.split())
    loaded = _tokenizer(options["tokenizer"])
    vocab = loaded.vocab
    if "vocab_size" in options:
        vocab = vocab.with_vocab_size(int(options["vocab_size"]))
    stops = None
    if "stop" in options:
        stops = [int(i) for i in options["stop"].split(",") if i]
    return gk.check(gk.Grammar.from_ebnf(grammar), vocab, encoder=loaded.encoder,
                    stop_token_ids=stops, samples=20)


def test_every_check_code_is_documented_with_examples() -> None:
    sections = _sections()
    assert set(CODES) == set(sections)
    for code, body in sections.items():
        assert len(EXAMPLE.findall(body)) == 2, f"{code} needs a bad and a fixed example"


@pytest.mark.parametrize("code", sorted(CODES))
def test_examples_behave_as_documented(code: str) -> None:
    (bad_info, bad), (fixed_info, fixed) = EXAMPLE.findall(_sections()[code])
    assert code in {d.code for d in _run(bad_info, bad).diagnostics}
    report = _run(fixed_info, fixed)
    assert report.ok, report.render()
    assert code not in {d.code for d in report.diagnostics}
