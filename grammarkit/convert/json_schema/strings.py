"""String sets to grammar: quotes around the JSON spellings of the allowed values.

Three routes, cheapest first:

* literal sets (``enum``, ``const``): each allowed value, every spelling of each character;
* one pattern or format and no other constraint (lengths it implies don't count): the
  regular expression, translated to JSON text character by character;
* anything else (lengths beside a pattern, several patterns, excluded names): the product
  automaton of all constraints, as right-linear rules, or a bounded repetition when the
  language is just "``m`` to ``n`` characters from one class".

A constraint that can't be compiled, or whose product automaton would exceed the state limit,
is relaxed (dropped, so the grammar accepts more) with a diagnostic.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from grammarkit import codepoints
from grammarkit.convert.json_schema.automata import (
    DFA,
    Ranges,
    TooComplex,
    complement,
    dfa_from_expr,
    excluded_words_dfa,
    intersect,
    minimize,
    universal_dfa,
    with_length,
    without_words,
)
from grammarkit.convert.json_schema.digits import repeat
from grammarkit.convert.json_schema.json_text import quoted, spell_char, spell_expr
from grammarkit.convert.json_schema.languages import (
    LanguageError,
    describe,
    language_dfa,
    language_expr,
    matches,
    without_empty,
)
from grammarkit.convert.json_schema.membership import string_admits
from grammarkit.convert.json_schema.model import Language, Literals, StringSet
from grammarkit.convert.json_schema.report import TOO_COMPLEX
from grammarkit.convert.json_schema.shared_states import SharedStates
from grammarkit.convert.json_schema.tries import trie_expr
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.convert.json_schema.emitter import Emitter


SHARED_CHARS_FROM = 64
"""Literal sets with more values than this spell each character through a shared rule
(``char.a ::= "a" | "\\u0061"``), which keeps long ``enum``s compact."""


def string_expr(s: StringSet, emitter: Emitter, name: str) -> ast.Expr:
    """The JSON strings (quotes included) whose value is in ``s``; nothing (an empty class) if
    the set is empty. Helper rules are named from ``name``."""
    literal_sets = [lang for lang in s.languages if isinstance(lang, Literals)]
    if literal_sets:
        return _literals(s, literal_sets, emitter, name)
    languages = [lang for lang in s.languages if _compiles(lang, emitter)]
    excluded = _merged_literals([lang for lang in s.excluded if _compiles(lang, emitter)])
    if not languages and not excluded:
        return emitter.bounded_string(s.min_length, s.max_length)
    if len(languages) == 1 and not excluded:
        if _lengths_implied(languages[0], s):
            return quoted(spell_expr(language_expr(languages[0]), emitter.char))
        if (s.min_length, s.max_length) == (1, None):
            return quoted(spell_expr(without_empty(language_expr(languages[0])), emitter.char))
    try:
        dfa = emitter.memo(("string product", tuple(languages), tuple(excluded), s.min_length,
                            s.max_length),
                           lambda: _product(languages, excluded, s.min_length, s.max_length))
    except (TooComplex, LanguageError) as exc:
        return _relaxed(s, languages, emitter, str(exc))
    return quoted(emitter.memo(("string automaton", dfa), lambda: _dfa_expr(dfa, emitter, name)))


def _merged_literals(languages: list[Language]) -> list[Language]:
    """``languages`` with every literal set among them as one (a chain of ``if`` excluding
    one constant each costs one automaton, not one product per constant)."""
    literal_sets = [lang for lang in languages if isinstance(lang, Literals)]
    if len(literal_sets) < 2:
        return languages
    merged = Literals.of(value for lang in literal_sets for value in lang.values)
    return [lang for lang in languages if not isinstance(lang, Literals)] + [merged]


def _compiles(language: Language, emitter: Emitter) -> bool:
    try:
        language_expr(language)
    except LanguageError as exc:
        emitter.reporter.relax(getattr(language, "pointer", ""), f"{exc}; it is not enforced")
        return False
    return True


def _literals(s: StringSet, literal_sets: list[Literals], emitter: Emitter,
              name: str) -> ast.Expr:
    candidates = set(literal_sets[0].values).intersection(*(lang.values for lang in
                                                            literal_sets[1:]))
    allowed = []
    for value in sorted(candidates):
        verdict = string_admits(s, value)
        if verdict is None:
            emitter.reporter.relax(s.pointer, f"can't decide whether {value!r} matches the "
                                   "pattern beside it; it is allowed")
        if verdict is not False:
            allowed.append(value)
    if not allowed:
        return ast.CharClass(())
    many = len(allowed) > SHARED_CHARS_FROM

    def spell(chars: tuple[str, ...]) -> ast.Expr:
        if len(chars) == 1 and not many:
            return spell_char(chars[0])
        return emitter.char(codepoints.merge((ord(c), ord(c)) for c in chars), share=many)

    body = trie_expr(allowed, spell, ast.Literal(""),
                     lambda expr: emitter.helper(f"{name}.values", expr))
    return quoted(body)


def _lengths_implied(language: Language, s: StringSet) -> bool:
    """Whether the language alone keeps lengths within ``s``'s bounds."""
    if s.min_length == 0 and s.max_length is None:
        return True
    try:
        bounds = language_dfa(language).length_bounds()
    except LanguageError:
        return False
    if bounds is None:
        return True
    low, high = bounds
    return low >= s.min_length and (
        s.max_length is None or (high is not None and high <= s.max_length))


