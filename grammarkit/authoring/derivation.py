"""One derivation of an accepted text, over the grammar's AST (for grammar coverage).

The recognizer in :mod:`grammarkit.automata` decides membership on automata in which the AST's
alternatives are merged; coverage needs to know *which* alternative, repetition branch and
character-class range a text used. :class:`Deriver` computes, for every expression and start
offset, the set of offsets where the expression can end (memoized; left recursion by growing a
seed to a fixed point), then walks one derivation from the root over the whole text, reporting
each step to a :class:`Visitor`.

Lookaheads and rule attributes are ignored (they only narrow the language, so a text the
recognizer accepts still has a derivation here). ``Token(...)`` never matches text. ``Regex``,
``TagDispatch`` and ``Substring`` are matched as opaque leaves through the real recognizer.
Texts are matched as code points.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from grammarkit._recursion import deep_recursion
from grammarkit.ebnf import ast

MAX_STEPS = 2_000_000
"""Memo entries one derivation may compute before it gives up (:class:`DerivationTooLarge`)."""


class DerivationTooLarge(Exception):
    """The text is too long or the grammar too ambiguous for a derivation within the budget."""


class Visitor(Protocol):
    """Receives each step of a derivation."""

    def alternative(self, choice: ast.Choice, index: int) -> None:
        """Alternative ``index`` of ``choice`` was used."""

    def repetition(self, repeat: ast.Repeat, count: int) -> None:
        """``repeat``'s item was matched ``count`` times."""

    def char_range(self, node: ast.CharClass, index: int | None) -> None:
        """Range ``index`` of ``node`` matched a character (``None`` for a negated class)."""


Ends = frozenset[int]


class Deriver:
    """Finds one derivation of a text from a grammar's root (see the module docstring)."""

    def __init__(self, grammar: ast.GrammarAST, root: str = "root"):
        self.grammar = grammar
        self.root = root
        self.rules = grammar.rule_map()
        self._opaque: dict[int, object] = {}

    def derive(self, text: str, visitor: Visitor) -> bool:
        """Report one derivation of the whole of ``text`` to ``visitor``; ``False`` if none.

        Raises
        ------
        DerivationTooLarge
            When finding it would take more than :data:`MAX_STEPS` steps.
        """
        run = _Run(self, text)
        root = ast.RuleRef(self.root)
        try:
            with deep_recursion():
                if len(text) not in run.solve(root, 0):
                    return False
                run.walk(root, 0, len(text))
        except RecursionError:
            raise DerivationTooLarge from None
        run.replay(visitor)
        return True


