"""What the ``grammarkit`` commands share: options, reading inputs, printing diagnostics and JSON."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

import click

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic, GrammarError
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText

EXIT_ERRORS = 1
"""The input has errors (or, for ``fmt --check``, would change)."""

GRAMMAR_SUFFIX = ".ebnf"
GBNF_SUFFIX = ".gbnf"
SCHEMA_SUFFIX = ".schema.json"
JSON_SUFFIX = ".json"

_SURROGATE = re.compile("[\ud800-\udfff]")


class PathArgument(click.Path):
    """``click.Path`` that refuses a name with a NUL byte as a usage error (the system calls
    behind ``exists=True`` raise ``ValueError`` on one, which click lets through)."""

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "\x00" in value:
            self.fail(f"{value!r} contains a NUL byte: no file has that name", param, ctx)
        return super().convert(value, param, ctx)


format_option = click.option(
    "--format", "output_format", type=click.Choice(["text", "json"]), default="text",
    show_default=True, help="Output as human-readable text or as JSON.",
)
root_option = click.option(
    "--root", default="root", show_default=True, metavar="NAME",
    help="The rule derivations start from.",
)
to_option = click.option(
    "--to", "target", type=click.Choice(["ebnf", "gbnf", "lark"]), default="ebnf",
    show_default=True, help="Grammar notation to write: XGrammar EBNF, llama.cpp GBNF or Lark.",
)
output_option = click.option(
    "-o", "--output", type=PathArgument(dir_okay=False, allow_dash=True), default="-",
    help="Write the grammar here instead of standard output.",
)


MAX_INPUT_BYTES = 256 * 1024 * 1024
"""Inputs larger than this (256 MiB) are refused with GK171 before they fill memory."""


class CommandFailed(click.ClickException):
    """The command's outcome is these diagnostics (on stderr, or JSON with ``--format json``).

    Parameters
    ----------
    diagnostics
        What went wrong, each with its code.
    exit_code
        1 when the input has errors (the default), 2 for usage errors and unreadable inputs.
    """

    def __init__(self, diagnostics: list[Diagnostic], exit_code: int = EXIT_ERRORS):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.exit_code = exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: Any = None) -> None:
        echo(render(self.diagnostics), err=True)


class InputError(CommandFailed):
    """An input that cannot be read at all (GK171); exits with the usage-error code 2."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__([cli_diagnostic("GK171", message, path)], exit_code=2)

    show = click.ClickException.show  # click's usual `Error: cannot read ...`


def cli_diagnostic(code: str, message: str, path: str | None = None, hint: str | None = None,
                   severity: str = "error") -> Diagnostic:
    """A diagnostic about an input as a whole (no span), named by its path."""
    from grammarkit.diagnostics import Diagnostic, Severity
    from grammarkit.source import SourceText

    source = None if path is None else SourceText("", path)
    return Diagnostic(code, Severity(severity), message, None, hint, source)


class JsonCommand(click.Command):
    """A command with ``--format json`` whose usage errors are JSON on stdout too.

    Errors click finds while reading the arguments (a missing file, a bad option value) happen
    before the command body and its :func:`outcome` run; with ``--format json`` among the
    arguments they are printed in the command's failure shape (see :func:`failure_report`):
    ``{**json_fields, "diagnostics": [GK174]}``, that report alone in a list when
    ``json_in_list`` (a command whose report is a list of such objects, like ``check``), or the
    bare list of diagnostics when ``json_fields`` is ``None`` (like ``lint``).
    """

    def __init__(self, *args: Any, json_fields: dict[str, Any] | None = None,
                 json_in_list: bool = False, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.json_fields = json_fields
        self.json_in_list = json_in_list

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: Any) -> click.Context:
        wants_json = _asks_for_json(args)
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            if not wants_json:
                raise
            echo(dump_json(failure_report([cli_diagnostic("GK174", exc.format_message())],
                                          self.json_fields, self.json_in_list)))
            sys.exit(exc.exit_code)


