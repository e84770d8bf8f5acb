"""The EBNF abstract syntax tree: immutable nodes, each carrying its source span.

Every front-end (the EBNF parser, the JSON Schema and regex converters) produces this tree;
every later stage (analysis, printing, compilation to automata) consumes it.
Spans are character offsets into the source text; converters that have no source text leave
them ``None``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, NamedTuple, TypeVar

_Node = TypeVar("_Node")


def _fast_init(cls: type[_Node]) -> type[_Node]:
    """Give a frozen, slotted dataclass an ``__init__`` that writes its slots directly.

    The generated one goes through ``object.__setattr__`` per field, twice as slow; parsing a
    1 MB grammar builds several hundred thousand nodes and spans, so the difference shows.
    Signature, defaults, equality, hashing and immutability are the dataclass's own.
    """
    params, lines, scope = [], [], {}
    for f in fields(cls):  # type: ignore[arg-type]
        scope[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        if f.default is MISSING:
            params.append(f.name)
        else:
            scope[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        lines.append(f"    _set_{f.name}(self, {f.name})")
    namespace: dict[str, Any] = {}
    source = f"def __init__(self, {', '.join(params)}):\n" + "\n".join(lines)
    exec(source, scope, namespace)  # noqa: S102 - as dataclasses does; built from field names
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


class Span(NamedTuple):
    """A half-open range ``[start, end)`` of character offsets into a source text.

    A named tuple: parsing a 1 MB grammar makes several hundred thousand spans, and the
    readers' loops build them as ``tuple.__new__(Span, (start, end))``, with no Python frame,
    eight times faster than a dataclass's ``__init__``.
    """

    start: int
    end: int


@_fast_init
@dataclass(frozen=True, slots=True)
class Literal:
    """A string literal: the code points it matches, in order (``""`` matches empty)."""

    value: str
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class CharClass:
    """One code point from inclusive ``ranges`` (or outside them when ``negated``)."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class RuleRef:
    """A reference to the rule called ``name``."""

    name: str
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Sequence:
    """Juxtaposition; the empty sequence (``()``) matches the empty string."""

    items: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Choice:
    """Alternation ``a | b | ...``."""

    alternatives: tuple[Expr, ...]
    span: Span | None = field(default=None, compare=False)


@_fast_init
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


@_fast_init
@dataclass(frozen=True, slots=True)
class TagDispatch:
    """``TagDispatch(("tag", rule), ..., loop_after_dispatch=..., excludes=(...))``."""

    tags: tuple[tuple[str, str], ...]
    loop_after_dispatch: bool = True
    excludes: tuple[str, ...] = ()
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class TokenSet:
    """``Token(id, ...)`` (one of the ids) or ``ExcludeToken(id, ...)`` (any other token)."""

    ids: tuple[int, ...]
    exclude: bool = False
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class TokenTagDispatch:
    """``TokenTagDispatch((id, rule), ..., loop_after_dispatch=..., excludes=(id, ...))``."""

    tags: tuple[tuple[int, str], ...]
    loop_after_dispatch: bool = True
    excludes: tuple[int, ...] = ()
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class RegexMacro:
    """``Regex("pattern", json_string=false, flags="...")``: an embedded regular expression."""

    pattern: str
    json_string: bool = False
    flags: str | None = None
    """``None`` when the call names no flags: then ``.`` matches newlines, while ``flags=""``
    makes it ``[^\\n]`` as any flags without ``s`` do (xgrammar 0.2.8)."""
    span: Span | None = field(default=None, compare=False)


@_fast_init
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


@_fast_init
@dataclass(frozen=True, slots=True)
class Attribute:
    """A rule attribute ``name[key=value]``; ``value`` is ``None`` for a bare flag."""

    key: str
    value: int | float | str | bool | None
    span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Rule:
    """``name ::= body (= lookahead)``."""

    name: str
    body: Expr
    lookahead: Expr | None = None
    attributes: tuple[Attribute, ...] = ()
    span: Span | None = field(default=None, compare=False)
    name_span: Span | None = field(default=None, compare=False)


@_fast_init
@dataclass(frozen=True, slots=True)
class Comment:
    """A ``#`` comment (text without the ``#``), kept so the formatter can reprint it."""

    text: str
    span: Span


@_fast_init
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
