"""Random sentences of a grammar: previews (:func:`sample`) and the engine behind
:func:`grammarkit.strategies.from_grammar`.

A :class:`Deriver` expands the root rule left to right with an explicit stack (deep grammars are
fine), asking a :class:`Chooser` at every decision: which alternative, how many repetitions,
which character. Alternatives are offered simplest first, so a chooser that answers ``0``
produces the smallest sentence (this is what makes hypothesis shrink well).

Termination is guaranteed: every rule's smallest derivation is precomputed (a fixpoint), and once
the output reaches ``max_length`` characters or the derivation takes too many steps, every
decision takes the smallest option. Alternatives with no finite derivation (``root ::= "a"
root``, ``Token(...)``) are never chosen.

Every sentence is checked with the grammar's recognizer before it is returned, so the subtle
cases (``TagDispatch`` free text, lazy rules) can only cost a retry, never a wrong sample.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from grammarkit import codepoints
from grammarkit.automata import utf8
from grammarkit.automata.regex_macro import expand_regex
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.automata.earley import Recognizer
    from grammarkit.grammar import Grammar

INFINITE = math.inf

Expand = Callable[[ast.RegexMacro], ast.Expr]

_PRINTABLE = ((0x20, 0x7E),)
_SURROGATES = ((0xD800, 0xDFFF),)
_FREE_TEXT = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?"


class Chooser(Protocol):
    """Answers the decisions of a derivation; ``0`` and low values mean "simplest"."""

    def index(self, n: int) -> int:
        """One of ``0..n-1``."""

    def count(self, low: int, high: int) -> int:
        """A number in ``low..high``."""

    def codepoint(self, ranges: utf8.CodepointRanges) -> int:
        """A code point from the non-empty ``ranges``."""


class RandomChooser:
    """Decisions from a seeded :class:`random.Random`, favouring readable characters."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def index(self, n: int) -> int:
        return self.rng.randrange(n)

    def count(self, low: int, high: int) -> int:
        return self.rng.randint(low, high)

    def codepoint(self, ranges: utf8.CodepointRanges) -> int:
        printable = codepoints.intersect(ranges, _PRINTABLE)
        if printable and self.rng.random() < 0.8:
            ranges = printable
        lo, hi = ranges[self.rng.randrange(len(ranges))]
        return self.rng.randint(lo, hi)


