"""The lexer class Lark's LALR front end asks for; grammarkit's own scanner makes the tokens.

A module of its own so that Lark is imported only when a rule needs the LALR tables (see
:func:`grammarkit.ebnf.lalr.parser`), while Lark's on-disk cache can still pickle the class.
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