class _Run:
    """The memo tables of one text."""

    def __init__(self, deriver: Deriver, text: str):
        self.deriver = deriver
        self.text = text
        self.memo: dict[tuple[int, int, int], Ends] = {}
        self.rule_ends: dict[tuple[str, int], Ends] = {}
        self.in_progress: set[tuple[str, int]] = set()
        self.cycle = False
        self.steps = 0
        self.walking: set[tuple[str, int, int]] = set()
        self.events: list[tuple[str, ast.Expr, int | None]] = []

    # -- ends: where an expression starting at ``i`` can end ---------------------------------
    def solve(self, expr: ast.Expr, i: int) -> Ends:
        """``ends(expr, i)``, iterated to a fixed point when left recursion was met."""
        while True:
            self.cycle = False
            before = dict(self.rule_ends)
            result = self.ends(expr, i)
            if not self.cycle or before == self.rule_ends:
                return result
            self.memo.clear()

    def ends(self, expr: ast.Expr, i: int) -> Ends:
        key = (id(expr), 0, i)
        found = self.memo.get(key)
        if found is not None:
            return found
        self._count_step()
        result = self._ends(expr, i)
        self.memo[key] = result
        return result

    def _ends(self, expr: ast.Expr, i: int) -> Ends:
        text = self.text
        if isinstance(expr, ast.Literal):
            return frozenset({i + len(expr.value)}) if text.startswith(expr.value, i) else _NONE
        if isinstance(expr, ast.CharClass):
            return frozenset({i + 1}) if i < len(text) and _class_range(expr, text[i]) != -1 \
                else _NONE
        if isinstance(expr, ast.RuleRef):
            return self._rule(expr.name, i)
        if isinstance(expr, ast.Sequence):
            return self.sequence(expr.items, 0, i)
        if isinstance(expr, ast.Choice):
            return frozenset().union(*(self.ends(alt, i) for alt in expr.alternatives))
        if isinstance(expr, ast.Repeat):
            return self.repeat(expr, 0, i)
        if isinstance(expr, ast.TokenSet | ast.TokenTagDispatch):
            return _NONE
        return self._opaque_ends(expr, i)

    def _rule(self, name: str, i: int) -> Ends:
        rule = self.deriver.rules.get(name)
        if rule is None:
            return _NONE
        key = (name, i)
        if key in self.in_progress:
            self.cycle = True
            return self.rule_ends.get(key, _NONE)
        self.in_progress.add(key)
        try:
            result = self.ends(rule.body, i)
        finally:
            self.in_progress.discard(key)
        self.rule_ends[key] = self.rule_ends.get(key, _NONE) | result
        return self.rule_ends[key]

    def sequence(self, items: tuple[ast.Expr, ...], k: int, i: int) -> Ends:
        """Where ``items[k:]`` can end when started at ``i``."""
        if k == len(items):
            return frozenset({i})
        key = (id(items), k + 1, i)
        found = self.memo.get(key)
        if found is None:
            found = frozenset().union(*(self.sequence(items, k + 1, p)
                                        for p in self.ends(items[k], i)))
            self.memo[key] = found
        return found

    def repeat(self, node: ast.Repeat, count: int, i: int) -> Ends:
        """Where ``node`` can end at ``i`` after ``count`` iterations of its item."""
        key = (id(node), -1 - min(count, _count_key(node)), i)
        found = self.memo.get(key)
        if found is not None:
            return found
        result: set[int] = {i} if count >= node.min else set()
        if node.max is None or count < node.max:
            for p in self.ends(node.item, i):
                if p == i and count >= node.min:
                    continue  # an empty iteration past the minimum adds nothing
                result |= self.repeat(node, count + 1, p)
        found = frozenset(result)
        self.memo[key] = found
        return found

    def _opaque_ends(self, expr: ast.Expr, i: int) -> Ends:
        from grammarkit.automata.compiler import compile_grammar
        from grammarkit.automata.earley import Recognizer

        recognizer = self.deriver._opaque.get(id(expr))
        if recognizer is None:
            name = "__derivation_leaf"
            rules = (*self.deriver.grammar.rules, ast.Rule(name, expr))
            recognizer = Recognizer(compile_grammar(ast.GrammarAST(rules), name))
            self.deriver._opaque[id(expr)] = recognizer
        assert isinstance(recognizer, Recognizer)
        text = self.text
        return frozenset(j for j in range(i, len(text) + 1)
                         if recognizer.matches(text[i:j].encode("utf-8", "surrogatepass")))

    # -- walk: one derivation of ``expr`` over ``text[i:j]`` ---------------------------------
    def walk(self, expr: ast.Expr, i: int, j: int) -> None:
        """Append the events of one derivation of ``expr`` over ``text[i:j]`` to ``events``.

        Raises :class:`_Cycle` when every way on leads back into a rule being walked over the
        same span (``root ::= root root | ""``); callers then try their next option.
        """
        self._count_step()
        if isinstance(expr, ast.CharClass):
            index = _class_range(expr, self.text[i])
            self.events.append(("range", expr, None if expr.negated else index))
        elif isinstance(expr, ast.RuleRef):
            key = (expr.name, i, j)
            if key in self.walking:
                raise _Cycle
            self.walking.add(key)
            try:
                self.walk(self.deriver.rules[expr.name].body, i, j)
            finally:
                self.walking.discard(key)
        elif isinstance(expr, ast.Sequence):
            self._walk_sequence(expr.items, 0, i, j)
        elif isinstance(expr, ast.Choice):
            options = [index for index, alternative in enumerate(expr.alternatives)
                       if j in self.ends(alternative, i)]

            def alternative(index: int) -> None:
                self.events.append(("alternative", expr, index))
                self.walk(expr.alternatives[index], i, j)

            self._first_that_works(options, alternative)
        elif isinstance(expr, ast.Repeat):
            self._walk_repeat(expr, 0, i, j)

    def _walk_sequence(self, items: tuple[ast.Expr, ...], k: int, i: int, j: int) -> None:
        if k == len(items):
            return
        splits = [p for p in sorted(self.ends(items[k], i)) if j in self.sequence(items, k + 1, p)]

        def split(p: int) -> None:
            self.walk(items[k], i, p)
            self._walk_sequence(items, k + 1, p, j)

        self._first_that_works(splits, split)

    def _walk_repeat(self, node: ast.Repeat, count: int, i: int, j: int) -> None:
        if i == j and count >= node.min:
            self.events.append(("repetition", node, count))
            return
        steps = [p for p in sorted(self.ends(node.item, i), reverse=True)
                 if not (p == i and count >= node.min) and j in self.repeat(node, count + 1, p)]

        def iteration(p: int) -> None:
            self.walk(node.item, i, p)
            self._walk_repeat(node, count + 1, p, j)

        self._first_that_works(steps, iteration)

    def _first_that_works(self, options: list[int], attempt: Callable[[int], None]) -> None:
        """Run ``attempt`` on the first option that does not end in a cycle."""
        for option in options:
            mark = len(self.events)
            try:
                attempt(option)
                return
            except _Cycle:
                del self.events[mark:]
        raise _Cycle

    def _count_step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise DerivationTooLarge

    def replay(self, visitor: Visitor) -> None:
        """Report the events of the derivation walked to ``visitor``."""
        for kind, node, value in self.events:
            if kind == "alternative":
                visitor.alternative(node, value)  # type: ignore[arg-type]
            elif kind == "repetition":
                visitor.repetition(node, value)  # type: ignore[arg-type]
            else:
                visitor.char_range(node, value)  # type: ignore[arg-type]


class _Cycle(Exception):
    """Walking on would re-enter a rule over the span it is already being walked over."""


_NONE: Ends = frozenset()


def _count_key(node: ast.Repeat) -> int:
    """Iteration counts at or beyond this one behave alike (they are past both bounds' reach)."""
    return node.min if node.max is None else node.max


def _class_range(node: ast.CharClass, char: str) -> int:
    """The index of the range of ``node`` that ``char`` falls in; ``-1`` if it does not match.

    A negated class that matches ``char`` gives ``0``.
    """
    code = ord(char)
    for index, (lo, hi) in enumerate(node.ranges):
        if lo <= code <= hi:
            return -1 if node.negated else index
    return 0 if node.negated else -1
