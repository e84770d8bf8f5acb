"""Nested JSON documents built from levels, each damaged at one point, for recognizer tests."""

from __future__ import annotations


def damaged_document(levels: list[str], closing: dict[str, str], cut: int, damage: str) -> str:
    """The document opening ``levels`` in turn and closing them (``closing[level]``), with a
    value where the innermost level waits for one; then ``damage`` inserted at ``cut`` (modulo
    the length), or the character there dropped when ``damage`` is ``"drop"``."""
    innermost = "1" if levels[-1].endswith(" ") else ""
    document = "".join(levels) + innermost + "".join(closing[level] for level in reversed(levels))
    at = cut % (len(document) + 1)
    if damage == "drop":
        return document[:at] + document[at + 1:]
    return document[:at] + damage + document[at:]
