"""Random sentences of a grammar: previews (:func:`sample`) and the engine behind
:func:`grammarkit.strategies.from_grammar`.

A :class:`Deriver` expands the root rule left to right with an explicit stack (deep grammars are
fine), asking a :class:`Chooser` at every decision: which alternative, how many repetitions,
which character. Alternatives are offered simplest first, so a chooser that answers ``0``
produces the smallest sentence (this is what makes hypothesis shrink well).

Termination is guaranteed: every rule's smallest derivation is precomputed (a fixpoint), and once
the output reaches ``max_length`` characters or the derivation takes too many steps, every
decision takes the smallest option. Alternatives with no finite derivation (``root ::= "a"
root``, ``Token(...)``) are never chosen. Memory is bounded too: a grammar whose shortest
sentence is longer than :data:`MAX_SENTENCE_LENGTH` is not sampled (:func:`why_no_samples` says
so), and repetitions of items that can be empty are never unrolled beyond what is produced.

Previews (:func:`sample`) read like real output: loops that only add whitespace give one space
or none, characters are mostly letters (in pronounceable runs) and digits, and alternatives not
yet used by earlier samples come first (:class:`Coverage` records which were).

Every sentence is checked with the grammar's recognizer before it is returned, so the subtle
cases (``TagDispatch`` free text, lazy rules) can only cost a retry, never a wrong sample.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol

from grammarkit import codepoints
from grammarkit.automata import utf8
from grammarkit.automata.regex_macro import expand_regex
from grammarkit.diagnostics import Diagnostic, error
from grammarkit.ebnf import ast

if TYPE_CHECKING:
    from grammarkit.automata.earley import Recognizer
    from grammarkit.grammar import Grammar

INFINITE = math.inf

MAX_SENTENCE_LENGTH = 10_000
"""Characters a sampled sentence may need at least; grammars needing more are not sampled."""

Expand = Callable[[ast.RegexMacro], ast.Expr]

_PRINTABLE = ((0x20, 0x7E),)
_SURROGATES = ((0xD800, 0xDFFF),)
_WHITESPACE = ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20))
_SPACE = ((0x20, 0x20),)
_LOWER = ((0x61, 0x7A),)
_VOWELS = codepoints.merge((ord(c), ord(c)) for c in "aeiou")
_CONSONANTS = codepoints.intersect(_LOWER, codepoints.complement(_VOWELS))
_DIGITS = ((0x30, 0x39),)
_UPPER = ((0x41, 0x5A),)
_NOT_CONTROL = codepoints.complement(codepoints.merge([(0, 0x1F), (0x7F, 0x9F), *_SURROGATES]))
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
    """Decisions from a seeded :class:`random.Random`, favouring simple options (weight
    ``1 / (k + 1)`` for the ``k``-th simplest) and readable characters.

    Whitespace classes give a space; other classes mostly give lower-case letters (consonants
    and vowels in turn, so runs are pronounceable), then digits and upper-case letters, then
    other printable characters, and only rarely anything else (control characters only when a
    class has nothing else).
    """

    def __init__(self, rng: random.Random):
        self.rng = rng
        self._vowel_next = False

    def index(self, n: int) -> int:
        return self._small(n)

    def count(self, low: int, high: int) -> int:
        return low + self._small(high - low + 1)

    def weighted(self, weights: list[float]) -> int:
        """An index into ``weights``, with probability proportional to its weight."""
        return self.rng.choices(range(len(weights)), weights=weights)[0]

    def _small(self, n: int) -> int:
        """One of ``0..n-1``, ``k`` with weight ``1 / (k + 1)``: simpler options are likelier."""
        if n <= 1:
            return 0
        return self.rng.choices(range(n), weights=[1 / (k + 1) for k in range(n)])[0]

    def codepoint(self, ranges: utf8.CodepointRanges) -> int:
        rng = self.rng
        if codepoints.intersect(ranges, _SPACE) and _within(ranges, _WHITESPACE):
            return 0x20
        roll = rng.random()
        pools: list[utf8.CodepointRanges] = []
        if roll < 0.92:
            syllable = (_VOWELS, _CONSONANTS) if self._vowel_next else (_CONSONANTS, _VOWELS)
            pools = [*syllable, _DIGITS, _UPPER] if roll < 0.85 else [_DIGITS, _UPPER, _LOWER]
        if roll < 0.98:
            pools.append(_PRINTABLE)
        pools += [_NOT_CONTROL, ranges]
        for pool in pools:
            usable = codepoints.intersect(ranges, pool)
            if usable:
                lo, hi = usable[rng.randrange(len(usable))]
                chosen = rng.randint(lo, hi)
                self._vowel_next = bool(codepoints.intersect(((chosen, chosen),), _CONSONANTS))
                return chosen
        raise ValueError("empty character ranges")


def _within(ranges: utf8.CodepointRanges, allowed: utf8.CodepointRanges) -> bool:
    return codepoints.intersect(ranges, allowed) == tuple(ranges)


class Coverage:
    """Which rules and alternatives the derivations of a grammar used, and how often.

    Parameters
    ----------
    grammar
        The grammar whose rules (those reachable from the root) and alternatives are counted.
    """

    def __init__(self, grammar: Grammar):
        self.root = grammar.root
        self.rules: dict[str, int] = {}
        self._choices: dict[int, tuple[str, int, ast.Choice]] = {}
        self.alternatives: dict[int, list[int]] = {}
        rules = grammar.ast.rule_map()
        pending = [grammar.root]
        while pending:
            name = pending.pop()
            if name in self.rules or name not in rules:
                continue
            self.rules[name] = 0
            ordinal = 0
            for node in ast.walk(rules[name].body):
                if isinstance(node, ast.Choice):
                    self._choices[id(node)] = (name, ordinal, node)
                    self.alternatives[id(node)] = [0] * len(node.alternatives)
                    ordinal += 1
                elif isinstance(node, ast.RuleRef):
                    pending.append(node.name)
                elif isinstance(node, (ast.TagDispatch, ast.TokenTagDispatch)):
                    pending.extend(rule for _, rule in node.tags)

    def used_rule(self, name: str) -> None:
        if name in self.rules:
            self.rules[name] += 1

    def used_alternative(self, choice: ast.Choice, index: int) -> None:
        counts = self.alternatives.get(id(choice))
        if counts is not None:
            counts[index] += 1

    def times_used(self, choice: ast.Choice, index: int) -> int:
        """How often alternative ``index`` of ``choice`` was taken (0 for untracked choices)."""
        counts = self.alternatives.get(id(choice))
        return counts[index] if counts is not None else 0

    def to_json(self) -> dict[str, Any]:
        """Rules and alternatives used, and what was never used, as JSON-ready data: the
        unused rules, and the unused alternatives of choices that were reached."""
        from grammarkit.ebnf.printer import print_expr

        unused = []
        for key, (rule, ordinal, choice) in self._choices.items():
            counts = self.alternatives[key]
            if not any(counts):  # never reached: its rule or enclosing alternative is unused
                continue
            for index, count in enumerate(counts):
                if not count:
                    unused.append({"rule": rule, "choice": ordinal, "alternative": index,
                                   "of": len(choice.alternatives),
                                   "text": print_expr(choice.alternatives[index])})
        alternatives = sum(len(c) for c in self.alternatives.values())
        return {
            "rules": {"used": sum(1 for c in self.rules.values() if c), "total": len(self.rules)},
            "alternatives": {"used": sum(1 for c in self.alternatives.values() for n in c if n),
                             "total": alternatives},
            "unused_rules": sorted(name for name, count in self.rules.items() if not count),
            "unused_alternatives": unused,
        }

    def report(self) -> str:
        """The coverage as text: totals, then what was never used."""
        data = self.to_json()
        rules, alternatives = data["rules"], data["alternatives"]
        lines = [(f"coverage: {rules['used']} of {rules['total']} rules, "
                  f"{alternatives['used']} of {alternatives['total']} alternatives")]
        lines += [f"  never used: rule `{name}`" for name in data["unused_rules"]]
        for alt in data["unused_alternatives"]:
            lines.append(f"  never used: `{alt['rule']}` alternative {alt['alternative'] + 1} "
                         f"of {alt['of']}: {_shorten(alt['text'])}")
        return "\n".join(lines)


def _shorten(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


class Deriver:
    """Derives sentences of ``grammar`` of about ``max_length`` characters at most.

    Parameters
    ----------
    grammar
        The grammar.
    max_length
        Characters a sentence should have at most (capped at :data:`MAX_SENTENCE_LENGTH`);
        once reached, every decision takes the shortest option.
    readable
        Loops that only add whitespace repeat at most once beyond their minimum, and other
        optional parts are present two times in three (previews); ``False`` explores them
        fully (property tests).
    coverage
        Records the rules and alternatives used; a rule's alternatives it has not seen yet
        are preferred.

    With ``readable`` and a chooser that has ``weighted(weights)``, an alternative is chosen
    with weight ``exp(-extra)``, ``extra`` being how many more characters its shortest text
    has than the shortest alternative's: escapes, long keywords and deep recursion are rare.
    """

    def __init__(self, grammar: Grammar, max_length: int = 64, *, readable: bool = False,
                 coverage: Coverage | None = None):
        self.grammar = grammar
        self.max_length = min(max_length, MAX_SENTENCE_LENGTH)
        self.readable = readable
        self.coverage = coverage
        self.rules = grammar.ast.rule_map()
        self._expanded: dict[int, ast.Expr] = {}
        self._lazy_recognizers: dict[str, Recognizer] = {}
        self._whitespace_only: dict[int, bool] = {}
        self._rule_bodies = {id(rule.body) for rule in self.rules.values()}
        self.size, self.length = _minimal_derivations(self.rules, self._expand)

    @property
    def shortest(self) -> float:
        """Characters of the root's shortest sentence (``inf``: none)."""
        root = self.rules[self.grammar.root].body
        if self.size.get(id(root), INFINITE) == INFINITE:
            return INFINITE
        return self._min_length(root)

    @property
    def possible(self) -> bool:
        """Whether the root has a finite derivation short enough to sample."""
        return self.shortest <= MAX_SENTENCE_LENGTH

    def derive(self, chooser: Chooser) -> str | None:
        """One sentence, or ``None`` if this attempt did not produce a matching one."""
        if not self.possible:
            return None
        out: list[str] = []
        length = 0
        steps = 0
        step_budget = 20 * self.max_length + 200
        root = self.rules[self.grammar.root].body
        if self.coverage is not None:
            self.coverage.used_rule(self.grammar.root)
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
            if self.coverage is not None:
                self.coverage.used_rule(node.name)
            if any(a.key == "lazy" for a in rule.attributes):
                stack.append((node.name, mark))
            return [rule.body]
        if isinstance(node, ast.Sequence):
            return list(node.items)
        if isinstance(node, ast.Choice):
            return [self._choose(node, chooser, finishing, room)]
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

    def _choose(self, node: ast.Choice, chooser: Chooser, finishing: bool,
                room: float) -> ast.Expr:
        alternatives = node.alternatives
        ranked = sorted((i for i, o in enumerate(alternatives) if self._min_size(o) < INFINITE),
                        key=lambda i: (self._min_size(alternatives[i]),
                                       self._min_length(alternatives[i])))
        if finishing:
            index = ranked[0]
        else:
            fitting = [i for i in ranked if self._min_length(alternatives[i]) <= room]
            fitting = fitting or ranked[:1]
            coverage = self.coverage
            if coverage is not None and id(node) in self._rule_bodies:
                fitting = [i for i in fitting if not coverage.times_used(node, i)] or fitting
            weighted = getattr(chooser, "weighted", None)
            if self.readable and weighted is not None:
                shortest = min(self._min_length(alternatives[i]) for i in fitting)
                index = fitting[weighted([math.exp(shortest - self._min_length(alternatives[i]))
                                          for i in fitting])]
            else:
                index = fitting[chooser.index(len(fitting))]
        if self.coverage is not None:
            self.coverage.used_alternative(node, index)
        return alternatives[index]

    def _repeat(self, node: ast.Repeat, chooser: Chooser, finishing: bool,
                room: float) -> list[ast.Expr]:
        low = node.min
        if self._min_size(node.item) == INFINITE:
            return [] if low == 0 else [node.item]
        item_length = self._min_length(node.item)
        if item_length == 0:
            low = 0  # the item can be empty: fewer repetitions say the same
        if finishing:
            return [node.item] * low
        extra = 4 if item_length == 0 else int(min(4, room // item_length))
        whitespace = self.readable and self._only_whitespace(node.item)
        if whitespace:
            extra = min(extra, 1)
        high = low + extra if node.max is None else min(node.max, low + extra)
        if self.readable and not whitespace and low == 0 and high >= 1:
            # a preview shows an optional part more often than not (two times in three: the
            # likelier of two choices): `{}` is valid JSON, but `{"a": 1}` says more
            if chooser.count(0, 1) == 1:
                return []
            return [node.item] * (1 + chooser.count(0, high - 1))
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


    def _only_whitespace(self, node: ast.Expr) -> bool:
        """Whether every character ``node`` can produce is whitespace (and it produces some)."""
        known = self._whitespace_only.get(id(node))
        if known is not None:
            return known
        seen: set[str] = set()
        pending = [node]
        found = False
        while pending:
            current = pending.pop()
            if isinstance(current, ast.Literal):
                if current.value.strip(" \t\n\r"):
                    break
                found = found or bool(current.value)
            elif isinstance(current, ast.CharClass):
                ranges = utf8.class_codepoints(current.ranges, current.negated)
                if not _within(ranges, _WHITESPACE):
                    break
                found = True
            elif isinstance(current, ast.RuleRef):
                if current.name not in seen:
                    seen.add(current.name)
                    pending.append(self.rules[current.name].body)
            elif isinstance(current, (ast.Sequence, ast.Choice, ast.Repeat)):
                pending.extend(ast.children(current))
            else:
                break
        else:
            self._whitespace_only[id(node)] = found
            return found
        self._whitespace_only[id(node)] = False
        return False


def sample(grammar: Grammar, n: int = 5, seed: int = 0, max_length: int = 64, *,
           coverage: Coverage | None = None) -> list[str]:
    """``n`` random sentences of ``grammar``, each of about ``max_length`` characters at most.

    Deterministic for a given ``seed`` (and the first sentences do not depend on ``n``).
    Sentences read like real output: whitespace loops give one space or none, characters are
    mostly letters and digits, and each sentence prefers alternatives the earlier ones did not
    use. Every sentence is accepted by ``grammar.matches``.

    Parameters
    ----------
    coverage
        A :class:`Coverage` of ``grammar`` to fill (and to be guided by).

    Returns
    -------
    list of str
        Fewer sentences (possibly none) only when the grammar's language is empty, needs
        ``Token(...)`` elements, has no sentence of at most :data:`MAX_SENTENCE_LENGTH`
        characters, or its sentences are too hard to hit at random; :func:`why_no_samples`
        says which.
    """
    return list(itertools.islice(samples(grammar, seed, max_length, coverage=coverage), n))


def samples(grammar: Grammar, seed: int = 0, max_length: int = 64, *,
            coverage: Coverage | None = None) -> Iterator[str]:
    """The sentences :func:`sample` gives, one at a time, without end (it stops only when 20
    attempts in a row fail)."""
    coverage = coverage if coverage is not None else Coverage(grammar)
    deriver = Deriver(grammar, max_length, readable=True, coverage=coverage)
    if not deriver.possible:
        return
    chooser = RandomChooser(random.Random(seed))
    failures = 0
    while failures < 20:
        text = deriver.derive(chooser)
        if text is None:
            failures += 1
        else:
            failures = 0
            yield text


def why_no_samples(grammar: Grammar) -> Diagnostic:
    """Why :func:`sample` gives no sentence of ``grammar``: GK355, GK356, GK357 or GK358,
    located at the root rule's name when the grammar has a source text."""
    found = _why_no_samples(grammar)
    root = grammar.ast.rule_map().get(grammar.root)
    if grammar.source is None or root is None or root.name_span is None:
        return found
    return replace(found, span=root.name_span).with_source(grammar.source)


def _why_no_samples(grammar: Grammar) -> Diagnostic:
    deriver = Deriver(grammar)
    shortest = deriver.shortest
    if shortest == INFINITE:
        with_tokens, _ = _minimal_derivations(deriver.rules, deriver._expand, tokens=True)
        if with_tokens.get(id(deriver.rules[grammar.root].body), INFINITE) < INFINITE:
            return error("GK355", "every sentence of the grammar needs a token id "
                         "(`Token(...)`) that no text can spell", None,
                         "preview it at the token level, with a vocabulary: "
                         "`grammarkit sample GRAMMAR --tokenizer tokenizer.json` on the command "
                         "line, `grammarkit.generate(grammar, prompt, vocab=...)` in Python")
        return error("GK357", f"rule `{grammar.root}` has no finite derivation: the grammar "
                     "has no sentence", None,
                     "give every recursive rule an alternative that ends")
    if shortest > MAX_SENTENCE_LENGTH:
        length = f"{shortest:.0f}" if shortest < 1e15 else f"{shortest:.3g}"
        return error("GK356", f"the shortest sentence of the grammar has {length} "
                     f"characters, more than the {MAX_SENTENCE_LENGTH} a sample may have",
                     None, "lower the repetition counts, or sample a rule with --root")
    return error("GK358", "no sampled sentence was accepted by the grammar", None,
                 "the grammar's sentences are too rare to hit at random (lookaheads, "
                 "lazy rules or TagDispatch excludes); try another --seed or a larger -n")


def _minimal_derivations(rules: dict[str, ast.Rule], expand: Expand, tokens: bool = False
                         ) -> tuple[dict[int, float], dict[int, float]]:
    """For every expression node (by ``id``): its smallest derivation's size and length.

    Sizes are numbers of expansion steps (``inf``: no finite derivation); lengths count
    characters. Computed as a fixpoint over the rules with a worklist: a rule is measured
    again only when a rule it references got smaller (linear on a chain of rules, where
    sweeping over all rules until nothing changes is quadratic), each body iteratively.
    ``tokens``: count ``Token(...)`` as derivable (it is, by a token id, not by text).
    """
    rule_size: dict[str, float] = {name: INFINITE for name in rules}
    rule_length: dict[str, float] = {name: INFINITE for name in rules}
    size: dict[int, float] = {}
    length: dict[int, float] = {}
    referrers: dict[str, dict[str, None]] = {name: {} for name in rules}  # ordered sets
    for name, rule in rules.items():
        for referenced, _ in ast.referenced_rules(rule.body):
            if referenced in referrers:
                referrers[referenced][name] = None
    pending = deque(rules)
    queued = set(rules)
    while pending:
        name = pending.popleft()
        queued.discard(name)
        body = rules[name].body
        _measure(body, rules, rule_size, rule_length, size, length, expand, tokens)
        new = (size[id(body)], length[id(body)])
        if new != (rule_size[name], rule_length[name]):
            rule_size[name], rule_length[name] = new
            for referrer in referrers[name]:
                if referrer not in queued:
                    pending.append(referrer)
                    queued.add(referrer)
    return size, length


def _measure(root: ast.Expr, rules: dict[str, ast.Rule], rule_size: dict[str, float],
             rule_length: dict[str, float], size: dict[int, float], length: dict[int, float],
             expand: Expand, tokens: bool) -> None:
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
        s, n = _node_cost(node, kids, rule_size, rule_length, size, length, tokens)
        size[id(node)], length[id(node)] = s, n


def _node_cost(node: ast.Expr, kids: tuple[ast.Expr, ...], rule_size: dict[str, float],
               rule_length: dict[str, float], size: dict[int, float], length: dict[int, float],
               tokens: bool) -> tuple[float, float]:
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
        if node.min == 0 or length[id(item)] == 0:  # an item that can be empty: no repetition
            return 1 + (size[id(item)] if node.min else 0), 0
        return 1 + node.min * size[id(item)], node.min * length[id(item)]
    if isinstance(node, (ast.TagDispatch, ast.TokenTagDispatch, ast.Substring)):
        return 1, 0
    return (1, 0) if tokens else (INFINITE, 0)  # Token / ExcludeToken
