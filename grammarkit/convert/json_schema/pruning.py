"""Pruning a converted grammar: rules that match nothing, and rules nothing reaches.

Whether a subschema allows any value is only known for sure once its rule is built (a
``contains`` whose schema contradicts ``items``, a required property whose schema is empty
deep down...). The emitter writes what it must, and this pass removes what turned out
impossible, so the grammar has no empty character class and no unused rule (it is lint-clean):
references to rules that derive no string become nothing, sequences containing nothing become
nothing, alternatives that are nothing are dropped, and the rules ``root`` no longer reaches go.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from grammarkit.convert.json_schema.digits import choice, is_nothing, sequence
from grammarkit.ebnf import ast

_NOTHING = ast.CharClass(())


def pruned(rules: tuple[ast.Rule, ...],
           productive_rules: Mapping[str, tuple[str, ...]]) -> tuple[ast.Rule, ...]:
    """``rules`` without what matches nothing or is unreachable from ``root``.

    ``productive_rules`` names rules the converter built to derive some string (automaton
    states, characters, property names), each with the rules it refers to, all of them in
    ``productive_rules`` too: their bodies are not walked (they are most of a large grammar).
    """
    by_name = {rule.name: rule for rule in rules}
    productive = _productive(by_name, productive_rules)
    if len(productive) < len(by_name):
        if "root" not in productive:
            return (ast.Rule("root", _NOTHING),)
        rules = tuple(rule if rule.name in productive_rules
                      else replace(rule, body=_without(rule.body, productive))
                      for rule in rules if rule.name in productive)
    return _reachable(rules, productive_rules)


def _productive(rules: dict[str, ast.Rule], given: Mapping[str, tuple[str, ...]]) -> set[str]:
    """The rules that derive some finite string (``given`` ones without looking), in time
    linear in the size of the other rules.

    Every expression node waits for a number of its children (all of a sequence's, one of a
    choice's, none of an optional repetition's; ``-1``: it never derives anything); a node
    that stops waiting tells its parent, a rule's body the references to the rule.
    """
    parents: list[list[int]] = []
    waiting: list[int] = []
    body_of: dict[int, list[str]] = {}
    references: dict[str, list[int]] = {}
    ready: list[int] = []
    # An expression object used in several places (the converter shares entries and inlined
    # states) is one node with several parents: the work is the grammar's size as built, not
    # as written out.
    nodes: dict[int, int] = {}

    def node(above: int, count: int) -> int:
        parents.append([above])
        waiting.append(count)
        if count == 0:
            ready.append(len(parents) - 1)
        return len(parents) - 1

    body_of[node(-1, 0)] = [name for name in rules if name in given]
    for name, rule in rules.items():
        if name in given:
            continue
        stack: list[tuple[ast.Expr, int]] = [(rule.body, -1)]
        while stack:
            expr, above = stack.pop()
            known = nodes.get(id(expr))
            if known is not None:
                if above == -1:
                    body_of.setdefault(known, []).append(name)
                else:
                    parents[known].append(above)
                continue
            # Terminals decide at once: a sequence waits only for its other items, a choice
            # with a matching terminal (or an optional repetition) waits for nothing.
            if isinstance(expr, ast.Sequence):
                inner = [item for item in expr.items if not _terminal(item)]
                if any(is_nothing(item) for item in expr.items if _terminal(item)):
                    here = node(above, -1)
                else:
                    here = node(above, len(inner))
                    stack.extend((item, here) for item in inner)
            elif isinstance(expr, ast.Choice):
                if any(_terminal(item) and not is_nothing(item) for item in expr.alternatives):
                    here = node(above, 0)
                else:
                    inner = [item for item in expr.alternatives if not _terminal(item)]
                    here = node(above, 1 if inner else -1)
                    stack.extend((item, here) for item in inner)
            elif isinstance(expr, ast.Repeat):
                here = node(above, 0 if expr.min == 0 else 1)
                if expr.min:
                    stack.append((expr.item, here))
            elif isinstance(expr, ast.RuleRef):
                here = node(above, 1)
                references.setdefault(expr.name, []).append(here)
            else:
                here = node(above, -1 if is_nothing(expr) else 0)
            nodes[id(expr)] = here
            if above == -1:
                body_of.setdefault(here, []).append(name)
    found: set[str] = set()
    while ready:
        done = ready.pop()
        for rule_name in body_of.get(done, ()):
            if rule_name not in found:
                found.add(rule_name)
                for reference in references.get(rule_name, ()):
                    if waiting[reference] == 1:
                        waiting[reference] = 0
                        ready.append(reference)
        for above in parents[done]:
            if above >= 0 and waiting[above] > 0:
                waiting[above] -= 1
                if waiting[above] == 0:
                    ready.append(above)
    return found


def _terminal(expr: ast.Expr) -> bool:
    """Whether ``expr`` derives strings (or nothing) by itself, without rules."""
    return not isinstance(expr, (ast.Sequence, ast.Choice, ast.Repeat, ast.RuleRef))


def _without(expr: ast.Expr, productive: set[str]) -> ast.Expr:
    """``expr`` with references to unproductive rules removed (and what they emptied)."""
    if isinstance(expr, ast.RuleRef):
        return expr if expr.name in productive else _NOTHING
    if isinstance(expr, ast.Sequence):
        return sequence([_without(item, productive) for item in expr.items])
    if isinstance(expr, ast.Choice):
        return choice([_without(item, productive) for item in expr.alternatives])
    if isinstance(expr, ast.Repeat):
        item = _without(expr.item, productive)
        if is_nothing(item):
            return ast.Literal("") if expr.min == 0 else _NOTHING
        return expr if item is expr.item else ast.Repeat(item, expr.min, expr.max, expr.op)
    return expr


def _reachable(rules: tuple[ast.Rule, ...],
               known: Mapping[str, tuple[str, ...]]) -> tuple[ast.Rule, ...]:
    """The rules ``root`` reaches, in order (those of ``known`` refer to the rules listed)."""
    by_name = {rule.name: rule for rule in rules}
    reached = {"root"}
    pending = ["root"]
    walked: set[int] = set()  # expression objects used in several places are walked once
    while pending:
        name = pending.pop()
        references = known.get(name)
        if references is not None:
            for target in references:
                if target not in reached:
                    reached.add(target)
                    pending.append(target)
            continue
        stack = [by_name[name].body]
        while stack:
            expr = stack.pop()
            if isinstance(expr, ast.RuleRef):
                name = expr.name
                if name not in reached and name in by_name:
                    reached.add(name)
                    pending.append(name)
            elif not _terminal(expr) and id(expr) not in walked:
                walked.add(id(expr))
                stack.extend(ast.children(expr))
    return tuple(rule for rule in rules if rule.name in reached)
