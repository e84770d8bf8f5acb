"""``python -m grammarkit``: the command line."""

from grammarkit.cli import main

main(prog_name="grammarkit")
