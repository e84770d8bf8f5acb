"""Membership questions answered without building a grammar: is this string in that string set,
what must this property's value satisfy."""

from __future__ import annotations

from grammarkit.convert.json_schema.automata import TooComplex, intersect, with_length
from grammarkit.convert.json_schema.languages import LanguageError, language_dfa, matches
from grammarkit.convert.json_schema.model import (
    Child,
    Clause,
    Literals,
    ObjectSet,
    StringSet,
    conjoin,
)


def string_set_empty(s: StringSet) -> bool:
    """Whether ``s`` visibly allows no string (a literal set all filtered out, or crossed
    length bounds); ``False`` when in doubt."""
    literal_sets = [lang.values for lang in s.languages if isinstance(lang, Literals)]
    if not literal_sets:
        return s.max_length is not None and s.min_length > s.max_length
    candidates = set(literal_sets[0]).intersection(*literal_sets[1:])
    return not any(string_admits(s, value) is not False for value in candidates)


def string_set_void(s: StringSet) -> bool:
    """Whether ``s`` allows no string, deciding its languages' intersection with automata
    (two ``oneOf`` branches' disjoint file-name patterns); ``False`` when in doubt (a
    language that can't be compiled, an automaton beyond the state limit)."""
    if string_set_empty(s):
        return True
    if not s.languages:
        return False
    try:
        dfa = language_dfa(s.languages[0])
        for language in s.languages[1:]:
            dfa = intersect(dfa, language_dfa(language))
        if s.min_length or s.max_length is not None:
            dfa = with_length(dfa, s.min_length, s.max_length)
    except (LanguageError, TooComplex):
        return False
    return dfa.is_empty()


def string_admits(s: StringSet, value: str) -> bool | None:
    """Whether ``value`` is in the string set; ``None`` if a language can't be compiled."""
    if len(value) < s.min_length or (s.max_length is not None and len(value) > s.max_length):
        return False
    verdicts = [matches(lang, value) for lang in s.languages]
    verdicts += [None if (m := matches(lang, value)) is None else not m for lang in s.excluded]
    if any(verdict is False for verdict in verdicts):
        return False
    return None if any(verdict is None for verdict in verdicts) else True


def property_value(s: ObjectSet, name: str) -> Child:
    """The schema a property called ``name`` must satisfy in objects of ``s``."""
    parts: list[Child] = []
    for clause in s.clauses:
        parts.append(clause_value(clause, name))
    return conjoin(*parts)


def clause_value(clause: Clause, name: str) -> Child:
    """What one clause requires of property ``name``: its ``properties`` entry and matching
    patterns' schemas, or ``additional`` if neither applies. A pattern that can't be compiled
    may or may not match: then neither its schema nor ``additional`` is required (a superset)."""
    found = clause.values.get(name)
    if found is None:
        found = clause.values[name] = _clause_value(clause, name)
    return found


def _clause_value(clause: Clause, name: str) -> Child:
    parts: list[Child] = []
    declared = False
    unknown = False
    if name in clause.by_name:
        parts.extend(clause.by_name[name])
        declared = True
    for pattern, child in clause.patterns:
        verdict = matches(pattern, name)
        if verdict:
            parts.append(child)
            declared = True
        elif verdict is None:
            unknown = True
    if not declared and not unknown:
        parts.append(clause.additional)
    return conjoin(*parts)
