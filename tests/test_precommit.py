"""The pre-commit hooks in ``.pre-commit-hooks.yaml``, run by the real ``pre-commit`` tool.

A hook repository is built from this checkout (its hook manifest, packaging files and package
source, committed to a fresh git repository). A user's repository lists it in its
``.pre-commit-config.yaml`` by path and commit, so ``pre-commit run`` clones it, reads the
manifest and pip-installs the package into a virtualenv, as it does for users. (``pre-commit
try-repo`` would do the same but ignores ``PRE_COMMIT_HOME`` and reinstalls on every run.)
``PRE_COMMIT_HOME`` is shared by the runs, so the environment is installed once.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
HOOK_REPO_FILES = (".pre-commit-hooks.yaml", "pyproject.toml", "README.md")

GOOD = 'root ::= "a" | digit+  # a letter or a number\ndigit ::= [0-9]\n'
BAD = 'root ::= "[" valu "]"\nvalue ::= [0-9]+ | Regex("+a")\n'
MESSY = 'root   ::=  ("a")   |"b"\n'
GOOD_EXAMPLES = "=== a letter ===\na\n--- accept\n\n=== a word ===\nab\n--- reject 1:2\n"


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=grammarkit tests", "-c", "user.email=tests@example.invalid",
         "-c", "commit.gpgsign=false", *args],
        cwd=cwd, check=True, capture_output=True, timeout=60,
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository holding this checkout's hook manifest and package, and its commit."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in HOOK_REPO_FILES:
        shutil.copy(REPO_ROOT / name, repo / name)
    shutil.copytree(REPO_ROOT / "grammarkit", repo / "grammarkit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "hooks")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True,
                          capture_output=True, text=True, timeout=60).stdout.strip()
    return repo, head


@pytest.fixture()
def pre_commit_home(tmp_path: Path) -> Path:
    return tmp_path / "pre-commit-home"


@pytest.fixture()
def project(tmp_path: Path, hook_repo: tuple[Path, str]) -> Path:
    """A user's repository using both hooks, with a good, a bad and an untidy grammar."""
    repo, rev = hook_repo
    path = tmp_path / "project"
    path.mkdir()
    (path / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n"
        "  - id: grammarkit-lint\n  - id: grammarkit-fmt\n  - id: grammarkit-test\n"
        "  - id: grammarkit-check\n    args: [--tokenizer, bytes.tiktoken, --stop-token, '0']\n"
    )
    # a byte-level vocabulary of 256 tokens (the check hook's tokenizer)
    (path / "bytes.tiktoken").write_text(
        "".join(f"{base64.b64encode(bytes([b])).decode()} {b}\n" for b in range(256)))
    for name, text in (("good.ebnf", GOOD), ("bad.ebnf", BAD), ("messy.ebnf", MESSY),
                       ("notes.txt", "root ::= not a grammar\n"), ("good.examples", GOOD_EXAMPLES)):
        (path / name).write_text(text)
    _git(path, "init", "-q")
    _git(path, "add", ".")
    return path


def run_hook(home: Path, project: Path, hook: str, *files: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRE_COMMIT", "GIT_"))}
    env["PRE_COMMIT_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", hook, "--color", "never", "--files", *files],
        cwd=project, env=env, capture_output=True, text=True, timeout=600, check=False,
    )


def test_hooks_check_and_format_grammars(pre_commit_home: Path, project: Path) -> None:
    # One test, so that the hook environment is installed once even under pytest-xdist.
    bad = run_hook(pre_commit_home, project, "grammarkit-lint", "bad.ebnf", "notes.txt")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "grammarkit lint" in bad.stdout and "Failed" in bad.stdout
    assert "bad.ebnf:1:14: GK103 rule `valu` is not defined" in bad.stdout
    assert "bad.ebnf:2:20: GK131 invalid Regex pattern" in bad.stdout  # issue 7 item 5
    assert "notes.txt" not in bad.stdout

    good = run_hook(pre_commit_home, project, "grammarkit-lint", "good.ebnf", "notes.txt")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout

    first = run_hook(pre_commit_home, project, "grammarkit-fmt", "messy.ebnf", "good.ebnf")
    assert first.returncode == 1, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout
    assert (project / "messy.ebnf").read_text() == 'root ::= "a" | "b"\n'
    assert (project / "good.ebnf").read_text() == GOOD

    second = run_hook(pre_commit_home, project, "grammarkit-fmt", "messy.ebnf", "good.ebnf")
    assert second.returncode == 0, second.stdout + second.stderr

    tested = run_hook(pre_commit_home, project, "grammarkit-test", "good.ebnf", "messy.ebnf")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    (project / "good.examples").write_text(GOOD_EXAMPLES.replace("reject 1:2", "accept"))
    failed = run_hook(pre_commit_home, project, "grammarkit-test", "good.examples")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "FAIL `a word`: expected accept" in failed.stdout

    checked = run_hook(pre_commit_home, project, "grammarkit-check", "good.ebnf", "notes.txt")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (project / "endless.ebnf").write_text('root ::= "a" root\n')
    endless = run_hook(pre_commit_home, project, "grammarkit-check", "endless.ebnf")
    assert endless.returncode == 1 and "endless.ebnf:1:1: GK310" in endless.stdout
