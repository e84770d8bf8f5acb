"""Finite sets of words as prefix-sharing expressions.

``enum`` lists can be long; listing every value as its own alternative repeats every shared
prefix and makes one huge rule. A trie shares the prefixes (``"value-1" | "value-2"`` becomes
``"value-" [12]``): siblings whose continuations are equal merge into one character set, and
subtries beyond :data:`MAX_INLINE_NODES` become rules of their own so no rule grows unbounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from grammarkit.convert.json_schema.digits import choice, sequence
from grammarkit.ebnf import ast

MAX_INLINE_NODES = 2000
"""Subtries with more nodes than this become rules of their own."""

MAX_SHARED_LENGTH = 256
"""Longer words are listed on their own (they rarely share prefixes; this bounds recursion)."""

Trie = dict[str, "Trie"]

_END = ""


def trie_expr(
    words: Iterable[str],
    spell: Callable[[tuple[str, ...]], ast.Expr],
    end: ast.Expr,
    new_rule: Callable[[ast.Expr], ast.Expr],
) -> ast.Expr:
    """An expression matching ``w`` followed by ``end``, for every word ``w``.

    ``spell(chars)`` is the expression for one character from ``chars``; ``new_rule`` turns a
    large subexpression into a reference to a rule holding it.
    """
    root: Trie = {}
    alone: list[ast.Expr] = []
    for word in words:
        if len(word) > MAX_SHARED_LENGTH:
            alone.append(sequence([*(spell((char,)) for char in word), end]))
            continue
        node = root
        for char in word:
            node = node.setdefault(char, {})
        node[_END] = {}
    shared = [_build(root, spell, end, new_rule)[0]] if root else []
    return choice(shared + alone)


def _build(
    node: Trie,
    spell: Callable[[tuple[str, ...]], ast.Expr],
    end: ast.Expr,
    new_rule: Callable[[ast.Expr], ast.Expr],
) -> tuple[ast.Expr, int]:
    """The expression for the words below ``node`` and its size in trie nodes."""
    continuations: dict[ast.Expr, list[str]] = {}
    size = 0
    for char in sorted(node):
        if char == _END:
            continuations.setdefault(end, []).append(_END)
            size += 1
            continue
        rest, rest_size = _build(node[char], spell, end, new_rule)
        if rest_size > MAX_INLINE_NODES:
            rest, rest_size = new_rule(rest), 1
        continuations.setdefault(rest, []).append(char)
        size += rest_size + 1
    alternatives = []
    for rest, chars in continuations.items():
        if chars == [_END]:
            alternatives.append(rest)
        else:
            letters = tuple(c for c in chars if c != _END)
            alternatives.append(sequence([spell(letters), rest]))
            if _END in chars:
                alternatives.append(end)
    return choice(alternatives), size
