"""docs/limits.md names real constants, and quotes their values where it gives one number."""

from __future__ import annotations

import importlib
import re

from tests.conftest import REPO_ROOT

DOC = (REPO_ROOT / "docs" / "limits.md").read_text("utf-8")
ROW = re.compile(r"^\| (.*?) \| (.*?) \|", re.MULTILINE)
REFERENCE = re.compile(r"`([\w/]+\.py)` `(\w+)`")
SECTION_PACKAGES = {"JSON Schema": "grammarkit/convert/json_schema/"}


def _module(path: str, section: str) -> str:
    prefix = SECTION_PACKAGES.get(section, "grammarkit/")
    full = path if path.startswith(("grammarkit/", "cli/", "vocab/")) else prefix + path
    if not full.startswith("grammarkit/"):
        full = "grammarkit/" + full
    return full.removesuffix(".py").replace("/", ".")


def _references() -> list[tuple[str, str, str]]:
    found = []
    section = ""
    for line in DOC.splitlines():
        if line.startswith("## "):
            section = line[3:]
        match = ROW.match(line)
        if match:
            for path, name in REFERENCE.findall(match.group(1)):
                found.append((_module(path, section), name, match.group(2)))
    return found


def test_every_named_limit_exists_with_the_value_quoted() -> None:
    references = _references()
    assert len(references) >= 15
    for module, name, value in references:
        actual = getattr(importlib.import_module(module), name)
        if re.fullmatch(r"[\d,]+", value):
            assert actual == int(value.replace(",", "")), (module, name, value)
