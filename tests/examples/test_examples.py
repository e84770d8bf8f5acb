"""Every script in examples/ runs (in this process, so the heavy imports are shared)."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

import grammarkit as gk

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _main(name: str) -> Any:
    return runpy.run_path(str(EXAMPLES / name), run_name=f"example_{Path(name).stem}")["main"]


def test_json_pipeline_gives_valid_records(capsys: pytest.CaptureFixture[str]) -> None:
    records = _main("json_pipeline.py")([])
    assert len(records) == 2
    printed = capsys.readouterr().out.splitlines()
    for line, record in zip(printed, records):
        assert json.loads(line.split("  (")[0]) == record
        assert "forced by the grammar" in line


def test_logits_processor_in_three_lines(capsys: pytest.CaptureFixture[str]) -> None:
    date = _main("transformers_logits_processor.py")([])
    assert gk.Grammar.from_regex(r"20\d\d-(0[1-9]|1[0-2])-[0-2]\d").matches(date)
    assert capsys.readouterr().out.strip() == date


@pytest.mark.xgrammar
def test_backends_agree(capsys: pytest.CaptureFixture[str]) -> None:
    same = _main("compare_backends.py")([])
    assert same and all(same.values())
    table = capsys.readouterr().out
    assert table.count("same tokens: True") == len(same)
