"""``grammarkit lsp``: the language server for editors."""

from __future__ import annotations

import click


@click.command("lsp")
def command() -> None:
    """Run the grammar language server over standard input and output (for editors).

    Diagnostics as you type, formatting, go to definition, references, rename, hover,
    completion, document symbols and quick fixes for *.ebnf files. Needs the `lsp` extra:
    pip install 'grammarkit[lsp]'. Editor set-up: docs/authoring.md.
    """
    try:
        from grammarkit.authoring.language_server import run
    except ImportError as exc:
        raise click.ClickException(
            f"the language server needs the `lsp` extra ({exc.name} is missing): "
            "pip install 'grammarkit[lsp]'") from None
    run()
