"""Every snippet in README.md runs as written (issue 12: a fresh clone must not fail on them).

Python blocks run in one namespace from the repository root; each ``$ grammarkit ...`` line of
the console blocks runs in a shell (the install lines: only their ``grammarkit`` commands) and
must exit 0, or 1 where its comment starts with ``exit 1``. The conformance figures quoted match the
checked-in baseline the conformance test keeps.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text("utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)


def _blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(README) if lang == language]


def _commands() -> list[tuple[str, int]]:
    commands = []
    for body in _blocks("console"):
        for line in body.splitlines():
            if not line.startswith("$ "):
                continue
            code, _, comment = line[2:].partition("  #")
            expected = 1 if comment.strip().startswith("exit 1") else 0
            for part in code.split("&&"):
                if part.strip().startswith("grammarkit "):
                    commands.append((part.strip(), expected))
    return commands


def test_python_snippets_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO_ROOT)
    namespace = {"__name__": "readme"}
    snippets = _blocks("python")
    assert snippets
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), namespace)  # noqa: S102


def test_console_snippets_run(tmp_path: Path) -> None:
    workdir = tmp_path / "clone"
    for folder in ("grammars", "tests/cli/schemas"):
        shutil.copytree(REPO_ROOT / folder, workdir / folder)
    script = Path(sys.executable).with_name("grammarkit")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT),
           "PATH": f"{script.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    commands = _commands()
    assert len(commands) >= 9
    for command, expected in commands:
        completed = subprocess.run(command, shell=True, cwd=workdir, env=env, text=True,
                                   capture_output=True, timeout=60, check=False)
        assert completed.returncode == expected, f"{command}\n{completed.stderr}"
        assert "Traceback" not in completed.stderr


def test_conformance_figures_match_the_baseline() -> None:
    baseline = json.loads((REPO_ROOT / "tests/convert/json_schema_baseline.json").read_text())
    total = sum(entry["total"] for entry in baseline["files"].values())
    quoted = f"grammarkit gets {baseline['grammarkit_total']:,} of {total:,}"
    assert quoted in " ".join(README.split())
    assert f"xgrammar 0.2.8 gets {baseline['xgrammar_total']:,} right" in " ".join(README.split())
