"""The EBNF abstract syntax tree: immutable nodes, each carrying its source span.

Every front-end (the EBNF parser, the JSON Schema and regex converters) produces this tree;
every later stage (analysis, printing, compilation to automata) consumes it.
Spans are character offsets into the source text; converters that have no source text leave
them ``None``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range ``[start, end)`` of character offsets into a source text."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Literal:
    """A string literal: the code points it matches, in order (``""`` matches empty)."""

    value: str
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class CharClass:
    """One code point from inclusive ``ranges`` (or outside them when ``negated``)."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RuleRef:
    """A reference to the rule called ``name``."""

    name: str
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Sequence:
    """Juxtaposition; the empty sequence (``()``) matches the empty string."""

    items: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Choice:
    """Alternation ``a | b | ...``."""

    alternatives: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Repeat:
    """``item`` repeated between ``min`` and ``max`` times (``max=None``: unbounded).

    ``?``, ``*``, ``+`` and ``{m,n}`` all become a ``Repeat``; ``op`` remembers the spelling.
    """

    item: Expr
    min: int
    max: int | None
    op: str = "{}"
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TagDispatch:
    """``TagDispatch(("tag", rule), ..., loop_after_dispatch=..., excludes=(...))``."""

    tags: tuple[tuple[str, str], ...]
    loop_after_dispatch: bool = True
    excludes: tuple[str, ...] = ()
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TokenSet:
    """``Token(id, ...)`` (one of the ids) or ``ExcludeToken(id, ...)`` (any other token)."""

    ids: tuple[int, ...]
    exclude: bool = False
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class TokenTagDispatch:
    """``TokenTagDispatch((id, rule), ..., loop_after_dispatch=..., excludes=(id, ...))``."""

    tags: tuple[tuple[int, str], ...]
    loop_after_dispatch: bool = True
    excludes: tuple[int, ...] = ()
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RegexMacro:
    """``Regex("pattern", json_string=false, flags="...")``: an embedded regular expression."""

    pattern: str
    json_string: bool = False
    flags: str = ""
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Substring:
    """``Substring("s1", ...)``: any substring of one of the given strings."""

    strings: tuple[str, ...]
    span: Span | None = field(default=None, compare=False)


Expr = (
    Literal
    | CharClass
    | RuleRef
    | Sequence
    | Choice
    | Repeat
    | TagDispatch
    | TokenSet
    | TokenTagDispatch
    | RegexMacro
    | Substring
)


@dataclass(frozen=True, slots=True)
class Attribute:
    """A rule attribute ``name[key=value]``; ``value`` is ``None`` for a bare flag."""

    key: str
    value: int | float | str | bool | None
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Rule:
    """``name ::= body (= lookahead)``."""

    name: str
    body: Expr
    lookahead: Expr | None = None
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = field(default=None, compare=False)
    name_span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Comment:
    """A ``#`` comment (text without the ``#``), kept so the formatter can reprint it."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class GrammarAST:
    """A whole grammar: its rules in source order, and its comments."""

    rules: tuple[Rule, ...]
    comments: tuple[Comment, ...] = ()

    def rule_map(self) -> dict[str, Rule]:
        """Rules by name (the first definition wins if a name is duplicated)."""
        result: dict[str, Rule] = {}
        for rule in self.rules:
            result.setdefault(rule.name, rule)
        return result


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions of ``expr``."""
    if isinstance(expr, Sequence):
        return expr.items
    if isinstance(expr, Choice):
        return expr.alternatives
    if isinstance(expr, Repeat):
        return (expr.item,)
    return ()


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node of ``expr``, pre-order, iteratively (safe on very deep trees)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def referenced_rules(expr: Expr) -> Iterator[tuple[str, Span | None]]:
    """Names of the rules that ``expr`` references, with the span of each reference."""
    for node in walk(expr):
        if isinstance(node, RuleRef):
            yield node.name, node.span
        elif isinstance(node, (TagDispatch, TokenTagDispatch)):
            for _, name in node.tags:
                yield name, node.span
