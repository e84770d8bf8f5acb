"""grammarkit: author, validate and run grammars for LLM constrained decoding.

Public names are loaded lazily so that ``import grammarkit`` stays fast for pre-commit hooks.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Grammar": "grammarkit.grammar",
    "GrammarError": "grammarkit.diagnostics",
    "Diagnostic": "grammarkit.diagnostics",
    "Severity": "grammarkit.diagnostics",
    "lint": "grammarkit.analysis.lint",
    "SchemaError": "grammarkit.convert.errors",
    "Vocabulary": "grammarkit.vocab",
    "VocabularyError": "grammarkit.vocab",
    "TokenMatcher": "grammarkit.decode",
    "allocate_token_bitmask": "grammarkit.decode",
    "apply_token_bitmask": "grammarkit.decode",
    "sample": "grammarkit.sample",
    "check": "grammarkit.check",
    "CheckReport": "grammarkit.check",
}

__all__ = [  # noqa: RUF022 - grouped by stage, like _EXPORTS
    "Grammar",
    "GrammarError",
    "Diagnostic",
    "Severity",
    "lint",
    "SchemaError",
    "Vocabulary",
    "VocabularyError",
    "TokenMatcher",
    "allocate_token_bitmask",
    "apply_token_bitmask",
    "sample",
    "check",
    "CheckReport",
    "__version__",
]

if TYPE_CHECKING:
    from grammarkit.analysis.lint import lint as lint
    from grammarkit.diagnostics import Diagnostic as Diagnostic
    from grammarkit.diagnostics import GrammarError as GrammarError
    from grammarkit.diagnostics import Severity as Severity
    from grammarkit.grammar import Grammar as Grammar


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'grammarkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
