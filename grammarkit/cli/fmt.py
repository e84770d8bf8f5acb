"""``grammarkit fmt``: the canonical layout of grammar files."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    GBNF_SUFFIX,
    GRAMMAR_SUFFIX,
    PathArgument,
    echo,
    files,
    plural,
    read,
    render,
    root_option,
    try_load,
    write_file,
)

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.ebnf.ast import Rule
    from grammarkit.grammar import Grammar
    from grammarkit.source import SourceText


@click.command("fmt")
@click.argument("paths", nargs=-1, required=True,
                type=PathArgument(exists=True, allow_dash=True))
@click.option("--check", is_flag=True,
              help="Write nothing; exit with 1 if any file would be reformatted.")
@click.option("--diff", is_flag=True,
              help="Write nothing; print a unified diff of the changes instead (`patch` "
              "applies it).")
@root_option
def command(paths: tuple[str, ...], check: bool, diff: bool, root: str) -> None:
    """Rewrite grammars (*.ebnf) in canonical layout, keeping their comments.

    Directories are searched recursively (regular files only; others are listed as skipped);
    `-` formats standard input to standard output. Files with errors are reported and left
    untouched; a file is replaced only once its new text is completely written. llama.cpp
    grammars (*.gbnf) are checked (they must convert to XGrammar EBNF) but never rewritten:
    `grammarkit convert gbnf` writes their EBNF form.
    """
    skipped: list[Diagnostic] = []
    changed = unchanged = failed = 0
    for path in files(paths, (GRAMMAR_SUFFIX, GBNF_SUFFIX), skipped):
        source = read(path)
        formatted, problem = _format(source, root, verify=not check)
        if formatted is None:
            failed += 1
            echo(problem, err=True)
            continue
        if path == "-" and not (check or diff):
            echo(formatted, nl=False)
        if formatted == source.text:
            unchanged += 1
            continue
        changed += 1
        if path == "-" and not (check or diff):
            continue
        if diff:
            echo(unified_diff(source.text, formatted, source.path), nl=False)
        elif check:
            echo(f"would reformat {source.path}", err=True)
        else:
            write_file(path, formatted.encode("utf-8", "surrogateescape"))
            echo(f"reformatted {source.path}", err=True)
    for note in skipped:
        echo(note.render(), err=True)
    echo(_fmt_summary(changed, unchanged, failed, written=not (check or diff)), err=True)
    if failed or (changed and (check or diff)):
        sys.exit(EXIT_ERRORS)


def unified_diff(old: str, new: str, path: str) -> str:
    """A unified diff that ``patch`` accepts, with ``\\ No newline at end of file`` markers."""
    import difflib

    lines = difflib.unified_diff(_lines(old), _lines(new),
                                 f"{path}\t(original)", f"{path}\t(formatted)")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\\n`` only, as ``patch`` reads it."""
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def _format(source: SourceText, root: str, verify: bool) -> tuple[str | None, str]:
    """The canonical text of ``source``, or ``None`` and why it can't be formatted.

    ``verify``: parse the new text back and compare the rules, before it may be written or
    shown as a patch (``--check`` writes nothing and skips this second parse).
    """
    from grammarkit.diagnostics import GrammarError, error
    from grammarkit.ebnf.ast import Span
    from grammarkit.ebnf.printer import print_grammar

    if source.path.endswith(GBNF_SUFFIX):
        grammar = try_load(source, root)
        if isinstance(grammar, GrammarError):
            return None, render(grammar.diagnostics)
        return source.text, ""
    nul = source.text.find("\0")
    if nul >= 0:
        return None, error(
            "GK102", "unexpected NUL character: xgrammar ignores the rest of the grammar",
            Span(nul, nul + 1), "remove it; fmt leaves the file as it is",
        ).with_source(source).render()
    grammar = try_load(source, root)
    if isinstance(grammar, GrammarError):
        return None, render(grammar.diagnostics)
    formatted = print_grammar(grammar.ast, source.text)
    if verify and formatted != source.text and not _same_rules(grammar, formatted, root):
        return None, (f"error: formatting {source.path} would change its rules, so it is left "
                      "as it is; this is a bug in grammarkit fmt, please report it")
    return formatted, ""


def _same_rules(grammar: Grammar, formatted: str, root: str) -> bool:
    """Whether ``formatted`` parses to ``grammar``'s rules (up to canonical grouping)."""
    from grammarkit.ebnf.parser import parse
    from grammarkit.ebnf.printer import canonical_expr

    def canonical(rules: Iterable[Rule]) -> list[tuple[Any, ...]]:
        return [(rule.name, rule.attributes, canonical_expr(rule.body),
                 None if rule.lookahead is None else canonical_expr(rule.lookahead))
                for rule in rules]

    result = parse(formatted, root)
    return result.ok and canonical(result.ast.rules) == canonical(grammar.ast.rules)


def _fmt_summary(changed: int, unchanged: int, failed: int, written: bool) -> str:
    verb = "reformatted" if written else "would be reformatted"
    parts = [f"{plural(changed, 'file')} {verb}"]
    if unchanged:
        parts.append(f"{plural(unchanged, 'file')} already formatted")
    if failed:
        parts.append(f"{plural(failed, 'file')} with errors left unchanged")
    return ", ".join(parts) + "."
