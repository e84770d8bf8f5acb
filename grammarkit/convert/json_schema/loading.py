"""Reading a schema given as a dict, JSON text, a path or a pydantic model class.

Whatever the input, the result is plain JSON data with every number a :class:`~decimal.Decimal`
(bounds stay exact: ``0.1`` is one tenth, ``1e400`` is not infinity), checked to be finite and
no deeper than :data:`MAX_DEPTH`, so later stages can recurse safely.
"""

from __future__ import annotations

import decimal
import json
import math
import os
import re
from dataclasses import replace
from decimal import Decimal
from itertools import accumulate
from pathlib import Path
from typing import Any, NamedTuple

from grammarkit.convert.errors import SchemaError
from grammarkit.diagnostics import Diagnostic, error
from grammarkit.ebnf.ast import Span
from grammarkit.source import SourceText

MAX_DEPTH = 256
"""The deepest nesting of arrays and objects accepted in a schema."""

MAX_VALUES = 1_000_000
"""The most JSON values (of any kind) a schema may contain."""

INVALID = "GK150"
TOO_LARGE = "GK153"


class Loaded(NamedTuple):
    """A loaded schema: the JSON data, and the text it was parsed from (if any)."""

    value: Any
    source: SourceText | None


def load_schema(schema: Any) -> Loaded:
    """The schema as JSON data with :class:`~decimal.Decimal` numbers.

    Parameters
    ----------
    schema
        A dict (or bool), JSON text (``str`` or ``bytes``), a path to a JSON file, or a
        pydantic model class.

    Raises
    ------
    SchemaError
        If the input is not JSON, is nested too deeply, or holds non-JSON values.
    """
    if isinstance(schema, (bytes, bytearray)):
        return _parse(bytes(schema).decode("utf-8", "replace"), "<schema>")
    if isinstance(schema, os.PathLike):
        return _read(Path(schema))
    if isinstance(schema, str):
        stripped = schema.lstrip()
        if stripped[:1] in ("{", "[", '"') or stripped[:4] in ("true", "fals", "null") or (
            stripped[:1].isdigit() or stripped[:1] == "-"
        ):
            return _parse(schema, "<schema>")
        if len(schema) < 4096 and "\n" not in schema and Path(schema).is_file():
            return _read(Path(schema))
        return _parse(schema, "<schema>")
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return Loaded(normalize(schema.model_json_schema()), None)
    if isinstance(schema, type) and hasattr(schema, "schema"):
        return Loaded(normalize(schema.schema()), None)
    return Loaded(normalize(schema), None)


def _read(path: Path) -> Loaded:
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError([error(INVALID, f"can't read the schema file {path}: {exc}", None)],
                          "") from None
    return _parse(text, str(path))


def _parse(text: str, path: str) -> Loaded:
    source = SourceText(text, path)
    if _nesting(text) > MAX_DEPTH:
        deepest, offset = _max_depth(text)
        raise SchemaError([
            error(TOO_LARGE, f"the schema nests arrays and objects {deepest} levels deep; the "
                  f"limit is {MAX_DEPTH}", Span(offset, offset + 1),
                  "flatten the schema with $defs and $ref").with_source(source)
        ], "")
    try:
        value = json.loads(text, parse_float=_number, parse_int=_number,
                           parse_constant=_reject_constant)
    except _NumberOutOfRange as exc:
        at = text.find(exc.text)
        raise SchemaError([
            error(TOO_LARGE, f"the number {_shorten(exc.text)} has an exponent beyond "
                  f"±{MAX_EXPONENT}", None if at < 0 else Span(at, at + len(exc.text)),
                  "no JSON value can reach such a bound: use a smaller number"
                  ).with_source(source)
        ], "") from None
    except json.JSONDecodeError as exc:
        raise SchemaError([
            error(INVALID, f"the schema is not valid JSON: {exc.msg}", Span(exc.pos, exc.pos + 1),
                  "check the JSON syntax at this position").with_source(source)
        ], "") from None
    except ValueError as exc:
        raise SchemaError([error(INVALID, f"the schema is not valid JSON: {exc}", None)],
                          "") from None
    _check_size(value)
    return Loaded(value, source)


