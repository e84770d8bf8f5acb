"""A lean LALR(1) driver over the tables Lark builds from ``syntax.lark``, without parse trees.

Lark stays the dialect's one definition: it reads ``syntax.lark`` and computes the LALR tables.
Lark's own parser then builds a ``Tree`` per reduction and computes its source positions, which
for a 1 MB grammar cost several seconds; this driver runs the same tables and hands each
reduction straight to a callback that builds the AST node, with the span of the tokens it
covers. Lark's ``x*``/``x+`` helper rules (``__name_star_0``) are inlined as Lark inlines them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol


class Token(Protocol):
    """What the driver needs of a token: its kind and its character offsets."""

    type: str
    start: int
    end: int


Action = Callable[[Any, list[Any], int, int], Any]
"""``action(context, children, start, end)``: the value of a rule over ``children`` (tokens and
earlier values) covering text ``[start, end)``; ``context`` is what :meth:`Parser.parse` got."""


@dataclass(frozen=True, slots=True)
class _Reduction:
    goto: str  # the nonterminal pushed
    size: int
    spliced: tuple[bool, ...] | None  # per child: a helper list to splice (None: no helpers)
    action: Action | None  # None for Lark's `__x_star_n` helpers, whose value is their list


class SyntaxErrorAt(Exception):
    """The parser cannot go on at ``token``; ``expected`` are the token kinds it could take."""

    def __init__(self, token: Any, expected: set[str]):
        super().__init__(f"unexpected {token.type}")
        self.token = token
        self.expected = expected


class EndOfInput:
    """The ``$END`` marker fed after the last token, positioned at the end of the last one."""

    type = "$END"
    value = ""

    def __init__(self, at: int):
        self.start = self.end = at


@dataclass(frozen=True)
class Parser:
    """The LALR action table: per state, per token kind, a shift (``int``) or a reduction."""

    actions: dict[int, dict[str, int | _Reduction]]
    start_states: dict[str, int]
    end_states: dict[str, int]

    def parse(self, tokens: Sequence[Token], start: str, context: Any) -> Any:
        """Parse ``tokens`` from rule ``start``; raises :class:`SyntaxErrorAt`."""
        actions = self.actions
        end_state = self.end_states[start]
        states = [self.start_states[start]]
        values: list[Any] = []
        starts: list[int] = []
        ends: list[int] = []
        end = EndOfInput(tokens[-1].end if tokens else 0)
        for token in (*tokens, end):
            kind = token.type
            while True:
                row = actions[states[-1]]
                step = row.get(kind)
                if step is None:
                    raise SyntaxErrorAt(token, {k for k in row if k.isupper()})
                if step.__class__ is int:
                    states.append(step)
                    values.append(token)
                    starts.append(token.start)
                    ends.append(token.end)
                    break
                rule: _Reduction = step  # type: ignore[assignment]
                build = rule.action
                if rule.size == 1 and rule.spliced is None:
                    # most reductions: rewrite the top of the stacks in place
                    if build is None:
                        value = [values[-1]]
                    else:
                        value = build(context, [values[-1]], starts[-1], ends[-1])
                    goto = actions[states[-2]][rule.goto]  # a goto is always a state
                    states[-1] = goto  # type: ignore[assignment]
                    values[-1] = value
                else:
                    size = rule.size
                    children = values[-size:]
                    first, last = starts[-size], ends[-1]
                    del states[-size:], values[-size:], starts[-size:], ends[-size:]
                    if rule.spliced is not None:
                        # a left-recursive helper grows its own list in place (not quadratic)
                        flat: list[Any] = children[0] if build is None and rule.spliced[0] else []
                        for child, splice in zip(children, rule.spliced):
                            if child is flat:
                                continue
                            if splice:
                                flat.extend(child)
                            else:
                                flat.append(child)
                        children = flat
                    value = children if build is None else build(context, children, first, last)
                    goto = actions[states[-1]][rule.goto]
                    states.append(goto)  # type: ignore[arg-type]
                    values.append(value)
                    starts.append(first)
                    ends.append(last)
                if kind == "$END" and goto == end_state:
                    return value
        raise AssertionError("unreachable: $END either reduces to the start rule or fails")


def parser(actions: Mapping[str, Action]) -> Parser:
    """A parser for ``syntax.lark`` whose reductions call ``actions[alias or rule name]``."""
    return _parser(tuple(actions.items()))


@lru_cache(maxsize=4)
def _parser(named_actions: tuple[tuple[str, Action], ...]) -> Parser:
    """Lark computes the tables (and caches its analysis on disk, so this is fast).

    Lark is imported here, not with the module: a grammar of plain rules never needs the
    tables (see :mod:`grammarkit.ebnf.descent`), and a pre-commit hook saves the import.
    """
    from importlib import resources

    from lark import Lark
    from lark.parsers.lalr_analysis import Shift

    from grammarkit.ebnf.lark_feed import TokenFeed

    actions_by_name = dict(named_actions)
    source = resources.files("grammarkit.ebnf").joinpath("syntax.lark").read_text("utf-8")
    lark = Lark(
        source, parser="lalr", lexer=TokenFeed, start=["rule", "macro_call"], cache=True
    )
    table = lark.parser.parser.parser.parse_table
    reductions: dict[int, _Reduction] = {}

    def reduction(rule: Any) -> _Reduction:
        if id(rule) not in reductions:
            symbols = [s.name for s in rule.expansion]
            spliced = tuple(s.startswith("__") for s in symbols)
            helper = rule.origin.name.startswith("__")
            name = rule.alias or rule.origin.name
            reductions[id(rule)] = _Reduction(
                goto=rule.origin.name,
                size=len(symbols),
                spliced=spliced if any(spliced) else None,
                action=None if helper else actions_by_name[name],
            )
        return reductions[id(rule)]

    actions: dict[int, dict[str, int | _Reduction]] = {}
    for state, row in table.states.items():
        actions[state] = {
            kind: arg if action is Shift else reduction(arg) for kind, (action, arg) in row.items()
        }
    return Parser(actions, dict(table.start_states), dict(table.end_states))
