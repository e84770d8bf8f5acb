r"""JSON Schema ``pattern``\ s: ECMA-262 regular expressions with search semantics.

A pattern matches a string when it matches *somewhere in it*, so each top-level alternative is
padded with "any text" on every side it does not anchor with ``^`` or ``$``. Two ECMA-262
meanings differ from the regex converter's (which follows xgrammar): ``.`` does not match line
terminators and ``\s`` is the full Unicode white-space set; both are rewritten before
conversion. The result reads code points, not JSON text: :mod:`.json_text` adds the escapes.
"""

from __future__ import annotations

from itertools import pairwise

from grammarkit.convert.json_schema.automata import SCALARS
from grammarkit.convert.json_schema.digits import choice, sequence
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf import ast

ANY_TEXT = ast.Repeat(ast.CharClass(SCALARS), 0, None, "*")
"""Any string of code points."""

_LINE_TERMINATORS = "\\n\\r\\u2028\\u2029"
_SPACE = (
    "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_DOT = f"[^{_LINE_TERMINATORS}]"


class UnsupportedPattern(ValueError):
    """The pattern can't be converted; the message says why."""


def pattern_expr(source: str) -> ast.Expr:
    """The code-point strings in which ECMA-262 ``source`` finds a match.

    Raises
    ------
    UnsupportedPattern
        For syntax errors and constructs no grammar can express (lookaround, backreferences,
        word boundaries, Unicode property classes, anchors inside groups).
    """
    from grammarkit.convert.regex import regex_to_ast

    alternatives = []
    for branch in _top_level_branches(source):
        anchored_start = branch.startswith("^")
        body = branch[1:] if anchored_start else branch
        anchored_end = _ends_with_anchor(body)
        if anchored_end:
            body = body[:-1]
        rewritten = _ecma_rewrite(body)
        try:
            expr = regex_to_ast(rewritten, "ecma") if rewritten else ast.Literal("")
        except GrammarError as exc:
            raise UnsupportedPattern(_first_message(exc)) from None
        alternatives.append(sequence([
            ast.Literal("") if anchored_start else ANY_TEXT,
            expr,
            ast.Literal("") if anchored_end else ANY_TEXT,
        ]))
    return choice(alternatives)


def _first_message(exc: GrammarError) -> str:
    errors = [d for d in exc.diagnostics if d.is_error] or exc.diagnostics
    return errors[0].message if errors else str(exc)


def _scan(source: str) -> list[tuple[int, str]]:
    """The pattern's significant characters with their depth: ``(index, kind)`` where kind is
    ``"|"``, ``"^"``, ``"$"`` (outside classes, unescaped) or ``"("`` / ``")"``."""
    marks = []
    index = 0
    in_class = False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            if char == "]":
                in_class = False
        elif char == "[":
            in_class = True
            if source.startswith("[^", index):
                index += 1
        elif char in "|^$()":
            marks.append((index, char))
        index += 1
    return marks


def _top_level_branches(source: str) -> list[str]:
    """``source`` split at its top-level ``|``; anchors anywhere but at a branch's ends are
    refused (a grammar can't express them)."""
    depth = 0
    cuts = [-1]
    for index, kind in _scan(source):
        if kind == "(":
            depth += 1
        elif kind == ")":
            depth = max(0, depth - 1)
        elif kind == "|" and depth == 0:
            cuts.append(index)
    cuts.append(len(source))
    branches = [source[start + 1 : end] for start, end in pairwise(cuts)]
    for branch in branches:
        inner = branch.removeprefix("^")
        if _ends_with_anchor(inner):
            inner = inner[:-1]
        if any(kind in "^$" for _, kind in _scan(inner)):
            raise UnsupportedPattern("an anchor (^ or $) inside a group or a branch can't be "
                                     "expressed in a grammar")
    return branches


def _ends_with_anchor(branch: str) -> bool:
    """Whether ``branch`` ends with an unescaped ``$`` outside a class."""
    marks = _scan(branch)
    return bool(marks) and marks[-1] == (len(branch) - 1, "$")


def _ecma_rewrite(body: str) -> str:
    """``body`` with ``.``, ``\\s`` and ``\\S`` spelled out with their ECMA-262 meaning."""
    out = []
    index = 0
    in_class = False
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            escaped = body[index + 1]
            if escaped == "s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            elif escaped == "S":
                if in_class:
                    raise UnsupportedPattern("\\S inside a character class isn't supported")
                out.append(f"[^{_SPACE}]")
            else:
                out.append(body[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if body.startswith("[^", index) or body.startswith("[]", index):
                out.append(body[index : index + 2])
                index += 2
                continue
        elif char == ".":
            out.append(_DOT)
            index += 1
            continue
        out.append(char)
        index += 1
    return "".join(out)
