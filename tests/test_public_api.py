"""The public names of DESIGN.md resolve, and importing grammarkit stays light."""

from __future__ import annotations

import subprocess
import sys

import grammarkit


def test_every_public_name_resolves() -> None:
    for name in grammarkit.__all__:
        assert getattr(grammarkit, name) is not None, name


def test_import_loads_no_heavy_module() -> None:
    code = (
        "import sys, grammarkit; "
        "print(sorted(m for m in ('numpy', 'lark', 'torch', 'xgrammar', 'transformers') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
