"""String languages (patterns, formats, literal sets) as code-point expressions and DFAs.

Compiling a language is cached; a language that can't be compiled raises
:class:`LanguageError`, whose message the caller turns into a diagnostic (and, when lenient,
into a relaxation: the language is then dropped, which only widens what is accepted).
"""

from __future__ import annotations

from functools import lru_cache

from grammarkit.convert.json_schema.automata import (
    DFA,
    TooComplex,
    dfa_from_expr,
    literals_dfa,
    nfa_from_expr,
)
from grammarkit.convert.json_schema.digits import choice
from grammarkit.convert.json_schema.formats import STRING_FORMATS
from grammarkit.convert.json_schema.model import Format, Language, Literals, Pattern
from grammarkit.convert.json_schema.patterns import UnsupportedPattern, pattern_expr
from grammarkit.convert.regex import regex_to_ast
from grammarkit.ebnf import ast


class LanguageError(ValueError):
    """A language can't be compiled (unsupported or too complex); the message says why."""


@lru_cache(maxsize=1024)
def language_expr(language: Language) -> ast.Expr:
    """The code-point expression of ``language``."""
    if isinstance(language, Literals):
        return choice([ast.Literal(value) for value in language.values])
    if isinstance(language, Format):
        return regex_to_ast(STRING_FORMATS[language.name])
    try:
        return pattern_expr(language.source)
    except UnsupportedPattern as exc:
        raise LanguageError(f"pattern {language.source!r}: {exc}") from None


@lru_cache(maxsize=1024)
def language_dfa(language: Language) -> DFA:
    """The minimal DFA of ``language``."""
    if isinstance(language, Literals):
        try:
            return literals_dfa(language.values)
        except TooComplex as exc:
            raise LanguageError(str(exc)) from None
    expr = language_expr(language)
    try:
        return dfa_from_expr(expr)
    except TooComplex as exc:
        raise LanguageError(f"{_describe(language)} is too complex to combine exactly with "
                            f"other string constraints ({exc})") from None


def matches(language: Language, text: str) -> bool | None:
    """Whether ``text`` is in ``language``; ``None`` if that can't be decided (the language
    can't be compiled)."""
    if isinstance(language, Literals):
        return text in language.values
    try:
        return _nfa_matcher(language)(text)
    except LanguageError:
        return None


@lru_cache(maxsize=1024)
def _nfa_matcher(language: Language) -> _Matcher:
    try:
        return _Matcher(language_expr(language))
    except TooComplex as exc:
        raise LanguageError(str(exc)) from None


class _Matcher:
    """Simulates an NFA (no determinization, so no blow-up)."""

    def __init__(self, expr: ast.Expr):
        self.nfa = nfa_from_expr(expr)

    def __call__(self, text: str) -> bool:
        nfa = self.nfa
        current = nfa.closure([nfa.start])
        for char in text:
            point = ord(char)
            following = [
                target
                for state in current
                for ranges, target in nfa.edges[state]
                if any(low <= point <= high for low, high in ranges)
            ]
            current = nfa.closure(following)
            if not current:
                return False
        return nfa.accept in current


def _describe(language: Language) -> str:
    if isinstance(language, Pattern):
        return f"pattern {language.source!r}"
    if isinstance(language, Format):
        return f"format {language.name!r}"
    return f"a set of {len(language.values)} strings"


def describe(language: Language) -> str:
    """A short human description (``pattern '^a+$'``, ``format 'date'``)."""
    return _describe(language)
