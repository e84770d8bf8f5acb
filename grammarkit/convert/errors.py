"""Errors raised by the converters."""

from __future__ import annotations

from grammarkit.diagnostics import Diagnostic, GrammarError


class SchemaError(GrammarError):
    """A JSON Schema could not be converted.

    A :class:`~grammarkit.diagnostics.GrammarError` (hence a ``ValueError``) whose diagnostics
    carry JSON pointers to the offending keywords.

    Attributes
    ----------
    diagnostics
        Every problem found, errors first.
    pointer
        The JSON pointer of the first error (``""`` is the schema root), if known.
    """

    def __init__(self, diagnostics: list[Diagnostic], pointer: str | None = None):
        super().__init__(diagnostics)
        if pointer is None:
            errors = [d for d in diagnostics if d.is_error] or diagnostics
            pointer = errors[0].pointer if errors else None
        self.pointer = pointer