def failure_report(diagnostics: list[Diagnostic], fields: dict[str, Any] | None,
                   in_list: bool = False) -> Any:
    """A command's JSON report when it fails with ``diagnostics`` before answering.

    ``fields`` are the command's usual keys with their "no answer" values, so that a JSON
    reader always finds the same keys; ``None`` for a command whose report is the bare list
    of diagnostics. ``in_list``: the report is one item of a list, as in ``check``'s output.
    """
    report = [d.to_json() for d in diagnostics]
    if fields is None:
        return report
    return [{**fields, "diagnostics": report}] if in_list else {**fields, "diagnostics": report}


def _asks_for_json(args: list[str]) -> bool:
    """Whether ``--format json`` is among the options in ``args`` (before any ``--``)."""
    for i, arg in enumerate(args):
        if arg == "--":
            return False
        if arg == "--format=json" or (arg == "--format" and args[i + 1:i + 2] == ["json"]):
            return True
    return False


@contextmanager
def outcome(output_format: str, *, as_list: bool = False, in_list: bool = False,
            **fields: Any) -> Iterator[None]:
    """Run a command body so that with ``--format json`` every failure is JSON on stdout too.

    A :class:`CommandFailed` (grammar errors, unreadable inputs) or a usage error raised inside
    becomes ``{**fields, "diagnostics": [...]}`` on stdout, with the same exit code as in text
    mode. ``fields`` are the command's usual keys with their "no answer" values, e.g.
    ``accepted=None``, so a JSON reader always finds the same keys. With ``as_list`` (a
    command whose JSON report is a list of diagnostics, like ``lint``) it is that list; with
    ``in_list`` (a list of reports, like ``check``) the report alone in a list.
    """
    try:
        yield
    except (click.UsageError, CommandFailed) as exc:
        if output_format != "json":
            raise
        diagnostics = (exc.diagnostics if isinstance(exc, CommandFailed)
                       else [cli_diagnostic("GK174", exc.format_message())])
        echo(dump_json(failure_report(diagnostics, None if as_list else fields, in_list)))
        sys.exit(exc.exit_code)


def files(paths: Iterable[str], suffixes: tuple[str, ...] = (GRAMMAR_SUFFIX, GBNF_SUFFIX,
                                                            SCHEMA_SUFFIX),
          skipped: list[Diagnostic] | None = None) -> Iterator[str]:
    """The files named in ``paths``, each directory replaced by its matching files (sorted).

    Only regular files are taken from directories (a FIFO or device named ``*.ebnf`` would
    block or never end); each one passed over is added to ``skipped`` as a GK172 note.
    """
    for path in paths:
        if path == "-" or not os.path.isdir(path):
            yield path
            continue
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
            for name in sorted(names):
                if not name.endswith(suffixes):
                    continue
                file = os.path.join(folder, name)
                kind = _file_kind(file)
                if kind is None:
                    yield file
                elif skipped is not None:
                    skipped.append(cli_diagnostic(
                        "GK172", f"skipped: not a regular file ({kind})", file,
                        "name it on the command line to read it anyway", severity="note"))


