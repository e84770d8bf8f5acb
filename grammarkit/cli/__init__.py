"""The ``grammarkit`` command line: thin click commands over the library.

One module per command (``grammarkit/cli/<command>.py``, each defining ``command``); what they
share is in :mod:`grammarkit.cli.common`. Exit codes: 0 clean, 1 the input has errors, 2 usage
error (bad option, unreadable file). A command's module is imported only when that command runs
(or a help text lists it), and library modules inside the commands, so start-up stays fast.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import sys
import warnings
from typing import TextIO

import click

COMMANDS = ("lint", "fmt", "match", "convert", "sample", "generate", "test", "diagram", "lsp",
            "complete", "serve", "check")
"""Every command, by the name of its module."""


class _LazyGroup(click.Group):
    """A group whose commands are imported when they are looked up, not before."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        command: click.Command = importlib.import_module(f"grammarkit.cli.{cmd_name}").command
        return command


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="grammarkit", prog_name="grammarkit")
def main() -> None:
    """Author, check and run grammars for LLM constrained decoding (XGrammar/SGLang EBNF)."""
    warnings.showwarning = _show_warning
    atexit.unregister(_skip_final_collections)
    atexit.register(_skip_final_collections)


def _skip_final_collections() -> None:
    """Freeze every object on the way out, so the interpreter's last collections skip them.

    Those collections walk every object a command built (a compiled 0.5 MB grammar: 0.4 s, as
    long as its verdict). Not when xgrammar or torch is loaded: their extension modules report
    the instances that frozen cycles keep alive at exit as leaks.
    """
    if gc.get_freeze_count() == 0 and not {"xgrammar", "torch"} & sys.modules.keys():
        gc.freeze()


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """Print a library warning (e.g. an unusable cache directory) as one ``warning:`` line on
    stderr, each distinct message once; Python's default adds the warning's source file and
    line, meaningless here."""
    text = str(message)
    if text not in _shown_warnings:
        _shown_warnings.add(text)
        click.echo(f"warning: {text}", err=True)


_shown_warnings: set[str] = set()
