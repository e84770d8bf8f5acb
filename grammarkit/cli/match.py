"""``grammarkit match``: whether a grammar accepts a text, and where it fails."""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from grammarkit.cli.common import (
    EXIT_ERRORS,
    JsonCommand,
    PathArgument,
    checked,
    cli_diagnostic,
    dump_json,
    echo,
    fail,
    format_option,
    load_grammar,
    outcome,
    read_bytes,
    root_option,
)

if TYPE_CHECKING:
    from grammarkit.automata.earley import Explanation
    from grammarkit.diagnostics import Diagnostic
    from grammarkit.grammar import Grammar

TIMEOUT_HINT = ("pass a larger --timeout (0: no limit), or make the grammar less ambiguous "
                "(rules like `x ::= x x | ...` take time cubic in the input length)")


EMPTY: dict[str, Any] = {"accepted": None, "ignored_final_line_break": False}
"""The JSON report's keys when the grammar or the text could not be used."""


class _MatchCommand(JsonCommand):
    """``match``, whose error for a TEXT that starts with ``-`` says how to pass such a text."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        given = list(args)  # the parser consumes ``args``
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if not exc.option_name.startswith("--") or " " in exc.option_name:
                text = next((arg for arg in given if arg.startswith(exc.option_name)),
                            exc.option_name)
                raise click.UsageError(
                    f"{exc.message} To match a text that starts with `-`, put `--` before it "
                    f"(grammarkit match GRAMMAR -- {shlex.quote(text)}) or pass it with --text.",
                    exc.ctx) from None
            raise


@click.command("match", cls=_MatchCommand, json_fields=EMPTY)
@click.argument("grammar_path", metavar="GRAMMAR",
                type=PathArgument(exists=True, dir_okay=False, allow_dash=True))
@click.argument("text", required=False)
@click.option("--text", "text_option", metavar="TEXT",
              help="The text to match, when it starts with `-` (same as TEXT after `--`).")
@click.option("--file", "text_file", type=PathArgument(exists=True, dir_okay=False, allow_dash=True),
              help="Match the contents of this file (`-`: standard input) instead of TEXT.")
@click.option("--timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              metavar="SECONDS", help="Give up on matching after this long (GK122); 0: no "
              "limit.")
@root_option
@format_option
def command(grammar_path: str, text: str | None, text_option: str | None,
            text_file: str | None, timeout: float, root: str, output_format: str) -> None:
    """Tell whether the grammar in GRAMMAR accepts TEXT exactly, and if not, why.

    \b
    The text comes from exactly one of:
      TEXT          taken exactly; put `--` before a text that starts with `-`:
                    grammarkit match list.ebnf -- '- milk'
      --text TEXT   the same, for any text: --text '- milk'
      --file PATH   a file's bytes (`-`: standard input). Editors end files with a line
                    break, so when the grammar rejects the file, one final line break
                    (\\n or \\r\\n) is dropped and the rest is matched again.
    GRAMMAR `-` reads the grammar from standard input. Token(...) and ExcludeToken(...)
    match vocabulary tokens, never text: test such grammars with the native decoder
    (grammarkit.TokenMatcher and the model's vocabulary).

    Exit 0 if accepted, 1 if rejected, if the grammar has errors or if matching runs past
    --timeout (GK122), 2 on a usage error. With
    --format json every outcome is one JSON object on stdout: `accepted` (null when the
    grammar could not be used), where and why a text was rejected, `diagnostics`.
    """
    fields: dict[str, Any] = dict(EMPTY)
    with outcome(output_format, **fields):
        data, from_file = _text(text, text_option, text_file)
        grammar = load_grammar(grammar_path, root)
        explanation = _explain(grammar, data, timeout, text_file)
        if explanation is not None and from_file and data.endswith(b"\n"):
            trimmed = data.removesuffix(b"\n").removesuffix(b"\r")
            if _explain(grammar, trimmed, timeout, text_file) is None:
                explanation = None
                fields["ignored_final_line_break"] = True
        notes = [] if explanation is None else _token_notes(grammar)
        fields["accepted"] = explanation is None
        if output_format == "json":
            from dataclasses import asdict

            if explanation is not None:
                fields.update(asdict(explanation), message=str(explanation))
            echo(dump_json({**fields, "diagnostics": [d.to_json() for d in notes]}))
        else:
            echo("accepted" if explanation is None else f"rejected: {explanation}")
            hint = getattr(explanation, "hint", None)
            if hint is not None:
                echo(f"  = help: {hint}", err=True)
            for note in notes:
                echo(note.render(), err=True)
    if explanation is not None:
        sys.exit(EXIT_ERRORS)


def _explain(grammar: Grammar, data: bytes, timeout: float, text_file: str | None
             ) -> Explanation | None:
    """``grammar.explain(data)`` with the CLI's wording: a key-order hint naming
    ``--property-order``, a timeout as a GK122 diagnostic (on ``text_file``, when the text
    comes from one) naming ``--timeout``."""
    from grammarkit.automata.earley import MatchTimeout
    from grammarkit.automata.key_order import CLI_HINT, KeyOrderExplanation

    try:
        explanation = checked(lambda: grammar.explain(data, timeout or None), grammar.source)
    except MatchTimeout as exc:
        path = None if text_file is None else "<stdin>" if text_file == "-" else text_file
        fail([cli_diagnostic("GK122", exc.diagnostic.message, path, TIMEOUT_HINT)])
    if isinstance(explanation, KeyOrderExplanation):
        return replace(explanation, hint=CLI_HINT)
    return explanation


def _text(text: str | None, text_option: str | None, text_file: str | None
          ) -> tuple[bytes, bool]:
    """The bytes to match, and whether they come from a file (or standard input)."""
    given = [value for value in (text, text_option, text_file) if value is not None]
    if len(given) != 1:
        raise click.UsageError("give the text as exactly one of TEXT, --text or --file")
    if text_file is not None:
        return read_bytes(text_file), True
    return given[0].encode("utf-8", "surrogateescape"), False


def _token_notes(grammar: Grammar) -> list[Diagnostic]:
    """A GK175 note when the grammar names token ids, which no text can spell."""
    from grammarkit.ebnf import ast

    for rule in grammar.ast.rules:
        for node in ast.walk(rule.body):
            if isinstance(node, (ast.TokenSet, ast.TokenTagDispatch)):
                note = cli_diagnostic(
                    "GK175", f"rule `{rule.name}` needs a vocabulary token "
                    f"({_token_text(node)}): text cannot spell a token id, so `match` can "
                    "never get past it",
                    None, "preview it at the token level with `grammarkit sample GRAMMAR "
                    "--tokenizer tokenizer.json`, or test it with the native decoder in Python: "
                    "gk.TokenMatcher(grammar, gk.Vocabulary.from_file('tokenizer.json'))",
                    severity="note")
                if grammar.source is not None and node.span is not None:
                    note = replace(note, span=node.span, source=grammar.source)
                return [note]
    return []


def _token_text(node: Any) -> str:
    from grammarkit.ebnf import ast

    if isinstance(node, ast.TokenSet):
        ids = ", ".join(map(str, node.ids))
        return f"{'ExcludeToken' if node.exclude else 'Token'}({ids})"
    return "TokenTagDispatch(" + ", ".join(f"({i}, {name})" for i, name in node.tags) + ")"