MAX_EXPONENT = decimal.MAX_EMAX
"""The largest decimal exponent a schema number may have (``1e999999999999999999`` is the
limit of :class:`~decimal.Decimal`)."""


class _NumberOutOfRange(ValueError):
    """A JSON number whose exponent :class:`~decimal.Decimal` can't hold."""

    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


def _number(text: str) -> Decimal:
    try:
        return Decimal(text)
    except decimal.InvalidOperation:
        raise _NumberOutOfRange(text) from None


def _shorten(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}…{text[-10:]}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
"""JSON strings (an unterminated one runs to the end of the text)."""

_BRACKETS = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _nesting(text: str) -> int:
    """The deepest bracket nesting in JSON text, strings skipped: regular expressions keep the
    brackets outside strings and ``accumulate`` counts them (no Python step per character)."""
    brackets = _BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_DEPTH_STEP.__getitem__, brackets), initial=0))


def _max_depth(text: str) -> tuple[int, int]:
    """The deepest bracket nesting in JSON text (strings skipped) and where it is first hit,
    character by character, stopping past :data:`MAX_DEPTH`."""
    depth = deepest = 0
    where = 0
    in_string = False
    index = 0
    length = len(text)
    while index < length:
        char = text[index]
        if in_string:
            if char == "\\":
                index += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, index
                if deepest > MAX_DEPTH:
                    break
        elif char in "]}":
            depth -= 1
        index += 1
    return deepest, where


def normalize(value: Any) -> Any:
    """A copy of in-memory JSON data with numbers as :class:`~decimal.Decimal` (floats by their
    shortest repr), checked like parsed text.

    Raises
    ------
    SchemaError
        For values that are not JSON (sets, NaN, non-string keys...), cycles and excess depth.
    """
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int, str]] = [(value, root, 0, 0, "")]
    count = 0
    while stack:
        item, parent, key, depth, pointer = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise _too_large(f"the schema has more than {MAX_VALUES} values", pointer)
        if depth > MAX_DEPTH:
            raise _too_large(f"the schema nests arrays and objects more than {MAX_DEPTH} levels "
                             "deep", pointer)
        if isinstance(item, dict):
            copy: Any = dict.fromkeys(item)
            for name, member in item.items():
                if not isinstance(name, str):
                    raise _invalid(f"object key {name!r} is not a string", pointer)
                stack.append((member, copy, name, depth + 1, f"{pointer}/{escape(name)}"))
        elif isinstance(item, (list, tuple)):
            copy = [None] * len(item)
            for index, member in enumerate(item):
                stack.append((member, copy, index, depth + 1, f"{pointer}/{index}"))
        elif item is None or isinstance(item, (bool, str, Decimal)):
            copy = item
            if isinstance(item, Decimal) and not item.is_finite():
                raise _invalid(f"{item} is not a JSON number", pointer)
        elif isinstance(item, int):
            copy = Decimal(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise _invalid(f"{item} is not a JSON number", pointer)
            copy = Decimal(repr(item))
        else:
            raise _invalid(f"a {type(item).__name__} is not a JSON value", pointer)
        parent[key] = copy
    return root[0]


def _check_size(value: Any) -> None:
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise _too_large(f"the schema has more than {MAX_VALUES} values", "")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def escape(token: str) -> str:
    """A JSON pointer token: ``~`` as ``~0``, ``/`` as ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def _invalid(message: str, pointer: str) -> SchemaError:
    return SchemaError([_at(error(INVALID, message, None), pointer)], pointer)


def _too_large(message: str, pointer: str) -> SchemaError:
    return SchemaError([_at(error(TOO_LARGE, message, None,
                                  "split the schema with $defs and $ref"), pointer)], pointer)


def _at(diagnostic: Diagnostic, pointer: str) -> Diagnostic:
    return replace(diagnostic, pointer=pointer)
