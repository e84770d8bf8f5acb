"""Export a grammar as Lark text, for Lark's Earley parser and for llguidance.

The root rule becomes ``start``; other names are lower-cased and limited to ``[a-z0-9_]``.
Literals become Lark strings, classes one-character regular expressions (``/[a-z]/``) written in
the syntax Python's ``re`` and Rust's ``regex`` share, and ``{m,n}`` becomes ``~ m..n``. Nothing
is ``%ignore``d, so whitespace is matched exactly as written. Repetitions Lark would copy into
their rule as alternatives (``x ~ 2..5``, ``(a b)?``) become rules of their own (``_repeat``,
``_repeat_2``, ...), which keeps Lark's grammar analysis fast.

Rule lookaheads and attributes but ``lazy`` have no effect on the language and are dropped;
``Regex("...")`` macros are expanded; ``lazy`` rules (which end at their first match),
``TagDispatch``, ``TokenTagDispatch``, ``Substring`` and the token macros have no Lark
equivalent and are reported as GK140. Only the rules reachable from the root are
written.

llguidance lexes each string literal greedily, as a whole: a grammar where a literal and a longer
one can both start at the same place (``("a" | "ab") "bc"``) may accept less there than here.
"""

from __future__ import annotations

import re

from grammarkit.convert.gbnf import ATOM, ExpressionWriter, scalar_ranges
from grammarkit.convert.regex import MAX_CODEPOINT
from grammarkit.ebnf import ast


def to_lark(grammar: ast.GrammarAST, root: str) -> str:
    """``grammar`` as Lark text whose ``start`` rule is ``root``.

    Raises
    ------
    GrammarError
        GK140 for constructs Lark can't express, GK103/GK105 for undefined rules or a missing
        root.
    """
    return _LarkWriter(grammar, root).write()


_STRING_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x0C: "\\f", 0x22: '\\"', 0x5C: "\\\\"}
_CLASS_SPECIALS = frozenset("\\]^-[&~|/")


def _code_point(cp: int) -> str:
    """``\\xHH``, ``\\uHHHH`` or ``\\UHHHHHHHH``: understood by Lark strings, ``re`` and ``regex``."""
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _printable(cp: int) -> bool:
    return chr(cp).isprintable() and not 0xD800 <= cp <= 0xDFFF


def _string_char(cp: int) -> str:
    if cp in _STRING_ESCAPES:
        return _STRING_ESCAPES[cp]
    return chr(cp) if _printable(cp) else _code_point(cp)


def _class_char(cp: int) -> str:
    c = chr(cp)
    if c in _CLASS_SPECIALS:
        return "\\" + c
    return c if _printable(cp) else _code_point(cp)


def _multiplies(repeat: ast.Repeat) -> bool:
    """Whether Lark would copy ``repeat`` into its rule as alternatives, multiplying the rule's
    size with every other such part (``x ~ 2..5``, or ``(a b)?``), rather than make a rule of it.

    Such repetitions are written as rules of their own, keeping Lark's grammar analysis fast.
    """
    if repeat.max is None or repeat.max == repeat.min:
        return False
    optional_atom = repeat.max == 1 and repeat.min == 0 and isinstance(
        repeat.item, (ast.Literal, ast.CharClass, ast.RuleRef))
    return not optional_atom


class _LarkWriter(ExpressionWriter):
    target = "Lark"
    root_name = "start"
    assign = ": "

    def __init__(self, grammar: ast.GrammarAST, root: str):
        super().__init__(grammar, root)
        self.helpers: list[tuple[str, ast.Repeat]] = []
        """Repetitions moved into rules of their own, still to be written."""

    def extra_rules(self) -> list[str]:
        lines = []
        for name, repeat in self.helpers:  # grows while it is written
            lines.append(f"{name}{self.assign}{self.expression(repeat.item, ATOM)}"
                         f"{self.quantifier(repeat)}")
        return lines

    def mangle(self, name: str) -> str:
        base = re.sub(r"[^a-z0-9_]", "_", name.lower())
        return "r" + base if base[:1].isdigit() or base.startswith("__") else base

    def unique(self, base: str, k: int) -> str:
        return f"{base}_{k}"

    def adapt(self, expr: ast.Expr) -> ast.Expr:
        if isinstance(expr, ast.TokenSet):
            macro = "ExcludeToken" if expr.exclude else "Token"
            return self.unsupported(expr, f"`{macro}`",
                                    "token-level constraints need a token-aware engine; match "
                                    "the token's text instead")
        if isinstance(expr, ast.Repeat) and expr.max is None and expr.min > 1:
            exactly = ast.Repeat(expr.item, expr.min, expr.min, "{}", expr.span)
            return ast.Sequence((exactly, ast.Repeat(expr.item, 0, None, "*", expr.span)),
                                expr.span)
        if isinstance(expr, ast.Repeat) and _multiplies(expr):
            name = self.fresh("_repeat")
            key = " " + name  # no rule of the grammar can be called that
            self.names[key] = name
            self.helpers.append((name, expr))
            return ast.RuleRef(key, expr.span)
        return expr

    def atom(self, expr: ast.Expr) -> str:
        if isinstance(expr, ast.Literal):
            if not expr.value:
                return "()"
            return '"' + "".join(_string_char(ord(c)) for c in expr.value) + '"'
        if isinstance(expr, ast.CharClass):
            return f"/{self._class_pattern(expr)}/"
        if isinstance(expr, ast.RuleRef):
            return self.names[expr.name]
        raise TypeError(f"cannot write {type(expr).__name__} as Lark")

    def _class_pattern(self, expr: ast.CharClass) -> str:
        ranges = scalar_ranges(expr.ranges)
        if ranges == ((0, MAX_CODEPOINT),) and not expr.negated or not ranges and expr.negated:
            return "(?s:.)"
        if not ranges:
            return f"[^\\x00-{_code_point(MAX_CODEPOINT)}]"
        body = "".join(
            _class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}"
            for low, high in ranges
        )
        return f"[{'^' if expr.negated else ''}{body}]"

    def quantifier(self, repeat: ast.Repeat) -> str:
        low, high = repeat.min, repeat.max
        short = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
        if short:
            return short
        return f" ~ {low}" if low == high else f" ~ {low}..{high}"