def _product(languages: list[Language], excluded: list[Language], low: int,
             high: int | None) -> DFA:
    """The minimal DFA of the strings in every language, in none of ``excluded``, with a
    length in ``[low, high]``.

    Only what can matter is excluded: of the listed words, those every language admits with
    an allowed length (declared property names beside a ``patternProperties`` pattern seldom
    match it), and several patterns at once, as the complement of their union (one product
    instead of one per pattern)."""
    parts = [language_dfa(lang) for lang in languages]
    excluded = [_admitted(lang, languages, low, high) if isinstance(lang, Literals) else lang
                for lang in excluded]
    patterns = [lang for lang in excluded if not isinstance(lang, Literals)]
    if len(patterns) > 1:
        try:
            parts.append(minimize(complement(dfa_from_expr(ast.Choice(tuple(
                language_expr(lang) for lang in patterns))))))
            excluded = [lang for lang in excluded if isinstance(lang, Literals)]
        except TooComplex:
            pass  # one product per pattern: each keeps the states the others would add
    words = [word for lang in excluded if isinstance(lang, Literals) for word in lang.values]
    parts.extend(_complement_dfa(lang) for lang in excluded if not isinstance(lang, Literals))
    if not parts:
        parts.append(excluded_words_dfa(words) if words else universal_dfa())
        words = []
    dfa = parts[0]
    for part in parts[1:]:
        dfa = intersect(dfa, part)
    if words:
        dfa = without_words(dfa, words)
    if low or high is not None:
        dfa = with_length(dfa, low, high)
    return dfa


def _admitted(words: Literals, languages: list[Language], low: int,
              high: int | None) -> Literals:
    """The ``words`` that may be in every one of ``languages`` with a length in
    ``[low, high]`` (all of them without languages: excluding them is the whole point)."""
    if not languages:
        return words
    return Literals(tuple(word for word in words.values
                          if low <= len(word) and (high is None or len(word) <= high)
                          and all(matches(lang, word) is not False for lang in languages)))


@lru_cache(maxsize=256)
def _complement_dfa(language: Language) -> DFA:
    """The minimal DFA of the strings not in ``language``."""
    return complement(language_dfa(language))


def _relaxed(s: StringSet, languages: list[Language], emitter: Emitter, reason: str) -> ast.Expr:
    """The superset kept when the exact product is out of reach: the first language alone."""
    dropped = [describe(lang) for lang in languages[1:]] + [
        describe(lang) for lang in s.excluded]
    if s.min_length or s.max_length is not None:
        dropped.append("the length bounds")
    emitter.reporter.relax(s.pointer, f"combining the string constraints here is too complex "
                           f"({reason}); {', '.join(dropped) or 'nothing'} not enforced",
                           "simplify the pattern, or drop minLength/maxLength",
                           code=TOO_COMPLEX)
    if not languages:
        return emitter.bounded_string(s.min_length, s.max_length)
    return quoted(spell_expr(language_expr(languages[0]), emitter.char))


def _dfa_expr(dfa: DFA, emitter: Emitter, name: str) -> ast.Expr:
    if dfa.is_empty():
        return ast.CharClass(())
    repetition = _as_repetition(dfa)
    if repetition is not None:
        ranges, low, high = repetition
        return repeat(emitter.char(ranges), low, high)
    shared = emitter.memo("shared dfa states", lambda: SharedStates(
        emitter.fresh_name, lambda: emitter.numbered_name("s"), emitter.add_productive_rules))
    return shared.expr(dfa, name, lambda ranges: emitter.char(ranges, share=True))


def _as_repetition(dfa: DFA) -> tuple[Ranges, int, int | None] | None:
    """``(ranges, low, high)`` if the language is ``low`` to ``high`` code points from
    ``ranges``, else ``None``."""
    ranges: Ranges | None = None
    state = dfa.start
    visited = []
    while True:
        visited.append(state)
        edges = dfa.edges[state]
        if not edges:
            high: int | None = len(visited) - 1
            break
        if len(edges) != 1 or (ranges is not None and edges[0][0] != ranges):
            return None
        ranges, target = edges[0]
        if target == state:
            high = None
            break
        if target in visited:
            return None
        state = target
    accepting = [index for index, s in enumerate(visited) if s in dfa.accepting]
    if not accepting or ranges is None:
        return None
    low = accepting[0]
    if accepting != list(range(low, len(visited))):
        return None
    return ranges, low, high
