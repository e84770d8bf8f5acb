"""Number sets to grammar: shared rules when unconstrained, digit decomposition for ranges, and
the product automaton when divisibility or "not an integer" is involved."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from grammarkit import codepoints
from grammarkit.convert.json_schema.automata import (
    DFA,
    TooComplex,
    complement,
    dfa_from_expr,
    dfa_to_rules,
    intersect,
)
from grammarkit.convert.json_schema.digits import choice
from grammarkit.convert.json_schema.model import NumberSet
from grammarkit.convert.json_schema.numbers import (
    ANY_INTEGER,
    NON_INTEGER,
    ZERO_FRACTION,
    BoundTooLarge,
    multiple_dfa,
    number_range,
)
from grammarkit.convert.json_schema.report import TOO_COMPLEX
from grammarkit.convert.json_schema.tries import trie_expr
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.convert.json_schema.automata import Ranges
    from grammarkit.convert.json_schema.emitter import Emitter

_PLAIN_NUMBER = number_range(None, None, False)


def number_expr(s: NumberSet, emitter: Emitter) -> ast.Expr:
    """The JSON numbers in ``s`` (plain notation once anything beyond the type constrains
    them)."""
    if s.is_unconstrained:
        return emitter.any_number()
    if s == NumberSet(integer=True):
        return emitter.shared("json-integer", lambda: ANY_INTEGER)
    low, high = s.low, s.high
    integer = s.integer is True
    try:
        # Memoized: a schema's many integer fields repeat a few bounds (vector: 389 ranges
        # of 18 kinds).
        range_expr = emitter.memo(("number range", low, high, integer),
                                  lambda: number_range(low, high, integer))
    except BoundTooLarge as exc:
        emitter.reporter.relax(s.pointer, f"a bound is too large to enforce exactly ({exc}); "
                               "the bounds are not enforced", code=TOO_COMPLEX)
        range_expr = number_range(None, None, integer)
    if s.multiple_of is None and not s.not_multiple_of and s.integer is not False:
        return range_expr
    try:
        dfa = _product(s, range_expr)
    except (TooComplex, BoundTooLarge) as exc:
        emitter.reporter.relax(s.pointer, f"`multipleOf` can't be enforced exactly here ({exc})",
                               "use a smaller multipleOf, or bounds that allow few values",
                               code=TOO_COMPLEX)
        return range_expr
    if dfa.is_empty():
        return ast.CharClass(())
    start, rules = dfa_to_rules(dfa, emitter.fresh_name("number"), _digits)
    emitter.add_rules(rules)
    return start


def is_point(s: NumberSet) -> bool:
    """Whether ``s`` is one value (an ``enum``/``const`` number)."""
    return (s.low is not None and s.high is not None and s.low == s.high
            and not s.low.exclusive and s.integer is None and s.multiple_of is None
            and not s.not_multiple_of)


def points_expr(values: list[Decimal], emitter: Emitter) -> ast.Expr:
    """Plain-notation spellings of the given values, as a trie: integers may add a zero
    fraction (``2.00``), other values trailing zeros (``2.50``), and zero a minus sign."""
    whole: set[str] = set()
    fractional: set[str] = set()
    for value in values:
        text = format(value, "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        if text in ("0", "-0"):
            whole.update(("0", "-0"))
        elif "." in text:
            fractional.add(text)
        else:
            whole.add(text)

    def new_rule(expr: ast.Expr) -> ast.Expr:
        return emitter.helper("number.values", expr)

    def spell(chars: tuple[str, ...]) -> ast.Expr:
        return _digits(codepoints.merge((ord(c), ord(c)) for c in chars))

    alternatives = []
    if whole:
        alternatives.append(trie_expr(sorted(whole), spell, ZERO_FRACTION, new_rule))
    if fractional:
        alternatives.append(trie_expr(sorted(fractional), spell,
                                      ast.Repeat(ast.Literal("0"), 0, None, "*"), new_rule))
    return choice(alternatives)


def _product(s: NumberSet, range_expr: ast.Expr) -> DFA:
    dfa = dfa_from_expr(range_expr)
    if s.integer is False:
        dfa = intersect(dfa, dfa_from_expr(NON_INTEGER))
    if s.multiple_of is not None:
        dfa = intersect(dfa, multiple_dfa(s.multiple_of))
    for step in s.not_multiple_of:
        dfa = intersect(dfa, intersect(dfa_from_expr(_PLAIN_NUMBER),
                                       complement(multiple_dfa(step))))
    return dfa


def _digits(ranges: Ranges) -> ast.Expr:
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return ast.Literal(chr(ranges[0][0]))
    return ast.CharClass(ranges)
