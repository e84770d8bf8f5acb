"""The ``Regex("pattern", json_string=..., flags=...)`` macro as an ordinary expression.

The pattern is parsed by :func:`grammarkit.convert.regex.regex_to_ast` in its ``xgrammar``
flavor (JavaScript syntax as xgrammar's regex front-end reads it); then, as xgrammar 0.2.8 does:

* ``flags="i"`` makes ASCII letters match either case (``é`` stays case-sensitive), and so does
  ``(?i)`` at the very start of the pattern (but it is no flag for the rule on ``.`` below);
* ``.`` matches any character, newlines included, unless flags are given without ``s`` (even
  ``flags=""``): then it is ``[^\\n]`` (xgrammar rewrites the pattern so); ``u`` changes nothing;
  other flags are errors;
* ``json_string=true`` removes ``"``, ``\\`` and the control characters U+0000..U+001F from
  every class and literal, so the pattern can sit inside a JSON string unescaped;
* a class range that crosses into the 3-byte (or 4-byte) UTF-8 lengths also accepts the overlong
  sequences ``E0 80 80``..``E0 9F BF`` (``F0 80 80 80``..``F0 8F BF BF``): xgrammar's regex
  automata start such a range at the lowest byte sequence of that length. So ``.`` and ``[^a]``
  accept them while the same classes in EBNF do not (:func:`regex_class_sequences`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from grammarkit.automata import utf8
from grammarkit.diagnostics import Diagnostic, GrammarError, error
from grammarkit.ebnf import ast

JSON_FORBIDDEN: utf8.CodepointRanges = ((0x00, 0x1F), (0x22, 0x22), (0x5C, 0x5C))
"""What a ``json_string`` regex may never match: the characters JSON strings must escape."""

_SUPPORTED_FLAGS = frozenset("isu")
_INLINE_IGNORE_CASE = "(?i)"


def check_regex_macros(macros: Iterable[ast.RegexMacro]) -> list[Diagnostic]:
    """The errors of each ``Regex(...)`` call in ``macros``, each located at its call.

    Run when a grammar is parsed (on :attr:`ParseResult.regex_macros`), so ``lint`` reports a
    bad pattern instead of a later ``matches`` raising.
    """
    found: list[Diagnostic] = []
    for node in macros:
        try:
            expand_regex(node)
        except GrammarError as exc:
            found.extend(exc.diagnostics)
    return found


def expand_regex(node: ast.RegexMacro) -> ast.Expr:
    """The expression matching what the macro matches.

    Raises
    ------
    GrammarError
        For an unsupported flag or an invalid pattern, located at the macro.
    """
    from grammarkit.convert.regex import regex_to_ast

    unsupported = sorted(set(node.flags or "") - _SUPPORTED_FLAGS)
    if unsupported:
        raise GrammarError([error(
            "GK112", f"regular-expression flag `{unsupported[0]}` is not supported", node.span,
            "xgrammar accepts only the flags `i`, `s` and `u`")])
    pattern, flags = node.pattern, node.flags
    ignore_case = flags is not None and "i" in flags
    if pattern.startswith(_INLINE_IGNORE_CASE):
        pattern, ignore_case = pattern[len(_INLINE_IGNORE_CASE) :], True
    if flags is not None and "s" not in flags:
        pattern = _dot_excludes_newline(pattern)
    try:
        expr = regex_to_ast(pattern, flavor="xgrammar")
    except GrammarError as exc:
        first = next((d for d in exc.diagnostics if d.is_error), None)
        message = first.message if first is not None else str(exc)
        code = first.code if first is not None else "GK112"
        raise GrammarError([error(code, f"invalid Regex pattern: {message}", node.span,
                                  first.hint if first is not None else None)]) from exc
    if ignore_case:
        expr = _map_leaves(expr, _ignore_case)
    if node.json_string:
        expr = _map_leaves(expr, _forbid_json_specials)
    return expr


_OVERLONG: tuple[tuple[int, int, utf8.ByteSequence], ...] = (
    (0x7FF, 0x800, ((0xE0, 0xE0), (0x80, 0x9F), (0x80, 0xBF))),
    (0xFFFF, 0x10000, ((0xF0, 0xF0), (0x80, 0x8F), (0x80, 0xBF), (0x80, 0xBF))),
)


def regex_class_sequences(codepoints: utf8.CodepointRanges) -> list[utf8.ByteSequence]:
    """The byte sequences a class inside ``Regex(...)`` matches (see the module docstring)."""
    sequences = utf8.byte_sequences(codepoints)
    for below, above, overlong in _OVERLONG:
        if any(lo <= below and hi >= above for lo, hi in codepoints):
            sequences.append(overlong)
    return sequences


def _dot_excludes_newline(pattern: str) -> str:
    """``pattern`` with every ``.`` outside a class replaced by ``[^\\n]``."""
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif char == "." and not in_class:
            char = "[^\\n]"
        out.append(char)
        i += 1
    return "".join(out)


def _map_leaves(expr: ast.Expr,
                leaf: Callable[[ast.Literal | ast.CharClass], ast.Expr]) -> ast.Expr:
    """``expr`` with every literal and class replaced by ``leaf(node)``, iteratively."""
    results: list[ast.Expr] = []
    stack: list[tuple[ast.Expr, bool]] = [(expr, False)]
    while stack:
        node, ready = stack.pop()
        kids = ast.children(node)
        if not kids:
            results.append(leaf(node) if isinstance(node, (ast.Literal, ast.CharClass)) else node)
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((kid, False) for kid in reversed(kids))
            continue
        new = tuple(results[len(results) - len(kids):])
        del results[len(results) - len(kids):]
        if isinstance(node, ast.Sequence):
            results.append(replace(node, items=new))
        elif isinstance(node, ast.Choice):
            results.append(replace(node, alternatives=new))
        else:
            assert isinstance(node, ast.Repeat)
            results.append(replace(node, item=new[0]))
    return results[0]


def _ignore_case(node: ast.Literal | ast.CharClass) -> ast.Expr:
    if isinstance(node, ast.Literal):
        items = tuple(_ignore_case(ast.CharClass(((ord(c), ord(c)),), False, node.span))
                      for c in node.value)
        return ast.Sequence(items, node.span) if len(items) != 1 else items[0]
    ranges = utf8.normalize(node.ranges)
    folded = list(ranges)
    for lo, hi in ranges:
        for a, z, shift in ((0x41, 0x5A, 0x20), (0x61, 0x7A, -0x20)):
            if lo <= z and hi >= a:
                folded.append((max(lo, a) + shift, min(hi, z) + shift))
    return ast.CharClass(utf8.normalize(folded), node.negated, node.span)


def _forbid_json_specials(node: ast.Literal | ast.CharClass) -> ast.Expr:
    if isinstance(node, ast.Literal):
        if any(lo <= ord(c) <= hi for c in node.value for lo, hi in JSON_FORBIDDEN):
            return ast.CharClass((), False, node.span)
        return node
    allowed = utf8.class_codepoints(node.ranges, node.negated)
    return ast.CharClass(_subtract(allowed, JSON_FORBIDDEN), False, node.span)


def _subtract(ranges: utf8.CodepointRanges, removed: utf8.CodepointRanges) -> utf8.CodepointRanges:
    kept = utf8.complement(removed)
    result = []
    for lo, hi in ranges:
        for klo, khi in kept:
            if klo <= hi and khi >= lo:
                result.append((max(lo, klo), min(hi, khi)))
    return utf8.normalize(result)
