"""The lexer class Lark's LALR front end asks for; grammarkit's own scanner makes the tokens.

A module of its own so that Lark is imported only where the LALR tables are computed
(:func:`grammarkit.ebnf.lalr.tables_from_lark`: when ``syntax.lark`` changes, and in a test).
"""

from __future__ import annotations

from typing import Any

from lark.lexer import Lexer


class TokenFeed(Lexer):
    """Hands Lark the tokens of :mod:`grammarkit.ebnf.lexer` as they are."""

    def __init__(self, conf: Any) -> None:
        pass

    def lex(self, tokens: Any) -> Any:  # type: ignore[override]
        return iter(tokens)
