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
from grammarkit.convert.json_schema.digits import choice, sequence
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


def language_dfa(language: Language) -> DFA:
    """The minimal DFA of ``language``.

    Raises
    ------
    LanguageError
        If the language can't be compiled, or its automaton is beyond the state limit (the
        verdict is remembered too: finding it can take as long as building a large DFA).
    """
    found = _language_dfa(language)
    if isinstance(found, str):
        raise LanguageError(found)
    return found


@lru_cache(maxsize=1024)
def _language_dfa(language: Language) -> DFA | str:
    """The minimal DFA of ``language``, or why there is none."""
    if isinstance(language, Literals):
        try:
            return literals_dfa(language.values)
        except TooComplex as exc:
            return str(exc)
    try:
        expr = language_expr(language)
    except LanguageError as exc:
        return str(exc)
    try:
        return dfa_from_expr(expr)
    except TooComplex as exc:
        return (f"{describe(language)} is too complex to combine exactly with other string "
                f"constraints ({exc})")


def matches(language: Language, text: str) -> bool | None:
    """Whether ``text`` is in ``language``; ``None`` if that can't be decided (the language
    can't be compiled)."""
    if isinstance(language, Literals):
        return text in language.members
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


MAX_MATCHER_STEPS = 1 << 16
"""The most state-set transitions one matcher remembers (past this it simulates without)."""


class _Matcher:
    """Simulates an NFA (no determinization up front, so no blow-up), remembering each
    transition between state sets it has taken: a lazily built DFA, so the many names an
    ``if`` chain or a ``oneOf`` tests against one large pattern share their prefixes' work."""

    def __init__(self, expr: ast.Expr):
        self.nfa = nfa_from_expr(expr)
        self.start = self.nfa.closure([self.nfa.start])
        self._steps: dict[tuple[frozenset[int], int], frozenset[int]] = {}

    def __call__(self, text: str) -> bool:
        steps = self._steps
        current = self.start
        for char in text:
            key = (current, ord(char))
            following = steps.get(key)
            if following is None:
                following = self._step(current, key[1])
                if len(steps) < MAX_MATCHER_STEPS:
                    steps[key] = following
            if not following:
                return False
            current = following
        return self.nfa.accept in current

    def _step(self, current: frozenset[int], point: int) -> frozenset[int]:
        edges = self.nfa.edges
        return self.nfa.closure([
            target
            for state in current
            for ranges, target in edges[state]
            if any(low <= point <= high for low, high in ranges)
        ])


def describe(language: Language) -> str:
    """A short human description (``pattern '^a+$'``, ``format 'date'``)."""
    if isinstance(language, Pattern):
        return f"pattern {language.source!r}"
    if isinstance(language, Format):
        return f"format {language.name!r}"
    return f"a set of {len(language.values)} strings"


def nullable(expr: ast.Expr) -> bool:
    """Whether ``expr`` matches the empty string."""
    if isinstance(expr, ast.Literal):
        return not expr.value
    if isinstance(expr, ast.Sequence):
        return all(nullable(item) for item in expr.items)
    if isinstance(expr, ast.Choice):
        return any(nullable(alternative) for alternative in expr.alternatives)
    if isinstance(expr, ast.Repeat):
        return expr.min == 0 or nullable(expr.item)
    return False


def without_empty(expr: ast.Expr) -> ast.Expr:
    """An expression for the non-empty strings ``expr`` matches (``minLength: 1`` without
    building an automaton)."""
    if not nullable(expr):
        return expr
    if isinstance(expr, ast.Literal):
        return ast.CharClass(())
    if isinstance(expr, ast.Choice):
        return choice([without_empty(alternative) for alternative in expr.alternatives])
    if isinstance(expr, ast.Repeat):
        if expr.max == 0:
            return ast.CharClass(())
        item = without_empty(expr.item)
        return ast.Repeat(item, 1, expr.max) if expr.max != 1 else item
    assert isinstance(expr, ast.Sequence)
    first, rest = expr.items[0], sequence(list(expr.items[1:]))
    # Either the first item is non-empty, or it is empty and the rest is not.
    return choice([sequence([without_empty(first), rest]), without_empty(rest)])