def _file_kind(path: str) -> str | None:
    """``None`` for a regular file, else what it is (``"a FIFO"``, ``"unreadable: ..."``)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def read(path: str) -> SourceText:
    """The grammar in ``path`` (``-``: standard input); :class:`InputError` if unreadable."""
    from grammarkit.source import SourceText, decode_source

    name = "<stdin>" if path == "-" else path
    return SourceText(decode_source(read_bytes(path)), name)


def read_bytes(path: str) -> bytes:
    """The bytes of ``path`` (``-``: standard input), at most :data:`MAX_INPUT_BYTES`.

    Regular files and pipes are read (a FIFO named on the command line is read as asked);
    devices and sockets are refused, as is anything larger than the limit.
    """
    if path == "-":
        return _bounded(sys.stdin.buffer, "<stdin>")
    kind = _file_kind(path)
    if kind is not None and kind != "a FIFO":
        raise InputError(f"cannot read {path}: not a regular file ({kind})", path)
    try:
        with open(path, "rb") as stream:
            return _bounded(stream, path)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}", path) from None


def _bounded(stream: BinaryIO, name: str) -> bytes:
    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(f"cannot read {name}: larger than {MAX_INPUT_BYTES >> 20} MiB", name)
    return data


def try_load(source: SourceText, root: str) -> Grammar | GrammarError:
    """The grammar in ``source`` (GBNF for ``*.gbnf`` files), or the error it raises.

    An EBNF text that fails but reads as llama.cpp GBNF gets a GK173 note saying so.
    """
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    if source.path.endswith(GBNF_SUFFIX):
        return load_gbnf(source, root)
    try:
        return Grammar.from_ebnf(source.text, root, path=source.path)
    except GrammarError as exc:
        note = gbnf_hint(source, root)
        return exc if note is None else GrammarError([*exc.diagnostics, note])


def gbnf_hint(source: SourceText, root: str) -> Diagnostic | None:
    """For an EBNF text with errors: a GK173 note if it reads as llama.cpp GBNF instead."""
    from grammarkit.diagnostics import GrammarError

    if isinstance(load_gbnf(source, root), GrammarError):
        return None
    argument = "-" if source.path == "<stdin>" else source.path
    return cli_diagnostic(
        "GK173", "this file reads as llama.cpp GBNF, not as XGrammar EBNF", source.path,
        f"convert it with `grammarkit convert gbnf {argument} -o OUT.ebnf`, or name it "
        "*.gbnf so that lint and fmt read it as GBNF", severity="note")


def load_gbnf(source: SourceText, root: str) -> Grammar | GrammarError:
    """The llama.cpp GBNF grammar in ``source``, or its error located in the GBNF text."""
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    try:
        return Grammar.from_gbnf(source.text, root, path=source.path)
    except GrammarError as exc:
        return GrammarError([d.with_source(source) if d.source is None or
                             d.source.text == source.text else d for d in exc.diagnostics])


def load_grammar(path: str, root: str) -> Grammar:
    """The grammar in ``path``; :class:`CommandFailed` (exit 1) with its errors."""
    from grammarkit.diagnostics import GrammarError

    grammar = try_load(read(path), root)
    if isinstance(grammar, GrammarError):
        raise CommandFailed(grammar.diagnostics)
    return grammar


def checked(call: Any, source: SourceText | None = None) -> Any:
    """``call()``; a :class:`GrammarError` (or ``SchemaError``) becomes :class:`CommandFailed`."""
    from grammarkit.diagnostics import GrammarError

    try:
        return call()
    except GrammarError as exc:
        if source is None:
            raise CommandFailed(exc.diagnostics) from None
        raise CommandFailed(
            [d if d.source else d.with_source(source) for d in exc.diagnostics]) from None


def fail(diagnostics: Iterable[Diagnostic]) -> NoReturn:
    """Stop the command with these diagnostics (exit 1)."""
    raise CommandFailed(list(diagnostics))


def render(diagnostics: Iterable[Diagnostic]) -> str:
    from grammarkit.diagnostics import render_all

    return render_all(diagnostics)


def dump_json(data: Any) -> str:
    """``data`` as indented JSON; lone surrogates (undecodable input bytes) become escapes."""
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """Print ``text``; undecodable input bytes (kept as surrogates) are written back as is."""
    click.echo(text.encode("utf-8", "surrogateescape" if _encodable(text) else "backslashreplace"),
               err=err, nl=nl)


def _encodable(text: str) -> bool:
    return all("\udc80" <= c <= "\udcff" for c in _SURROGATE.findall(text))


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def write_file(path: str, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step: never a truncated or half-written file.

    The bytes go to a temporary file in the same folder, which is renamed over the original
    (through a symbolic link, the file it points to), keeping the original's permissions (a new
    file gets the usual ones: 0666 less the umask).
    A FIFO or a device (``-o /dev/null``) is written as a stream. A failed write (disk full,
    file-size limit, permissions) leaves the original as it was and raises
    :class:`InputError` (exit 2).
    """
    import tempfile

    target = os.path.realpath(path)
    kind = _file_kind(target) if os.path.exists(target) else None
    if kind in ("a FIFO", "a device"):  # a stream (`-o /dev/null`): nothing there to lose
        try:
            with open(target, "wb") as stream:
                stream.write(data)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror or exc}", path) from None
        return
    if kind is not None:
        raise InputError(f"cannot write {path}: not a regular file ({kind})", path)
    folder, name = os.path.split(target)
    temporary = None
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:  # a new file: what open() would give it, not mkstemp's 0600
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as exc:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        raise InputError(f"cannot write {path}: {exc.strerror or exc}", path) from None
