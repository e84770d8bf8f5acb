"""``grammarkit diagram``: railroad diagrams of a grammar's rules."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    GBNF_SUFFIX,
    PathArgument,
    echo,
    gbnf_hint,
    load_gbnf,
    read,
    render,
    root_option,
    write_file,
)

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.ebnf import ast
    from grammarkit.source import SourceText


@click.command("diagram")
@click.argument("grammar_path", metavar="GRAMMAR", type=PathArgument(exists=True, allow_dash=True))
@click.option("-o", "--output", type=PathArgument(dir_okay=False), default=None,
              help="Write here: OUT.html (every rule, linked) or OUT.svg (one rule). "
                   "Default: HTML on standard output, or SVG with --rule.")
@click.option("--rule", default=None, metavar="NAME",
              help="Draw only this rule (as SVG unless the output ends with .html).")
@root_option
def command(grammar_path: str, output: str | None, rule: str | None, root: str) -> None:
    """Railroad diagrams of GRAMMAR (*.ebnf, or llama.cpp *.gbnf): one SVG per rule, in a
    self-contained HTML page.

    Each rule reference links to its rule's diagram. A grammar with errors is drawn as far as
    it parses; its errors are listed on the page and the exit code is 1.
    """
    from grammarkit.authoring.railroad import grammar_html, rule_svg

    source = read(grammar_path)
    errors, rules = _rules(source, root)
    if rule is not None:
        rules = [r for r in rules if r.name == rule]
        if not rules:
            raise click.BadParameter(f"no rule `{rule}` in {source.path}", param_hint="'--rule'")
    as_svg = rule is not None and not (output or "").endswith(".html")
    if output is not None and output.endswith(".svg") and rule is None:
        raise click.UsageError("an SVG holds one rule: name it with --rule (or write .html)")
    text = (rule_svg(rules[0], standalone=True) if as_svg
            else grammar_html(rules, title=Path(source.path).name, errors=errors))
    if output is None:
        echo(text, nl=False)
    else:
        write_file(output, text.encode("utf-8"))
        echo(f"wrote {output}", err=True)
    if errors:
        echo(render(errors), err=True)
        sys.exit(EXIT_ERRORS)


def _rules(source: SourceText, root: str) -> tuple[list[Diagnostic], list[ast.Rule]]:
    """The errors and the rules of ``source``: a ``*.gbnf`` file is converted first; an EBNF
    text keeps the rules that parse despite errors (with a GK173 note if it reads as GBNF)."""
    from grammarkit.diagnostics import GrammarError
    from grammarkit.ebnf.parser import parse

    if source.path.endswith(GBNF_SUFFIX):
        loaded = load_gbnf(source, root)
        if isinstance(loaded, GrammarError):
            return loaded.diagnostics, []
        return [], list(loaded.ast.rules)
    result = parse(source.text, root)
    errors = [d.with_source(source) for d in result.diagnostics if d.is_error]
    note = gbnf_hint(source, root) if errors else None
    return errors + ([note] if note is not None else []), list(result.ast.rules)
