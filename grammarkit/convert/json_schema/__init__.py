"""JSON Schema to grammar, exactly where a grammar can be exact, and never silently otherwise.

:func:`convert_schema` loads the schema (:mod:`.loading`), indexes its subschemas and ``$ref``
targets (:mod:`.references`), reads each subschema into a per-type normalized node
(:mod:`.reader`, :mod:`.model`, :mod:`.algebra`) and emits one rule per distinct subschema
(:mod:`.emitter` with :mod:`.strings`, :mod:`.number_sets`, :mod:`.arrays`, :mod:`.objects`).

Soundness contract: without warnings the grammar accepts a JSON text exactly when its value is
valid (numbers in plain notation wherever the schema constrains them; properties in the chosen
order); with warnings it accepts every valid text. See ``docs/json-schema.md``.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from grammarkit._gc import paused_gc
from grammarkit._recursion import deep_recursion
from grammarkit.convert.errors import SchemaError
from grammarkit.convert.json_schema.emitter import Emitter
from grammarkit.convert.json_schema.layout import Layout
from grammarkit.convert.json_schema.loading import load_schema
from grammarkit.convert.json_schema.locations import locate, pointer_spans
from grammarkit.convert.json_schema.model import Ref
from grammarkit.convert.json_schema.reader import Reader
from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import (
    UNKNOWN_KEYWORD,
    Reporter,
    command_line_wording,
)
from grammarkit.diagnostics import Diagnostic
from grammarkit.ebnf import ast
from grammarkit.source import SourceText

PROPERTY_ORDERS = ("schema", "any")


def convert_schema(
    schema: Any,
    *,
    whitespace: str = "flexible",
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    strict: bool = False,
    property_order: str = "schema",
    lenient: bool = False,
) -> tuple[ast.GrammarAST, list[Diagnostic]]:
    """Convert a JSON Schema to a grammar whose rule ``root`` matches the valid JSON texts.

    Parameters
    ----------
    schema
        A dict or bool, JSON text, a path to a JSON file, or a pydantic model class.
    whitespace
        ``"flexible"`` (any JSON whitespace between tokens), ``"compact"`` or ``"indented"``.
    indent
        Spaces per level in ``"indented"`` mode (default 2).
    separators
        ``(item, key)`` separators for ``"compact"``/``"indented"``, as in ``json.dumps``.
    strict
        Forbid properties and items the schema does not declare (xgrammar's ``strict_mode``),
        unless ``additionalProperties``/``items`` say otherwise.
    property_order
        ``"schema"``: declared properties in schema order, then the others; ``"any"``: any
        order (``required`` enforced while that keeps the grammar small, else a warning).
    lenient
        Relax keywords no grammar can enforce exactly (with a warning each) instead of failing.

    Returns
    -------
    tuple
        The grammar and its warnings (one per relaxed keyword) and notes.

    Raises
    ------
    SchemaError
        For an invalid schema, or, unless ``lenient``, a keyword that can't be enforced exactly;
        every problem found is in ``diagnostics``, each with its JSON pointer.
    ValueError
        For invalid options.
    """
    layout = Layout.create(whitespace, indent, separators)
    if property_order not in PROPERTY_ORDERS:
        raise ValueError(f"property_order must be one of {PROPERTY_ORDERS}, not "
                         f"{property_order!r}")
    root, source = load_schema(schema)
    reporter = Reporter(lenient)
    try:
        if not isinstance(root, (dict, bool)):
            raise reporter.fail("", "a schema must be an object or a boolean", "GK150")
        document = Document(root)
        for pointer in document.unknown_metaschemas:
            reporter.note(pointer, UNKNOWN_KEYWORD, "unknown metaschema: read as draft 2020-12 "
                          "with every vocabulary")
        reader = Reader(document, reporter, strict)
        emitter = Emitter(reader, reporter, layout, property_order)
        # millions of short-lived, acyclic nodes: collections only cost; nodes and patterns
        # as deep as the loader and the regex parser allow take several frames per level
        with paused_gc(), deep_recursion():
            grammar = emitter.emit((Ref(""),))
        diagnostics = reporter.finish()
    except SchemaError as exc:
        raise SchemaError(_located(exc.diagnostics, source), exc.pointer) from None
    return grammar, _located(diagnostics, source)


def lint_schema_file(path: str | os.PathLike[str], *, lenient: bool = False) -> list[Diagnostic]:
    """What ``grammarkit convert json-schema`` reports for a schema file (with the same default
    options, so an error here is an error there), each located in the file and worded for the
    command line: what ``grammarkit lint`` reports for ``*.schema.json`` (its hints name
    ``grammarkit convert json-schema`` with the option, since ``lint`` has none of them)."""
    try:
        diagnostics = convert_schema(Path(path), lenient=lenient)[1]
    except SchemaError as exc:
        diagnostics = exc.diagnostics
    return command_line_wording(diagnostics, options=())


def _located(diagnostics: list[Diagnostic], source: SourceText | None) -> list[Diagnostic]:
    """``diagnostics`` pinned to their keywords in ``source`` (when the schema was text)."""
    if source is None or not diagnostics:
        return diagnostics
    spans = pointer_spans(source.text, (d.pointer or "" for d in diagnostics
                                        if d.source is None and not d.span))
    located = [d if d.source is not None else replace(
        d, source=source, span=d.span or locate(spans, d.pointer or "")) for d in diagnostics]
    return sorted(located, key=lambda d: (not d.is_error, d.span.start if d.span else 0))


__all__ = ["SchemaError", "command_line_wording", "convert_schema", "lint_schema_file"]
