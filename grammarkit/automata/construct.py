"""Rule bodies to NFAs: a Thompson construction with repetitions unrolled, built iteratively.

Each expression becomes a fragment ``(start, end)`` inside the rule's :class:`NFA`:

* literals are byte chains (UTF-8, see :mod:`grammarkit.automata.utf8`); classes are a handful of
  byte-range chains; a rule reference is one call edge; ``Token``/``ExcludeToken`` a token edge;
* two or more alternatives of one choice that begin with a literal share a trie of those
  literals, each word's last state going on to the rest of its alternative (an enum of 100,000
  words is a trie, not 100,000 branches, and so are 10,000 ``"w..." [0-9]*``);
* ``x{m,n}`` is ``n`` copies of ``x`` (the last ``n - m`` optional), ``x{m,}`` is ``m`` copies
  with the last one looping (``x*`` loops one copy), as long as the copies stay within
  :data:`UNROLL_LIMIT` states; larger repetitions become one counted :class:`~grammarkit.automata.
  nfa.Loop` around a single copy (``unroll=True`` forces copies, for lazy rules);
* ``TagDispatch`` comes from :mod:`grammarkit.automata.tagdispatch`, ``Regex`` from
  :mod:`grammarkit.automata.regex_macro` (whose classes keep xgrammar's overlong quirk);
* ``Substring("c1", ..., "cn")`` matches any run of consecutive chunks ``ci ... cj`` (possibly
  none), which is how xgrammar 0.2.8 behaves (chunks are never split);
* ``TokenTagDispatch`` matches a token loop (only the empty byte string, byte-wise);
* lookahead assertions are not part of the language and are ignored.

The traversal keeps its own stack, so expressions nested thousands deep are fine.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from grammarkit.automata import utf8
from grammarkit.automata.nfa import NFA, Budget, BudgetExceeded, Loop, TokenEdge
from grammarkit.automata.regex_macro import regex_class_sequences
from grammarkit.automata.tagdispatch import build_tag_dispatch
from grammarkit.diagnostics import GrammarError, error
from grammarkit.ebnf import ast

Fragment = tuple[int, int]

UNROLL_LIMIT = 256
"""Repetitions whose unrolled copies would need more NFA states than this run as counters."""


def build_expression(nfa: NFA, expr: ast.Expr, rule_ids: Mapping[str, int],
                     expand_regex: Callable[[ast.RegexMacro], ast.Expr],
                     unroll: bool = False,
                     inline: Callable[[str], ast.Expr | None] | None = None,
                     defer: Deferral | None = None) -> Fragment:
    """Add the automaton of ``expr`` to ``nfa`` and return its ``(start, end)`` states.

    ``unroll`` unrolls every repetition (the automaton then has no counters). ``inline(name)``
    may give the body to build in place of a reference to rule ``name`` (a body without
    references), or ``None`` for a call edge. With ``defer``, a large expression is built
    only in part, the rest left to :meth:`NFA.expand <grammarkit.automata.nfa.NFA.expand>`
    (see :class:`Deferral`).

    Raises
    ------
    GrammarError
        ``GK103`` for a reference to an unknown rule, or the error of an invalid ``Regex``.
    BudgetExceeded
        When the grammar needs more states than its budget (the memory ceiling).
    """
    return _Builder(nfa, rule_ids, expand_regex, unroll, inline, defer).build(expr)


@dataclass(frozen=True)
class Deferral:
    """How a large expression is built lazily, one level of choices at a time.

    Once a build has added more than ``above`` states, each choice not begun yet (outside
    repetitions, ``Regex`` macros and inlined bodies, and without an empty alternative: a
    sequence of optional items keeps its compact position sets) becomes a *deferred* state:
    expanding it builds the choice, whose own choices are deferred in turn. A trie of leading
    literals (:class:`_PrefixTrie`) longer than ``above`` bytes is built one node at a time.
    The state a deferred part is reached from is where the lazy subset construction expands
    it (:mod:`grammarkit.automata.lazy_dfa`), so inputs build what they reach.

    ``too_large()`` is raised when an expansion exceeds the budget (the rule's ``GK121``).
    """

    above: int
    too_large: Callable[[], Exception]


class _Builder:
    def __init__(self, nfa: NFA, rule_ids: Mapping[str, int],
                 expand_regex: Callable[[ast.RegexMacro], ast.Expr], unroll: bool,
                 inline: Callable[[str], ast.Expr | None] | None,
                 defer: Deferral | None = None, templates: dict[str, NFA] | None = None):
        self.nfa = nfa
        self.rule_ids = rule_ids
        self.expand_regex = expand_regex
        self.unroll = unroll
        self.inline = inline
        self.defer = defer
        self.templates: dict[str, NFA] = {} if templates is None else templates
        """The automaton of each body built in place of a reference, copied to each place."""

    def build(self, root: ast.Expr) -> Fragment:
        nfa, defer = self.nfa, self.defer
        defer_from = -1 if defer is None else nfa.num_states + defer.above
        results: list[Fragment] = []
        # (node, entry state count on exit or -1 before entering, inside a Regex macro?, how
        # many of the results its children built, may it be built lazily (not inside a
        # repetition, a macro or an inlined body)?)
        stack: list[tuple[Any, int, bool, int, bool]] = [
            (root, -1, False, 0, defer is not None)]
        pop, push, extend = stack.pop, stack.append, stack.extend
        inline = self.inline
        sequence, choice, repeat, rule_ref = ast.Sequence, ast.Choice, ast.Repeat, ast.RuleRef
        while stack:
            node, entry, in_regex, count, deferrable = pop()
            kind = type(node)
            if entry < 0:
                if kind is ast.RegexMacro:
                    push((self.expand_regex(node), -1, True, 0, False))
                    continue
                if kind is rule_ref and inline is not None:
                    body = inline(node.name)
                    if body is not None:
                        results.append(self._inlined(node.name, body))
                        continue
                if kind is choice:
                    deferring = deferrable and 0 <= defer_from <= nfa.num_states
                    if (deferring and node is not root
                            and not any(_empty(a) for a in node.alternatives)):
                        results.append(self._deferred(node))
                        continue
                    if deferring and inline is not None:
                        node = _spelled_out(node, inline)
                    node = _factored(node, not deferring)
                    kind = type(node)
                    if (isinstance(node, _PrefixTrie) and node.tails
                            and self._lazy_trie(node, deferrable)):
                        # its tails are built when a word reaches them
                        push((node, nfa.num_states, in_regex, len(node.tails), deferrable))
                        results.extend(self._deferred(tail) for tail in node.tails)
                        continue
                kids = (node.items if kind is sequence else node.alternatives if kind is choice
                        else (node.item,) if kind is repeat
                        else node.tails if kind is _PrefixTrie else ())
                if not kids:
                    if in_regex and kind is ast.CharClass:
                        codepoints = utf8.class_codepoints(node.ranges, node.negated)
                        results.append(self._sequences(regex_class_sequences(codepoints)))
                    else:
                        results.append(self._leaf(node, deferrable))
                    continue
                push((node, nfa.num_states, in_regex, len(kids), deferrable))
                inner = deferrable and kind is not repeat
                extend([(kid, -1, in_regex, 0, inner) for kid in reversed(kids)])
                continue
            parts = results[len(results) - count:]
            del results[len(results) - count:]
            if kind is _PrefixTrie:
                results.append(self._prefix_trie(node, parts, deferrable))
            elif kind is sequence:
                results.append(self._sequence(parts))
            elif kind is choice:
                results.append(self._choice(parts))
            else:
                assert kind is repeat
                results.append(self._repeat(node, parts[0], entry))
        return results[0]

    # -- leaves ------------------------------------------------------------------------------
    def _deferred(self, node: ast.Expr) -> Fragment:
        """A fragment standing for ``node``, built when its start is expanded."""
        nfa = self.nfa
        start, end = nfa.add_state(), nfa.add_state()
        defer = self.defer
        assert defer is not None
        now = Deferral(0, defer.too_large)  # an expansion defers every choice below it

        def expand(state: int) -> None:
            try:
                inner_start, inner_end = _Builder(nfa, self.rule_ids, self.expand_regex,
                                                  self.unroll, self.inline, now,
                                                  self.templates).build(node)
            except BudgetExceeded:
                raise defer.too_large() from None
            nfa.add_epsilon(state, inner_start)
            nfa.add_epsilon(inner_end, end)

        nfa.deferred[start] = expand
        return start, end

    def _inlined(self, name: str, body: ast.Expr) -> Fragment:
        """A copy of ``body`` (of rule ``name``, which references no rule), built once."""
        template = self.templates.get(name)
        if template is None:
            template = self.templates[name] = NFA(Budget(self.nfa.budget.limit))
            template.start, end = _Builder(template, self.rule_ids, self.expand_regex,
                                           self.unroll, None).build(body)
            template.finals = {end}
        shift = self.nfa.copy_states(template)
        (end,) = template.finals
        return template.start + shift, end + shift

    def _leaf(self, node: ast.Expr, deferrable: bool = False) -> Fragment:
        nfa = self.nfa
        if isinstance(node, ast.Literal):
            return self._chain(utf8.encode(node.value))
        if isinstance(node, ast.CharClass):
            return self._sequences(_class_sequences(node.ranges, node.negated))
        if isinstance(node, ast.RuleRef):
            start = nfa.num_states
            nfa.add_states(2)
            nfa.call_edges[start].append((self._rule(node.name, node.span), start + 1))
            return start, start + 1
        if isinstance(node, ast.TokenSet):
            start, end = nfa.add_state(), nfa.add_state()
            nfa.add_token(start, TokenEdge(node.ids, node.exclude), end)
            return start, end
        if isinstance(node, ast.TagDispatch):
            tags = [(utf8.encode(tag), self._rule(name, node.span)) for tag, name in node.tags]
            excludes = [utf8.encode(e) for e in node.excludes]
            return build_tag_dispatch(nfa, tags, excludes, node.loop_after_dispatch)
        if isinstance(node, ast.TokenTagDispatch):
            return self._token_tag_dispatch(node)
        if isinstance(node, _PrefixTrie):  # literals without tails
            return self._prefix_trie(node, [], deferrable)
        if isinstance(node, ast.Substring):
            return self._substring([utf8.encode(s) for s in node.strings])
        if isinstance(node, (ast.Sequence, ast.Choice)):  # empty group
            state = nfa.add_state()
            return state, state
        raise TypeError(f"unexpected expression {type(node).__name__}")  # pragma: no cover

    def _rule(self, name: str, span: ast.Span | None) -> int:
        rule = self.rule_ids.get(name)
        if rule is None:
            raise GrammarError([error("GK103", f"rule `{name}` is not defined", span,
                                      f"define it with `{name} ::= ...`")])
        return rule

    def _chain(self, data: bytes) -> Fragment:
        nfa = self.nfa
        start = nfa.num_states
        nfa.add_states(len(data) + 1)
        edges = nfa.byte_edges
        for offset, byte in enumerate(data, start):
            edges[offset].append((byte, byte, offset + 1))
        return start, start + len(data)

    def _prefix_trie(self, node: _PrefixTrie, tails: list[Fragment],
                     deferrable: bool = False) -> Fragment:
        """``node``'s alternatives as a trie of their leading literals: words sharing a prefix
        share its states, and the state after each word goes on to its tail (``tails``: the
        fragments of ``node.tails``) or to the end. A large trie may be built node by node
        (``deferrable``, see :class:`Deferral`)."""
        nfa = self.nfa
        start, end = nfa.add_state(), nfa.add_state()
        for _, tail_end in tails:
            nfa.add_epsilon(tail_end, end)
        ending = set(node.words) if not tails else set()  # words after which the choice ends
        going_on: dict[bytes, set[int]] = {}  # the others: the tail starts they go on to
        for word, k in zip(node.words, node.tail_of, strict=True) if tails else ():
            if k is None:
                ending.add(word)
            else:
                going_on.setdefault(word, set()).add(tails[k][0])
        if self._lazy_trie(node, deferrable):
            assert self.defer is not None
            trie = _LazyTrie(nfa, sorted(ending | going_on.keys()), ending, going_on, end,
                             self.defer)
            nfa.deferred[start] = functools.partial(trie.expand, lo=0, hi=len(trie.words),
                                                    depth=0)
            return start, end
        first = nfa.num_states
        moves: list[tuple[int, int, int]] = []  # (state, byte, next state) of the trie
        ends: list[tuple[int, int]] = []  # (state after a word, where the word goes on)
        path = [start]  # path[i]: the state after the first i bytes of the previous word
        previous = b""
        words = ending | going_on.keys() if going_on else ending
        for word in sorted(words):  # sorted: a prefix's words are consecutive
            common = 0
            for a, b in zip(previous, word):
                if a != b:
                    break
                common += 1
            del path[common + 1:]
            for byte in word[common:]:
                state = first + len(moves)
                moves.append((path[-1], byte, state))
                path.append(state)
            if word in ending:
                ends.append((path[-1], end))
            if going_on:
                for target in going_on.get(word, ()):
                    ends.append((path[-1], target))
            previous = word
        nfa.add_states(len(moves))
        byte_edges, epsilon = nfa.byte_edges, nfa.epsilon
        for state, byte, nxt in moves:
            byte_edges[state].append((byte, byte, nxt))
        for state, target in ends:
            epsilon[state].append(target)
        return start, end

    def _lazy_trie(self, node: _PrefixTrie, deferrable: bool) -> bool:
        """Whether ``node`` is built node by node (see :class:`Deferral`)."""
        return (deferrable and self.defer is not None
                and sum(map(len, node.words)) > self.defer.above)

    def _sequences(self, sequences: list[utf8.ByteSequence]) -> Fragment:
        """Any of the byte-range ``sequences`` (a character class)."""
        nfa = self.nfa
        start = nfa.num_states
        end = start + 1
        nfa.add_states(2 + sum(len(sequence) - 1 for sequence in sequences))
        byte_edges = nfa.byte_edges
        fresh = end + 1  # the next unused state
        for sequence in sequences:
            current = start
            last = len(sequence) - 1
            for i, (lo, hi) in enumerate(sequence):
                if i == last:
                    nxt = end
                else:
                    nxt = fresh
                    fresh += 1
                byte_edges[current].append((lo, hi, nxt))
                current = nxt
        return start, end

    def _substring(self, chunks: list[bytes]) -> Fragment:
        nfa = self.nfa
        start, end = nfa.add_state(), nfa.add_state()
        boundary = nfa.add_state()
        nfa.add_epsilon(start, boundary)
        nfa.add_epsilon(boundary, end)
        for chunk in chunks:
            chunk_start, chunk_end = self._chain(chunk)
            nfa.add_epsilon(boundary, chunk_start)
            nfa.add_epsilon(start, chunk_start)
            nfa.add_epsilon(chunk_end, end)
            boundary = chunk_end
        return start, end

    def _token_tag_dispatch(self, node: ast.TokenTagDispatch) -> Fragment:
        nfa = self.nfa
        start, end = nfa.add_state(), nfa.add_state()
        nfa.add_epsilon(start, end)
        after = start
        if not node.loop_after_dispatch:
            after = nfa.add_state()
            nfa.add_epsilon(after, end)
        for token_id, name in node.tags:
            dispatch = nfa.add_state()
            nfa.add_token(start, TokenEdge((token_id,)), dispatch)
            nfa.add_call(dispatch, self._rule(name, node.span), after)
        others = tuple(sorted({t for t, _ in node.tags} | set(node.excludes)))
        nfa.add_token(start, TokenEdge(others, exclude=True), start)
        return start, end

    # -- composites --------------------------------------------------------------------------
    def _sequence(self, parts: list[Fragment]) -> Fragment:
        for (_, end), (start, _) in itertools.pairwise(parts):
            self.nfa.add_epsilon(end, start)
        return parts[0][0], parts[-1][1]

    def _choice(self, parts: list[Fragment]) -> Fragment:
        nfa = self.nfa
        start, end = nfa.add_state(), nfa.add_state()
        for part_start, part_end in parts:
            nfa.add_epsilon(start, part_start)
            nfa.add_epsilon(part_end, end)
        return start, end

    def _repeat(self, node: ast.Repeat, item: Fragment, first_state: int) -> Fragment:
        nfa = self.nfa
        low, high = node.min, node.max
        if high == 0:
            nfa.truncate(first_state)
            state = nfa.add_state()
            return state, state
        copies = high if high is not None else max(low, 1)
        size = nfa.num_states - first_state
        if size * (copies - 1) > UNROLL_LIMIT and not self.unroll:
            return self._counted(low, high, item)
        if size * (copies - 1) > nfa.budget.remaining:
            raise BudgetExceeded
        fragments = [item]
        stop = nfa.num_states
        for _ in range(copies - 1):
            shift = nfa.copy_states(nfa, first_state, stop)
            fragments.append((item[0] + shift, item[1] + shift))
        start, end = nfa.add_state(), nfa.add_state()
        nfa.add_epsilon(start, fragments[0][0])
        for (_, previous_end), (next_start, _) in itertools.pairwise(fragments):
            nfa.add_epsilon(previous_end, next_start)
        nfa.add_epsilon(fragments[-1][1], end)
        if high is None:
            last_start, last_end = fragments[-1]
            nfa.add_epsilon(last_end, last_start)
            if low == 0:
                nfa.add_epsilon(start, end)
        else:
            for k in range(low, copies):
                nfa.add_epsilon(start if k == 0 else fragments[k - 1][1], end)
        return start, end

    def _counted(self, low: int, high: int | None, item: Fragment) -> Fragment:
        """``item{low,high}`` as one copy of ``item`` inside a counted loop."""
        nfa = self.nfa
        body, body_end = item
        loop = Loop(low, high, nullable=_reaches(nfa, body, body_end, through_calls=False),
                    solid=not _reaches(nfa, body, body_end, through_calls=True))
        start, entry, step, end = (nfa.add_state() for _ in range(4))
        nfa.add_epsilon(start, entry)
        if low == 0:
            nfa.add_epsilon(start, end)
        nfa.add_epsilon(body_end, step)
        nfa.add_loop(entry, step, loop, body, end)
        return start, end


class _LazyTrie:
    """A trie of sorted ``words`` built node by node: a node is the range of words sharing
    its prefix; expanding it adds an edge per next byte to the node of the words going on
    with it (a word alone gets its remaining bytes at once), and after each word ending there
    an epsilon edge to ``end`` (``ending``) or to the starts of its tails (``going_on``)."""

    def __init__(self, nfa: NFA, words: list[bytes], ending: set[bytes],
                 going_on: dict[bytes, set[int]], end: int, defer: Deferral):
        self.nfa = nfa
        self.words = words
        self.ending = ending
        self.going_on = going_on
        self.end = end
        self.defer = defer

    def expand(self, state: int, lo: int, hi: int, depth: int) -> None:
        """Build ``state`` as the node of ``words[lo:hi]``, which share ``depth`` bytes."""
        nfa, words = self.nfa, self.words
        try:
            if len(words[lo]) == depth:  # the only word of the range ending here comes first
                self._ends(state, words[lo])
                lo += 1
            while lo < hi:
                word = words[lo]
                byte = word[depth]
                nxt = (bisect.bisect_left(words, word[:depth] + bytes((byte + 1,)), lo, hi)
                       if byte < 0xFF else hi)
                if nxt - lo == 1:  # a word alone: the rest of its bytes now
                    target, last = self._chain(word[depth:])
                    nfa.add_epsilon(state, target)
                    self._ends(last, word)
                else:
                    target = nfa.add_state()
                    nfa.add_bytes(state, byte, byte, target)
                    nfa.deferred[target] = functools.partial(self.expand, lo=lo, hi=nxt,
                                                             depth=depth + 1)
                lo = nxt
        except BudgetExceeded:
            raise self.defer.too_large() from None

    def _chain(self, data: bytes) -> Fragment:
        nfa = self.nfa
        start = nfa.num_states
        nfa.add_states(len(data) + 1)
        for offset, byte in enumerate(data, start):
            nfa.byte_edges[offset].append((byte, byte, offset + 1))
        return start, start + len(data)

    def _ends(self, state: int, word: bytes) -> None:
        if word in self.ending:
            self.nfa.add_epsilon(state, self.end)
        for target in self.going_on.get(word, ()):
            self.nfa.add_epsilon(state, target)


def _empty(expr: ast.Expr) -> bool:
    """Whether ``expr`` is an empty literal or group (an alternative making a choice optional)."""
    return (isinstance(expr, ast.Literal) and not expr.value
            or isinstance(expr, ast.Sequence) and not expr.items)


def surely_exceeds(expr: ast.Expr, limit: int) -> bool:
    """Whether :func:`build_expression` surely adds more than ``limit`` states for ``expr``.

    A lower bound read off the tree, stopping once it passes ``limit``: literals count their
    bytes, classes their byte sequences, a choice its alternatives (those sharing a trie of
    leading literals only once), a repetition one copy; references and other leaves count one
    state (a reference may be built in place; that only adds states). ``False`` says nothing:
    the automaton may still be larger.
    """
    size = 0
    stack: list[Any] = [expr]  # Any: nodes are told apart by ``type(node) is``, fast
    pop, extend = stack.pop, stack.extend
    literal, sequence, choice, repeat = ast.Literal, ast.Sequence, ast.Choice, ast.Repeat
    while stack:
        node = pop()
        kind = type(node)
        if kind is literal:
            size += len(node.value.encode("utf-8", "surrogatepass")) + 1
        elif kind is sequence:
            if node.items:
                extend(node.items)
            else:
                size += 1
        elif kind is choice:
            size += 1
            first_word = True  # alternatives beginning with a literal may share one trie
            for alternative in node.alternatives:
                if (type(alternative) is literal or type(alternative) is sequence
                        and alternative.items and type(alternative.items[0]) is literal):
                    if not first_word:
                        continue
                    first_word = False
                stack.append(alternative)
            if first_word:
                size += 1
        elif kind is repeat:
            if node.max == 0:
                size += 1
            else:
                stack.append(node.item)
        elif kind is ast.CharClass:
            size += 2 + sum(len(sequence) - 1
                            for sequence in _class_sequences(node.ranges, node.negated))
        elif kind is ast.TokenSet:
            size += 2
        else:
            size += 1
        if size > limit:
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _class_sequences(ranges: tuple[tuple[int, int], ...], negated: bool
                     ) -> list[utf8.ByteSequence]:
    """The byte sequences of a character class (outside ``Regex``); do not modify them."""
    return utf8.byte_sequences(utf8.class_codepoints(ranges, negated))


@dataclass(frozen=True, slots=True)
class _PrefixTrie:
    """Alternatives of a choice that each begin with a literal, built as one trie of those
    literals (a choice of 100,000 words, or of 10,000 ``"w..." [0-9]*``, is one trie whose
    start has one state, not 100,000 branches): after ``words[i]`` comes the tail
    ``tails[tail_of[i]]`` (``None``: the alternative ends there). Equal tails are one tail,
    built once (every tail ends the choice, so alternatives may share it)."""

    words: tuple[bytes, ...]
    tail_of: tuple[int | None, ...]
    tails: tuple[ast.Expr, ...]


def _spelled_out(node: ast.Choice, inline: Callable[[str], ast.Expr | None]) -> ast.Choice:
    """``node`` with each alternative led by a reference to a rule of literals (``char.a ::=
    "a" | "\\u0061"``, built in place) split into one alternative per literal, sharing the
    rest: a converted enum's trie of ``char.X`` rules becomes a trie of bytes."""
    alternatives: list[ast.Expr] = []
    for alternative in node.alternatives:
        items = alternative.items if isinstance(alternative, ast.Sequence) else (alternative,)
        body = inline(items[0].name) if items and isinstance(items[0], ast.RuleRef) else None
        literals = (() if body is None
                    else body.alternatives if isinstance(body, ast.Choice) else (body,))
        if not literals or not all(type(literal) is ast.Literal for literal in literals):
            alternatives.append(alternative)
            continue
        rest = items[1] if len(items) == 2 else ast.Sequence(items[1:], alternative.span)
        alternatives += [literal if len(items) == 1 else ast.Sequence((literal, rest), None)
                         for literal in literals]
    return ast.Choice(tuple(alternatives), node.span)


def _factored(node: ast.Choice, hashed: bool = True) -> ast.Choice | _PrefixTrie:
    """``node`` with its alternatives that begin with a literal gathered into one
    :class:`_PrefixTrie` (when there are at least two: the same language, fewer states).

    Equal tails are one tail: the same object always, equal shallow ones if ``hashed`` (a
    part built lazily skips hashing them, each tail is built only when reached)."""
    alternatives = node.alternatives
    if all(type(alternative) is ast.Literal for alternative in alternatives):  # an enum
        return _PrefixTrie(tuple(utf8.encode(a.value) for a in alternatives),  # type: ignore[union-attr]
                           (None,) * len(alternatives), ())
    words: list[bytes] = []
    tail_of: list[int | None] = []
    tails: list[ast.Expr] = []
    numbers: dict[ast.Expr, int] = {}  # the number of each shallow tail
    shared: dict[int, int] = {}  # the number of each tail by identity (spelled-out ones)
    others: list[ast.Expr] = []
    for alternative in node.alternatives:
        if isinstance(alternative, ast.Literal):
            words.append(utf8.encode(alternative.value))
            tail_of.append(None)
        elif (isinstance(alternative, ast.Sequence) and alternative.items
              and isinstance(first := alternative.items[0], ast.Literal)):
            items = alternative.items
            words.append(utf8.encode(first.value))
            if len(items) == 1:
                tail_of.append(None)
                continue
            tail = items[1] if len(items) == 2 else ast.Sequence(items[1:], alternative.span)
            known = shared.get(id(tail))
            # a deep tail is not hashed (that recurses as deep)
            shallow = known is None and hashed and _shallow(tail)
            if shallow:
                known = numbers.get(tail)
            if known is None:
                known = shared[id(tail)] = len(tails)
                tails.append(tail)
                if shallow:
                    numbers[tail] = known
            tail_of.append(known)
        else:
            others.append(alternative)
    if len(words) < 2:
        return node
    trie = _PrefixTrie(tuple(words), tuple(tail_of), tuple(tails))
    if not others:
        return trie
    return ast.Choice((*others, trie), node.span)  # type: ignore[arg-type]


def _shallow(expr: ast.Expr, depth: int = 16) -> bool:
    """Whether ``expr`` nests at most ``depth`` deep."""
    level = [expr]
    for _ in range(depth):
        level = [kid for node in level for kid in ast.children(node)]
        if not level:
            return True
    return False


def _reaches(nfa: NFA, source: int, target: int, through_calls: bool) -> bool:
    """Whether ``target`` is reachable from ``source`` consuming no byte.

    Nested counted loops are entered and left (leaving only where their body is nullable, as
    epsilon paths can only reach its end then); with ``through_calls``, rule calls and tokens
    count as consuming nothing.
    """
    seen = {source}
    stack = [source]
    while stack:
        s = stack.pop()
        if s == target:
            return True
        nxt = list(nfa.epsilon[s])
        if s in nfa.push:
            nxt.append(nfa.push[s][1])
        if s in nfa.step:
            nxt.append(nfa.step[s][2])
        if through_calls:
            nxt += [t for _, t in nfa.call_edges[s]] + [t for _, t in nfa.token_edges[s]]
        for t in nxt:
            if t not in seen:
                seen.add(t)
                stack.append(t)
    return False
