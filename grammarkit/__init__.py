"""grammarkit: author, validate and run grammars for LLM constrained decoding.

Public names are loaded lazily so that ``import grammarkit`` stays fast for pre-commit hooks.
"""

from __future__ import annotations

import importlib
import sys
import types
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
    "BatchTokenMatcher": "grammarkit.decode",
    "allocate_token_bitmask": "grammarkit.decode",
    "apply_token_bitmask": "grammarkit.decode",
    "sample": "grammarkit.sample",
    "check": "grammarkit.check",
    "CheckReport": "grammarkit.check",
    "generate": "grammarkit.generate",
    "stream": "grammarkit.generate",
    "SamplingParams": "grammarkit.generate",
    "Completion": "grammarkit.generate",
    "JsonSchema": "grammarkit.generate",
    "Regex": "grammarkit.generate",
    "RandomLM": "grammarkit.generate",
    "TransformersLM": "grammarkit.generate",
    "GenerationError": "grammarkit.generate",
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
    "BatchTokenMatcher",
    "allocate_token_bitmask",
    "apply_token_bitmask",
    "sample",
    "check",
    "CheckReport",
    "generate",
    "stream",
    "SamplingParams",
    "Completion",
    "JsonSchema",
    "Regex",
    "RandomLM",
    "TransformersLM",
    "GenerationError",
    "__version__",
]

if TYPE_CHECKING:
    from grammarkit.analysis.lint import lint as lint
    from grammarkit.diagnostics import Diagnostic as Diagnostic
    from grammarkit.diagnostics import GrammarError as GrammarError
    from grammarkit.diagnostics import Severity as Severity
    from grammarkit.grammar import Grammar as Grammar


class _PublicModule(types.ModuleType):
    """Keeps a public function bound when its same-named submodule is imported.

    ``import grammarkit.sample`` would otherwise rebind ``grammarkit.sample`` (the function) to
    the module; likewise ``generate``.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == value.__name__:
            value = getattr(value, name, value)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _PublicModule


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'grammarkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
