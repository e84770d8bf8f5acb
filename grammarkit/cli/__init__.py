"""The ``grammarkit`` command line: thin click commands over the library.

One module per command (``grammarkit/cli/<command>.py``, each defining ``command``); what they
share is in :mod:`grammarkit.cli.common`. Exit codes: 0 clean, 1 the input has errors, 2 usage
error (bad option, unreadable file). Library modules are imported inside the commands, so
``import grammarkit.cli`` stays fast.
"""

from __future__ import annotations

import click

from grammarkit.cli import (
    check,
    complete,
    convert,
    diagram,
    fmt,
    generate,
    lint,
    lsp,
    match,
    sample,
    serve,
    test,
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="grammarkit", prog_name="grammarkit")
def main() -> None:
    """Author, check and run grammars for LLM constrained decoding (XGrammar/SGLang EBNF)."""


for _module in (lint, fmt, match, convert, sample, generate, test, diagram, lsp, complete, serve,
                check):
    main.add_command(_module.command)
