"""Helpers comparing grammarkit's parser verdicts with xgrammar 0.2.8's."""

from __future__ import annotations

import re

from grammarkit.ebnf.parser import parse
from grammarkit.source import SourceText

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
    """``None`` if grammarkit's parser accepts ``text``, else the (line, byte column) of its
    first error.

    Only the parser's verdict: ``Grammar.from_ebnf`` also checks ``Regex`` patterns, which
    xgrammar's parser leaves to its compiler (see ``REFUSED_WHEN_COMPILED`` in the corpus).
    """
    result = parse(text, root)
    if result.ok:
        return None
    first = next(d for d in result.diagnostics if d.is_error).with_source(SourceText(text, "<s>"))
    position = first.position
    assert position is not None
    return position.line, position.byte_column
