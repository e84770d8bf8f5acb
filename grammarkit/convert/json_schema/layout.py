"""Where whitespace may go: the tokens between JSON values in each whitespace mode.

``flexible``
    Any JSON whitespace (``[ \\t\\n\\r]*``, the shared rule ``ws``) between tokens; none before
    or after the whole value (as xgrammar).
``compact``
    Exactly the separators (``(",", ":")`` unless given).
``indented``
    Exactly what ``json.dumps(value, indent=indent, separators=separators)`` writes: one item
    per line, ``indent`` spaces per level, ``[]`` and ``{}`` for empty containers.
"""

from __future__ import annotations

from dataclasses import dataclass

from grammarkit.convert.json_schema.digits import sequence
from grammarkit.ebnf import ast

WHITESPACE_MODES = ("flexible", "compact", "indented")

WS = ast.RuleRef("ws")
WS_RULE = ast.Rule("ws", ast.Repeat(ast.CharClass(((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20))), 0,
                                    None, "*"))
"""``ws ::= [\\t\\n\\r ]*``."""


@dataclass(frozen=True)
class Layout:
    """The whitespace mode and separators of one conversion."""

    mode: str
    item_separator: str = ","
    key_separator: str = ":"
    indent: int = 2

    @classmethod
    def create(cls, whitespace: str, indent: int | None,
               separators: tuple[str, str] | None) -> Layout:
        """Validate the options of :func:`~grammarkit.convert.json_schema.convert_schema`.

        Raises
        ------
        ValueError
            For an unknown mode, ``indent`` outside ``indented`` mode, or separators that are
            not a comma and a colon (plus whitespace).
        """
        if whitespace not in WHITESPACE_MODES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, not {whitespace!r}")
        if indent is not None and whitespace != "indented":
            raise ValueError("indent needs whitespace='indented'")
        if indent is not None and (not isinstance(indent, int) or not 0 <= indent <= 64):
            raise ValueError("indent must be an integer from 0 to 64")
        if separators is not None:
            item, key = separators
            if item.strip(" \t\n\r") != "," or key.strip(" \t\n\r") != ":":
                raise ValueError("separators must be a comma and a colon, each with optional "
                                 f"whitespace, not {separators!r}")
            if whitespace == "flexible":
                separators = None
        default = (",", ": ") if whitespace == "indented" else (",", ":")
        item, key = separators or default
        return cls(whitespace, item, key, 2 if indent is None else indent)

    @property
    def flexible(self) -> Layout:
        """The flexible layout (used past the indentation depth limit)."""
        return Layout("flexible")

    def _newline(self, depth: int) -> str:
        return "\n" + " " * (self.indent * depth)

    def open(self, bracket: str, depth: int) -> ast.Expr:
        """An opening bracket followed by whatever precedes the first member."""
        if self.mode == "flexible":
            return sequence([ast.Literal(bracket), WS])
        if self.mode == "indented":
            return ast.Literal(bracket + self._newline(depth + 1))
        return ast.Literal(bracket)

    def close(self, bracket: str, depth: int) -> ast.Expr:
        """Whatever follows the last member, then the closing bracket."""
        if self.mode == "flexible":
            return sequence([WS, ast.Literal(bracket)])
        if self.mode == "indented":
            return ast.Literal(self._newline(depth) + bracket)
        return ast.Literal(bracket)

    def comma(self, depth: int) -> ast.Expr:
        """Between two members of a container at ``depth``."""
        if self.mode == "flexible":
            return sequence([WS, ast.Literal(","), WS])
        if self.mode == "indented":
            return ast.Literal(self.item_separator + self._newline(depth + 1))
        return ast.Literal(self.item_separator)

    def colon(self) -> ast.Expr:
        """Between a property name and its value."""
        if self.mode == "flexible":
            return sequence([WS, ast.Literal(":"), WS])
        return ast.Literal(self.key_separator)

    def empty(self, brackets: str) -> ast.Expr:
        """An empty container."""
        if self.mode == "flexible":
            return sequence([ast.Literal(brackets[0]), WS, ast.Literal(brackets[1])])
        return ast.Literal(brackets)
