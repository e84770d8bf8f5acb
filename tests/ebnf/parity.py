"""Helpers comparing grammarkit's parser verdicts with xgrammar 0.2.8's."""

from __future__ import annotations

import re

from grammarkit import Grammar, GrammarError

_POSITION = re.compile(r"at line (\d+), column (\d+)")


UNKNOWN = (0, 0)
"""xgrammar rejects the text but names no position (or its message cannot be decoded)."""


def same_verdict(xgrammar: tuple[int, int] | None, ours: tuple[int, int] | None) -> bool:
    """Same acceptance, and the same position whenever xgrammar gives one."""
    if xgrammar == UNKNOWN:
        return ours is not None
    return xgrammar == ours


def xgrammar_verdict(text: str, root: str = "root") -> tuple[int, int] | None:
    """``None`` if xgrammar accepts ``text``, else the (line, byte column) it reports."""
    import xgrammar

    try:
        xgrammar.Grammar.from_ebnf(text, root_rule_name=root)
    except UnicodeDecodeError:
        # xgrammar quotes a cut UTF-8 sequence in its message and cannot decode it itself.
        return UNKNOWN
    except RuntimeError as exc:
        match = _POSITION.search(str(exc))
        if match is None:  # a check after parsing, e.g. on lookaheads: no position
            return UNKNOWN
        return int(match.group(1)), int(match.group(2))
    return None


def grammarkit_verdict(text: str, root: str = "root") -> tuple[int, int] | None:
    """``None`` if grammarkit accepts ``text``, else the (line, byte column) of its first error."""
    try:
        Grammar.from_ebnf(text, root)
    except GrammarError as exc:
        first = next(d for d in exc.diagnostics if d.is_error)
        position = first.position
        assert position is not None
        return position.line, position.byte_column
    return None
