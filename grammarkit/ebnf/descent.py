"""A recursive-descent reader for plain rule definitions, beside the LALR driver.

``syntax.lark`` defines the dialect, and :mod:`grammarkit.ebnf.lalr` parses any rule with its
tables. Most rules, though, are plain: literals, classes, references, groups, alternatives and
quantifiers, without macro calls, lookaheads or errors. For those the table-driven loop spends
three shift/reduce steps per token; this reader walks the same productions directly and builds
the very nodes the parser's actions build from the LALR driver's reductions (the same types,
values and spans), without a call per reduction. On anything else it returns ``None`` and the
caller hands the rule to the LALR driver, which parses it and reports its errors.
``tests/ebnf/test_fast_paths.py`` checks the two agree on generated rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from grammarkit.ebnf import ast
from grammarkit.ebnf.ast import Span
from grammarkit.ebnf.lexer import GkToken

MAX_DEPTH = 100
"""Group nesting handled here; deeper rules go to the LALR driver, which needs no recursion."""

_SUFFIXES: dict[str, tuple[int, int | None, str]] = {
    "STAR": (0, None, "*"),
    "PLUS": (1, None, "+"),
    "QMARK": (0, 1, "?"),
}
_LITERAL, _CHAR_CLASS, _RULE_REF = ast.Literal, ast.CharClass, ast.RuleRef
_SEQUENCE, _REPEAT = ast.Sequence, ast.Repeat


class Findings(Protocol):
    """Where the reader puts what the parser checks after reading a rule."""

    references: list[GkToken]
    """Each ``IDENT`` token read as a rule reference."""
    bounds: list[tuple[GkToken, GkToken]]
    """Each ``{m,n}`` read: the token of ``m`` and the token of ``n`` (an integer or a name)."""
    class_problems: list[GkToken]
    """Each ``CLASS`` token that carries diagnostics."""


class _NotPlain(Exception):
    """The rule needs the LALR driver: a macro call, a lookahead, or a syntax error."""


def read_rule(tokens: Sequence[GkToken], findings: Findings) -> ast.Rule | None:
    """The rule ``tokens`` define (one rule definition), or ``None`` when it is not plain and
    the LALR driver must parse it. ``findings`` may have grown even then."""
    if len(tokens) < 3 or tokens[0].type != "RULE_NAME" or tokens[1].type != "ASSIGN":
        return None
    try:
        body, at = _Reader(tokens, findings).choices(2, 0)
    except _NotPlain:
        return None
    if at != len(tokens):
        return None
    first, last = tokens[0], tokens[-1]
    name, attributes = first.payload
    name_span = Span(first.start, max(first.end, first.start + 1))
    return ast.Rule(name, body, None, attributes, Span(first.start, last.end), name_span)


class _Reader:
    """One walk over one rule's tokens."""

    def __init__(self, tokens: Sequence[GkToken], findings: Findings):
        self.tokens = tokens
        self.count = len(tokens)
        self.references = findings.references
        self.bounds = findings.bounds
        self.class_problems = findings.class_problems

    def choices(self, at: int, depth: int) -> tuple[ast.Expr, int]:
        """``choices: sequence ("|" sequence)*``; one sequence stands for itself."""
        tokens, count = self.tokens, self.count
        first = at
        value, at = self.sequence(at, depth)
        if at == count or tokens[at].type != "PIPE":
            return value, at
        alternatives = [value]
        while at < count and tokens[at].type == "PIPE":
            value, at = self.sequence(at + 1, depth)
            alternatives.append(value)
        return ast.Choice(tuple(alternatives), Span(tokens[first].start, tokens[at - 1].end)), at

    def sequence(self, at: int, depth: int) -> tuple[ast.Expr, int]:
        """``sequence: item+``, each ``item: element quantifier?`` read in this one loop."""
        tokens, count = self.tokens, self.count
        first = at
        items: list[ast.Expr] = []
        element: ast.Expr
        while at < count:
            token = tokens[at]
            kind = token.type
            if kind == "STRING":
                element = _LITERAL(token.payload, Span(token.start, token.end))
                at += 1
            elif kind == "IDENT":
                self.references.append(token)
                element = _RULE_REF(token.payload[0], Span(token.start, token.end))
                at += 1
            elif kind == "CLASS":
                value, problems = token.payload
                if problems:
                    self.class_problems.append(token)
                element = _CHAR_CLASS(value.ranges, value.negated, Span(token.start, token.end))
                at += 1
            elif kind == "LPAR":
                element, at = self.group(at, depth)
            else:
                break
            if at < count:
                after = tokens[at]
                suffix = _SUFFIXES.get(after.type)
                if suffix is not None:
                    low, high, op = suffix
                    element = _REPEAT(element, low, high, op, Span(token.start, after.end))
                    at += 1
                elif after.type == "LBRACE":
                    low, high, at = self.braces(at)
                    span = Span(token.start, tokens[at - 1].end)
                    element = _REPEAT(element, low, high, "{}", span)
            items.append(element)
        if not items:
            raise _NotPlain
        if len(items) == 1:
            return items[0], at
        return _SEQUENCE(tuple(items), Span(tokens[first].start, tokens[at - 1].end)), at

    def group(self, at: int, depth: int) -> tuple[ast.Expr, int]:
        """``( choices )``, standing for its content, or ``()``, the empty sequence."""
        tokens, count = self.tokens, self.count
        lpar = tokens[at]
        if depth == MAX_DEPTH:
            raise _NotPlain
        if at + 1 < count and tokens[at + 1].type == "RPAR":
            return _SEQUENCE((), Span(lpar.start, tokens[at + 1].end)), at + 2
        inner, at = self.choices(at + 1, depth + 1)
        if at == count or tokens[at].type != "RPAR":
            raise _NotPlain
        return inner, at + 1

    def braces(self, at: int) -> tuple[int, int | None, int]:
        """``{n}``, ``{n,}`` or ``{n,bound}``: ``(min, max, index after it)``, as the
        ``quantifier`` productions and their actions read them."""
        tokens, count = self.tokens, self.count
        kinds = [tokens[k].type for k in range(at, min(at + 5, count))]
        if kinds[:3] == ["LBRACE", "INT", "RBRACE"]:
            return tokens[at + 1].payload, tokens[at + 1].payload, at + 3
        if kinds[:4] == ["LBRACE", "INT", "COMMA", "RBRACE"]:
            return tokens[at + 1].payload, None, at + 4
        if kinds[:3] == ["LBRACE", "INT", "COMMA"] and kinds[3:] in (
            ["INT", "RBRACE"],
            ["IDENT", "RBRACE"],
        ):
            low_token, bound = tokens[at + 1], tokens[at + 3]
            self.bounds.append((low_token, bound))
            low: int = low_token.payload
            if bound.type == "IDENT":  # `-1`, or a name the parser reports
                return low, None, at + 5
            high: int = bound.payload  # reversed bounds are reported by the parser
            return min(low, high), max(low, high), at + 5
        raise _NotPlain
