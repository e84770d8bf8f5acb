"""Finite sets of words as prefix- and suffix-sharing expressions.

``enum`` lists can be long; listing every value as its own alternative repeats every shared
prefix and makes one huge rule. The words become a trie whose equal subtries are merged (a
minimal acyclic automaton, built bottom-up in linear time without recursion):
``"value-1" | "value-2"`` becomes ``"value-" [12]``, siblings whose continuations are equal
merge into one character set, a continuation shared by several prefixes becomes one rule, and
subtries beyond :data:`MAX_INLINE_NODES` become rules of their own so no rule grows unbounded.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from grammarkit.convert.json_schema.digits import choice, prefixed, sequence
from grammarkit.ebnf import ast

MAX_INLINE_NODES = 2000
"""Subtries with more nodes than this become rules of their own."""

MAX_SHARED_LENGTH = 256
"""Longer words are listed on their own (they rarely share prefixes)."""

SHARED_SUFFIX_NODES = 6
"""A continuation reached from several places becomes a rule when it has more nodes than this."""

_Signature = tuple[bool, tuple[tuple[int, tuple[str, ...]], ...]]
"""A merged trie node: whether a word ends there, and each continuation (by class) with the
characters that lead to it."""


def trie_expr(
    words: Iterable[str],
    spell: Callable[[tuple[str, ...]], ast.Expr],
    end: ast.Expr,
    new_rule: Callable[[ast.Expr], ast.Expr],
) -> ast.Expr:
    """An expression matching ``w`` followed by ``end``, for every word ``w``.

    ``spell(chars)`` is the expression for one character from ``chars``; ``new_rule`` turns a
    large or shared subexpression into a reference to a rule holding it.
    """
    children: list[dict[str, int]] = [{}]
    final = [False]
    alone: list[ast.Expr] = []
    for word in words:
        if len(word) > MAX_SHARED_LENGTH:
            alone.append(sequence([*(spell((char,)) for char in word), end]))
            continue
        node = 0
        for char in word:
            following = children[node].get(char)
            if following is None:
                following = children[node][char] = len(children)
                children.append({})
                final.append(False)
            node = following
        final[node] = True
    shared = [_merged(children, final, spell, end, new_rule)] if len(children) > 1 or (
        final[0]) else []
    return choice(shared + alone)


def _merged(
    children: list[dict[str, int]],
    final: list[bool],
    spell: Callable[[tuple[str, ...]], ast.Expr],
    end: ast.Expr,
    new_rule: Callable[[ast.Expr], ast.Expr],
) -> ast.Expr:
    """The expression of the trie rooted at node 0 (every child has a larger index than its
    parent, so one backward pass sees children first)."""
    classes: dict[_Signature, int] = {}
    signatures: list[_Signature] = []
    class_of = [0] * len(children)
    for node in reversed(range(len(children))):
        groups: dict[int, list[str]] = {}
        for char in sorted(children[node]):
            groups.setdefault(class_of[children[node][char]], []).append(char)
        signature = (final[node], tuple((cls, tuple(chars)) for cls, chars in groups.items()))
        found = classes.get(signature)
        if found is None:
            found = classes[signature] = len(signatures)
            signatures.append(signature)
        class_of[node] = found
    uses = [0] * len(signatures)
    for _, continuations in signatures:
        for cls, _chars in continuations:
            uses[cls] += 1
    exprs: list[ast.Expr] = []
    sizes: list[int] = []
    for cls, (ends, continuations) in enumerate(signatures):
        alternatives = [end] if ends else []
        size = 1
        for target, chars in continuations:
            alternatives.append(prefixed([spell(chars)], exprs[target]))
            size += sizes[target] + 1
        expr = choice(alternatives)
        if size > MAX_INLINE_NODES or (uses[cls] > 1 and size > SHARED_SUFFIX_NODES):
            expr, size = new_rule(expr), 1
        exprs.append(expr)
        sizes.append(size)
    return exprs[class_of[0]]

