"""A recursive-descent reader for plain rule definitions, beside the LALR driver.

``syntax.lark`` defines the dialect, and :mod:`grammarkit.ebnf.lalr` parses any rule with its
tables. Most rules, though, are plain: literals, classes, references, groups, alternatives and
quantifiers, without macro calls, lookaheads or errors. For those the table-driven loop spends
three shift/reduce steps per token; this reader walks the same productions directly and calls
the same actions with the same children the LALR driver would give them, so both build the very
same tree. On anything else it returns ``None`` and the caller hands the rule to the LALR
driver, which parses it and reports its errors. ``tests/ebnf/test_fast_paths.py`` checks the two
agree on generated rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from grammarkit.ebnf.lalr import Action, Token

MAX_DEPTH = 100
"""Group nesting handled here; deeper rules go to the LALR driver, which needs no recursion."""

_LEAVES = {"STRING": "string", "CLASS": "char_class", "IDENT": "rule_ref"}
_SUFFIXES = {"STAR": "star", "PLUS": "plus", "QMARK": "optional"}


class _NotPlain(Exception):
    """The rule needs the LALR driver: a macro call, a lookahead, or a syntax error."""


class RuleReader:
    """Reads plain rule definitions with the parser's ``actions`` (one reader per table)."""

    def __init__(self, actions: Mapping[str, Action]):
        self.actions = actions
        self.leaves = {kind: actions[name] for kind, name in _LEAVES.items()}
        self.suffixes = {kind: actions[name] for kind, name in _SUFFIXES.items()}

    def read(self, tokens: Sequence[Token], context: Any) -> Any | None:
        """The value of ``actions["rule"]`` over ``tokens`` (one rule definition), or ``None``
        when the rule is not plain and the LALR driver must parse it."""
        if len(tokens) < 3 or tokens[0].type != "RULE_NAME" or tokens[1].type != "ASSIGN":
            return None
        try:
            body, at = _Reader(tokens, context, self).choices(2, 0)
        except _NotPlain:
            return None
        if at != len(tokens):
            return None
        first, last = tokens[0], tokens[-1]
        return self.actions["rule"](context, [first, tokens[1], body], first.start, last.end)


class _Reader:
    """One walk over one rule's tokens."""

    def __init__(self, tokens: Sequence[Token], context: Any, reader: RuleReader):
        self.tokens = tokens
        self.count = len(tokens)
        self.context = context
        self.actions = reader.actions
        self.leaves = reader.leaves
        self.suffixes = reader.suffixes

    def choices(self, at: int, depth: int) -> tuple[Any, int]:
        tokens, count = self.tokens, self.count
        first = at
        value, at = self.sequence(at, depth)
        if at == count or tokens[at].type != "PIPE":
            return value, at  # `choices: sequence` forwards its child
        children = [value]
        while at < count and tokens[at].type == "PIPE":
            children.append(tokens[at])
            value, at = self.sequence(at + 1, depth)
            children.append(value)
        span = tokens[first].start, tokens[at - 1].end
        return self.actions["choices"](self.context, children, *span), at

    def sequence(self, at: int, depth: int) -> tuple[Any, int]:
        """``sequence: item+``, each ``item: element quantifier?`` read in this one loop."""
        tokens, count, context, leaves = self.tokens, self.count, self.context, self.leaves
        suffixes, item = self.suffixes, self.actions["item"]
        first = at
        items = []
        while at < count:
            token = tokens[at]
            kind = token.type
            leaf = leaves.get(kind)
            if leaf is not None:
                element = leaf(context, [token], token.start, token.end)
                at += 1
            elif kind == "LPAR":
                element, at = self.group(at, depth)
            else:
                break
            if at < count:
                after = tokens[at]
                suffix = suffixes.get(after.type)
                if suffix is not None:
                    quantifier = suffix(context, [after], after.start, after.end)
                    element = item(context, [element, quantifier], token.start, after.end)
                    at += 1
                elif after.type == "LBRACE":
                    quantifier, at = self.braces(at)
                    element = item(context, [element, quantifier], token.start, tokens[at - 1].end)
            items.append(element)  # `item: element` forwards its child
        if not items:
            raise _NotPlain
        span = tokens[first].start, tokens[at - 1].end
        return self.actions["sequence"](context, items, *span), at

    def group(self, at: int, depth: int) -> tuple[Any, int]:
        tokens, count = self.tokens, self.count
        lpar = tokens[at]
        if depth == MAX_DEPTH:
            raise _NotPlain
        if at + 1 < count and tokens[at + 1].type == "RPAR":
            rpar = tokens[at + 1]
            return self.actions["empty_group"](self.context, [lpar, rpar], lpar.start, rpar.end), at + 2
        inner, at = self.choices(at + 1, depth + 1)
        if at == count or tokens[at].type != "RPAR":
            raise _NotPlain
        rpar = tokens[at]
        value = self.actions["group"](self.context, [lpar, inner, rpar], lpar.start, rpar.end)
        return value, at + 1

    def braces(self, at: int) -> tuple[Any, int]:
        """``{n}``, ``{n,}`` or ``{n,bound}``, as the ``quantifier`` productions read them."""
        tokens, count = self.tokens, self.count
        kinds = [tokens[k].type for k in range(at, min(at + 5, count))]
        children = list(tokens[at : at + len(kinds)])
        if kinds[:3] == ["LBRACE", "INT", "RBRACE"]:
            name, size = "exactly", 3
        elif kinds[:4] == ["LBRACE", "INT", "COMMA", "RBRACE"]:
            name, size = "at_least", 4
        elif kinds[:3] == ["LBRACE", "INT", "COMMA"] and kinds[3:] in (
            ["INT", "RBRACE"],
            ["IDENT", "RBRACE"],
        ):
            bound = children[3]
            children[3] = self.actions["bound"](self.context, [bound], bound.start, bound.end)
            name, size = "between", 5
        else:
            raise _NotPlain
        span = tokens[at].start, tokens[at + size - 1].end
        return self.actions[name](self.context, children[:size], *span), at + size
