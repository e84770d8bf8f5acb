"""Collecting the converter's diagnostics, each pinned to a JSON pointer.

Three kinds of finding:

* :meth:`Reporter.invalid` — the schema is malformed (``GK15x`` errors); conversion fails.
* :meth:`Reporter.relax` — a keyword no grammar can enforce exactly (or not within the limits).
  The converter drops or widens it, so the grammar over-approximates; the finding is an error
  (``GK154``/``GK155``) unless the conversion is lenient, then a warning (``GK254``/``GK255``).
* :meth:`Reporter.warn` — always a warning: an unknown ``format`` left unenforced, ``required``
  not enforced in any property order, indentation beyond its depth limit.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from grammarkit.convert.errors import SchemaError
from grammarkit.diagnostics import Diagnostic, Severity

INVALID_SCHEMA = "GK150"
UNRESOLVED_REF = "GK151"
CYCLIC_REF = "GK152"
TOO_LARGE = "GK153"
NOT_ENFORCEABLE = "GK154"
TOO_COMPLEX = "GK155"
FORMAT_NOT_ENFORCED = "GK256"
ORDER_NOT_ENFORCED = "GK257"
INDENT_RELAXED = "GK258"
UNKNOWN_KEYWORD = "GK259"

_LENIENT_CODES = {NOT_ENFORCEABLE: "GK254", TOO_COMPLEX: "GK255"}


def join(pointer: str, *tokens: str | int) -> str:
    """``pointer`` extended by tokens (escaped as JSON pointer tokens)."""
    return pointer + "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


class Reporter:
    """Diagnostics of one conversion, deduplicated, in the order found."""

    def __init__(self, lenient: bool):
        self.lenient = lenient
        self._found: dict[tuple[str, str, str | None], Diagnostic] = {}

    def _add(self, code: str, severity: Severity, message: str, pointer: str,
             hint: str | None) -> None:
        key = (code, message, pointer)
        if key not in self._found:
            self._found[key] = Diagnostic(code, severity, message, None, hint, pointer=pointer)

    def invalid(self, pointer: str, message: str, hint: str | None = None,
                code: str = INVALID_SCHEMA) -> None:
        """The schema is malformed at ``pointer``."""
        self._add(code, Severity.ERROR, message, pointer, hint)

    def relax(self, pointer: str, message: str, hint: str | None = None,
              code: str = NOT_ENFORCEABLE) -> None:
        """A constraint at ``pointer`` is dropped or widened (the grammar accepts more)."""
        if self.lenient:
            self._add(_LENIENT_CODES[code], Severity.WARNING, message, pointer, hint)
        else:
            lenient_hint = "pass lenient=True to accept a grammar that allows more"
            self._add(code, Severity.ERROR, message, pointer,
                      f"{hint}, or {lenient_hint}" if hint else lenient_hint)

    def warn(self, pointer: str, code: str, message: str, hint: str | None = None) -> None:
        """A warning in every mode."""
        self._add(code, Severity.WARNING, message, pointer, hint)

    def note(self, pointer: str, code: str, message: str) -> None:
        """Information that changes nothing."""
        self._add(code, Severity.NOTE, message, pointer, None)

    def fail(self, pointer: str, message: str, code: str, hint: str | None = None) -> SchemaError:
        """A :class:`SchemaError` for a fatal problem, with everything found so far.

        The problem itself is not recorded: a caller that only probes (is this subschema
        empty?) may catch the error and go on, and the problem is then no problem."""
        problem = Diagnostic(code, Severity.ERROR, message, None, hint, pointer=pointer)
        return SchemaError([problem, *self.diagnostics()], pointer)

    def diagnostics(self) -> list[Diagnostic]:
        """Everything found, errors first."""
        found = list(self._found.values())
        return [d for d in found if d.is_error] + [d for d in found if not d.is_error]

    def finish(self) -> list[Diagnostic]:
        """The non-error diagnostics.

        Raises
        ------
        SchemaError
            If any error was found.
        """
        found = self.diagnostics()
        errors = [d for d in found if d.is_error]
        if errors:
            raise SchemaError(found, errors[0].pointer)
        return grouped(found)


CONVERT_COMMAND = "grammarkit convert json-schema"
"""The command that has the converter's options; other commands read schemas with defaults."""

LIBRARY_TO_COMMAND_LINE = (
    ("pass lenient=True", "lenient", "add --lenient",
     f"convert it with `{CONVERT_COMMAND} --lenient`"),
    ("property_order='schema'", "property_order", "--property-order schema",
     f"`{CONVERT_COMMAND} --property-order schema`"),
    ("property_order='any'", "property_order", "--property-order any",
     f"`{CONVERT_COMMAND} --property-order any`"),
    ("whitespace='flexible'", "whitespace", "--whitespace flexible",
     f"`{CONVERT_COMMAND} --whitespace flexible`"),
)
"""How the converter's hints name an option in Python, the option, how a command that has the
option names it, and how a command without it names it (as ``grammarkit convert json-schema``
with the option)."""

CONVERT_OPTIONS = frozenset(option for _, option, _, _ in LIBRARY_TO_COMMAND_LINE)
"""The converter options ``grammarkit convert json-schema`` has: all of them."""


def command_line_wording(diagnostics: list[Diagnostic], *,
                         options: Collection[str] = CONVERT_OPTIONS) -> list[Diagnostic]:
    """``diagnostics`` with hints and messages naming options as the command line does
    (``--lenient`` instead of ``lenient=True``), for a command that has the converter
    ``options`` named (``lint`` has none, ``sample`` has ``lenient``); an option the command
    lacks is named as ``grammarkit convert json-schema`` with the option."""
    worded = []
    for diagnostic in diagnostics:
        message, hint = diagnostic.message, diagnostic.hint
        for library, option, on_this_command, elsewhere in LIBRARY_TO_COMMAND_LINE:
            command_line = on_this_command if option in options else elsewhere
            message = message.replace(library, command_line)
            hint = hint.replace(library, command_line) if hint else hint
        worded.append(replace(diagnostic, message=message, hint=hint))
    return worded


MAX_LISTED_PLACES = 3
"""A grouped diagnostic names this many of its other places."""


def grouped(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Warnings and notes that repeat (same code and message at several pointers) as one
    diagnostic at the first place, saying how many there are and where the next few are."""
    places: dict[tuple[str, str], list[Diagnostic]] = {}
    result: list[Diagnostic | tuple[str, str]] = []
    for diagnostic in diagnostics:
        if diagnostic.is_error:
            result.append(diagnostic)
            continue
        key = (diagnostic.code, diagnostic.message)
        if key not in places:
            places[key] = []
            result.append(key)
        places[key].append(diagnostic)
    merged = []
    for item in result:
        if isinstance(item, Diagnostic):
            merged.append(item)
            continue
        same = places[item]
        first = same[0]
        if len(same) > 1:
            others = [d.pointer or "/" for d in same[1 : 1 + MAX_LISTED_PLACES]]
            more = ", …" if len(same) > 1 + MAX_LISTED_PLACES else ""
            first = replace(first, message=f"{first.message} (×{len(same)}: here and at "
                            f"{', '.join(others)}{more})")
        merged.append(first)
    return merged


def at_pointer(diagnostic: Diagnostic, pointer: str) -> Diagnostic:
    """``diagnostic`` pinned to ``pointer``."""
    return replace(diagnostic, pointer=pointer)