class Deriver:
    """Derives sentences of ``grammar`` of about ``max_length`` characters at most."""

    def __init__(self, grammar: Grammar, max_length: int = 64):
        self.grammar = grammar
        self.max_length = max_length
        self.rules = grammar.ast.rule_map()
        self._expanded: dict[int, ast.Expr] = {}
        self._lazy_recognizers: dict[str, Recognizer] = {}
        self.size, self.length = _minimal_derivations(self.rules, self._expand)

    @property
    def possible(self) -> bool:
        """Whether the root has any finite derivation."""
        return self.size.get(id(self.rules[self.grammar.root].body), INFINITE) < INFINITE

    def derive(self, chooser: Chooser) -> str | None:
        """One sentence, or ``None`` if this attempt did not produce a matching one."""
        if not self.possible:
            return None
        out: list[str] = []
        length = 0
        steps = 0
        step_budget = 20 * self.max_length + 200
        root = self.rules[self.grammar.root].body
        stack: list[ast.Expr | tuple[str, int]] = [root]
        reserved = self._min_length(root)
        while stack:
            node = stack.pop()
            if isinstance(node, tuple):  # end of a lazy rule's body
                out[node[1]:] = [self._shortest_prefix(node[0], "".join(out[node[1]:]))]
                length = sum(map(len, out))
                continue
            reserved -= self._min_length(node)
            steps += 1
            room = self.max_length - length - reserved
            finishing = room <= 0 or steps > step_budget
            produced = self._expand_node(node, chooser, finishing, room, stack, len(out))
            if produced is None:
                return None
            if isinstance(produced, str):
                out.append(produced)
                length += len(produced)
            else:
                reserved += sum(self._min_length(child) for child in produced)
                stack.extend(reversed(produced))
        text = "".join(out)
        return text if self.grammar.matches(text) else None

    def _expand_node(self, node: ast.Expr, chooser: Chooser, finishing: bool, room: float,
                     stack: list[ast.Expr | tuple[str, int]], mark: int
                     ) -> str | list[ast.Expr] | None:
        """Text for a terminal node, the children to expand next, or ``None`` (dead end)."""
        if isinstance(node, ast.Literal):
            return node.value
        if isinstance(node, ast.CharClass):
            ranges = utf8.class_codepoints(node.ranges, node.negated)
            if not ranges:
                return None
            ranges = codepoints.intersect(ranges, codepoints.complement(_SURROGATES)) or ranges
            return chr(chooser.codepoint(ranges))
        if isinstance(node, ast.RuleRef):
            rule = self.rules[node.name]
            if any(a.key == "lazy" for a in rule.attributes):
                stack.append((node.name, mark))
            return [rule.body]
        if isinstance(node, ast.Sequence):
            return list(node.items)
        if isinstance(node, ast.Choice):
            return [self._choose(node.alternatives, chooser, finishing, room)]
        if isinstance(node, ast.Repeat):
            return self._repeat(node, chooser, finishing, room)
        if isinstance(node, ast.RegexMacro):
            return [self._expand(node)]
        if isinstance(node, ast.Substring):
            if finishing or not node.strings:
                return ""
            first = chooser.count(0, len(node.strings))
            return "".join(node.strings[first:chooser.count(first, len(node.strings))])
        if isinstance(node, ast.TagDispatch):
            return self._tag_dispatch(node, chooser, finishing)
        if isinstance(node, ast.TokenTagDispatch):
            return ""
        return None  # Token / ExcludeToken: no byte string matches them

    def _choose(self, options: tuple[ast.Expr, ...], chooser: Chooser, finishing: bool,
                room: float) -> ast.Expr:
        ranked = sorted((o for o in options if self._min_size(o) < INFINITE),
                        key=lambda o: (self._min_size(o), self._min_length(o)))
        if finishing:
            return ranked[0]
        fitting = [o for o in ranked if self._min_length(o) <= room] or ranked[:1]
        return fitting[chooser.index(len(fitting))]

    def _repeat(self, node: ast.Repeat, chooser: Chooser, finishing: bool,
                room: float) -> list[ast.Expr]:
        low = node.min
        if self._min_size(node.item) == INFINITE:
            return [] if low == 0 else [node.item]
        if finishing:
            return [node.item] * low
        item_length = self._min_length(node.item)
        extra = 4 if item_length == 0 else int(min(4, room // item_length))
        high = low + extra if node.max is None else min(node.max, low + extra)
        return [node.item] * chooser.count(low, max(low, high))

    def _tag_dispatch(self, node: ast.TagDispatch, chooser: Chooser,
                      finishing: bool) -> list[ast.Expr]:
        patterns = "".join(tag for tag, _ in node.tags) + "".join(node.excludes)
        alphabet = [c for c in _FREE_TEXT if c not in patterns]
        usable = [(tag, name) for tag, name in node.tags
                  if self._min_size(self.rules[name].body) < INFINITE]

        def free_text() -> ast.Expr:
            if finishing or not alphabet:
                return ast.Literal("")
            size = chooser.count(0, 8)
            return ast.Literal("".join(alphabet[chooser.index(len(alphabet))]
                                       for _ in range(size)))

        parts = [free_text()]
        dispatches = 0 if finishing or not usable else chooser.count(0, 2)
        if not node.loop_after_dispatch:
            dispatches = min(dispatches, 1)
        for _ in range(dispatches):
            tag, name = usable[chooser.index(len(usable))]
            parts += [ast.Literal(tag), ast.RuleRef(name)]
            if node.loop_after_dispatch:
                parts.append(free_text())
        return parts

    # -- helpers ---------------------------------------------------------------------------------
    def _expand(self, node: ast.RegexMacro) -> ast.Expr:
        found = self._expanded.get(id(node))
        if found is None:
            found = self._expanded[id(node)] = expand_regex(node)
        return found

    def _min_size(self, node: ast.Expr) -> float:
        return self.size.get(id(node), INFINITE)

    def _min_length(self, node: ast.Expr) -> float:
        return self.length.get(id(node), 0)

    def _shortest_prefix(self, rule_name: str, text: str) -> str:
        """The shortest prefix of ``text`` that the (non-lazy) body of ``rule_name`` matches."""
        from grammarkit.automata.earley import Recognizer
        from grammarkit.grammar import Grammar

        recognizer = self._lazy_recognizers.get(rule_name)
        if recognizer is None:
            rules = tuple(replace(r, attributes=()) if r.name == rule_name else r
                          for r in self.grammar.ast.rules)
            grammar = Grammar(replace(self.grammar.ast, rules=rules), rule_name)
            recognizer = self._lazy_recognizers[rule_name] = Recognizer(grammar.compiled)
        state = recognizer.initial()
        for i, char in enumerate(text):
            if recognizer.is_accepting(state):
                return text[:i]
            advanced = recognizer.advance(state, utf8.encode(char))
            if advanced is None:
                return text
            state = advanced
        return text


def sample(grammar: Grammar, n: int = 5, seed: int = 0, max_length: int = 64) -> list[str]:
    """``n`` random sentences of ``grammar``, each of about ``max_length`` characters at most.

    Deterministic for a given ``seed``. Returns fewer sentences (possibly none) only when the
    grammar's language is empty or its sentences are too hard to hit at random.
    """
    deriver = Deriver(grammar, max_length)
    if not deriver.possible:
        return []
    chooser = RandomChooser(random.Random(seed))
    result: list[str] = []
    attempts = 0
    while len(result) < n and attempts < 20 * n:
        attempts += 1
        text = deriver.derive(chooser)
        if text is not None:
            result.append(text)
    return result


def _minimal_derivations(rules: dict[str, ast.Rule], expand: Expand
                         ) -> tuple[dict[int, float], dict[int, float]]:
    """For every expression node (by ``id``): its smallest derivation's size and length.

    Sizes are numbers of expansion steps (``inf``: no finite derivation); lengths count
    characters. Computed as a fixpoint over the rules, each body traversed iteratively.
    """
    rule_size: dict[str, float] = {name: INFINITE for name in rules}
    rule_length: dict[str, float] = {name: INFINITE for name in rules}
    size: dict[int, float] = {}
    length: dict[int, float] = {}
    changed = True
    while changed:
        changed = False
        for name, rule in rules.items():
            _measure(rule.body, rules, rule_size, rule_length, size, length, expand)
            new = (size[id(rule.body)], length[id(rule.body)])
            if new != (rule_size[name], rule_length[name]):
                rule_size[name], rule_length[name] = new
                changed = True
    return size, length


def _measure(root: ast.Expr, rules: dict[str, ast.Rule], rule_size: dict[str, float],
             rule_length: dict[str, float], size: dict[int, float], length: dict[int, float],
             expand: Expand) -> None:
    stack: list[tuple[ast.Expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        kids: tuple[ast.Expr, ...] = ast.children(node)
        if isinstance(node, ast.RegexMacro):
            kids = (expand(node),)
        if kids and not ready:
            stack.append((node, True))
            stack.extend((kid, False) for kid in kids)
            continue
        s, n = _node_cost(node, kids, rules, rule_size, rule_length, size, length)
        size[id(node)], length[id(node)] = s, n


def _node_cost(node: ast.Expr, kids: tuple[ast.Expr, ...], rules: dict[str, ast.Rule],
               rule_size: dict[str, float], rule_length: dict[str, float],
               size: dict[int, float], length: dict[int, float]) -> tuple[float, float]:
    if isinstance(node, ast.Literal):
        return 1, len(node.value)
    if isinstance(node, ast.CharClass):
        return (1, 1) if utf8.class_codepoints(node.ranges, node.negated) else (INFINITE, 1)
    if isinstance(node, ast.RuleRef):
        return 1 + rule_size.get(node.name, INFINITE), rule_length.get(node.name, INFINITE)
    if isinstance(node, (ast.Sequence, ast.RegexMacro)):
        return (1 + sum(size[id(k)] for k in kids), sum(length[id(k)] for k in kids))
    if isinstance(node, ast.Choice):
        return (1 + min(size[id(k)] for k in kids), min(length[id(k)] for k in kids))
    if isinstance(node, ast.Repeat):
        item = kids[0]
        if node.min == 0:
            return 1, 0
        return 1 + node.min * size[id(item)], node.min * length[id(item)]
    if isinstance(node, (ast.TagDispatch, ast.TokenTagDispatch, ast.Substring)):
        return 1, 0
    return INFINITE, 0  # Token / ExcludeToken
