"""Whole-grammar byte facts read off the rule bodies, without building any automaton.

The token-mask decoder needs two facts about the rules before its first mask: the byte
ranges some edge of *any* rule may carry (bytes in the same ranges everywhere are never told
apart) and, per rule, the bytes that may follow it (FOLLOW sets). Reading them off the compiled
automata would compile every rule of a 100,000-rule grammar; they are read off the rule bodies
instead, and only as far as they are asked for:

* **byte ranges**: exactly the ranges :mod:`grammarkit.automata.construct` puts on edges
  (literal bytes, the UTF-8 sequences of classes; the leaves a construction builds in a more
  involved way, ``Regex``, ``TagDispatch``, ``Substring``, are built once each on their own and
  their edges read). They come from the distinct literals, classes and leaves that the
  compiler's one walk over the reachable bodies collects (:class:`ReachedBodies`), so no
  second walk is needed. Determinized and minimized automata only carry unions of these
  ranges, so the classes they induce are never coarser than the automata's.
* **FOLLOW sets**: the textbook FIRST/FOLLOW fixpoint over bytes, with calls of nullable rules
  stepped over and counters ignored (``x{2,5}`` may follow itself), as on the NFAs. Rules a
  ``TagDispatch`` or ``TokenTagDispatch`` dispatches to may be followed by any byte (a
  superset). The sets are over every context in the rule bodies, a superset of what the
  inlined automata still call, which is what the decoder relies on. A rule's set is solved the
  first time it is read (:class:`FollowSets`), from the bodies of its callers, of their callers
  where it may end them, and of the rules whose FIRST bytes may come after it: the rules near
  a parse's position, not the whole grammar.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from grammarkit.automata import utf8
from grammarkit.automata.construct import build_expression
from grammarkit.automata.nfa import NFA, Budget
from grammarkit.ebnf import ast

ANY_BYTE = (1 << 256) - 1
"""Every byte, as a 256-bit int."""

_LEAF_STATES = 5_000_000
"""The state budget of the scratch automaton one involved leaf is built in."""

Summary = tuple[int, frozenset[int], bool]
"""An expression's FIRST bytes (256-bit int), the rules whose FIRST bytes it starts with, and
whether it derives the empty string."""

Context = tuple[int, frozenset[int], bool]
"""What may follow a reference in one body: bytes, rules whose FIRST bytes, and whether the
reference may end the body (then whatever follows the body's rule)."""

_NO_RULES: frozenset[int] = frozenset()

_SCANS_BEFORE_INDEX = 16
"""Callers looked up by scanning every body's references before an index of them is built
(a scan costs about a tenth of building the index)."""


@dataclass
class ReachedBodies:
    """What one walk over the reachable rule bodies collects for :class:`ByteFacts`.

    Attributes
    ----------
    literals
        The literal strings (repeated as they occur: a list is cheaper to fill than a set).
    classes
        The character classes (as they occur).
    leaves
        The distinct ``Regex``, ``TagDispatch``, ``TokenTagDispatch``, ``Substring`` and token
        nodes (built on their own for their byte ranges).
    references
        Per rule that references others, its name and the names it references (once per
        reference).
    dispatched
        The names of the rules a ``TagDispatch`` or ``TokenTagDispatch`` dispatches to.
    tokens
        Every ``Token``/``ExcludeToken`` and ``TokenTagDispatch`` node, in walk order (their
        ids are checked against a vocabulary by the decoder).
    """

    literals: list[str] = field(default_factory=list)
    classes: list[ast.CharClass] = field(default_factory=list)
    leaves: set[Any] = field(default_factory=set)
    references: list[tuple[str, list[str]]] = field(default_factory=list)
    dispatched: set[str] = field(default_factory=set)
    tokens: list[Any] = field(default_factory=list)


class ByteFacts:
    """Byte ranges and FOLLOW sets of the rules ``rules`` (numbered in that order).

    Parameters
    ----------
    rules
        The rules, numbered in this order.
    rule_ids
        Rule numbers by name.
    nullable
        The rules that derive the empty string.
    expand
        The expression of a ``Regex`` macro.
    reached
        The literals, classes, leaves and references of ``rules``' bodies.
    """

    def __init__(self, rules: Sequence[ast.Rule], rule_ids: Mapping[str, int],
                 nullable: Container[int], expand: Callable[[ast.RegexMacro], ast.Expr],
                 reached: ReachedBodies):
        self._rules = rules
        self._rule_ids = rule_ids
        self._nullable = nullable
        self._expand = expand
        self._reached = reached
        self._leaves: dict[Any, tuple[frozenset[tuple[int, int]], Summary]] = {}
        self._class_ranges: dict[tuple[Any, bool], tuple[frozenset[tuple[int, int]], int]] = {}
        self._byte_ranges: set[tuple[int, int]] | None = None
        self._first: dict[int, int] = {}
        self._contexts: dict[int, dict[int, Context]] = {}
        self._callers_of: dict[str, list[str]] | None = None
        self._scans = 0
        self.follow = FollowSets(self, len(rules))
        """Per rule (the entry pseudo-rule last, always 0): the bytes that may follow it."""

    @property
    def byte_ranges(self) -> set[tuple[int, int]]:
        """Every byte range an edge of some rule automaton may carry."""
        if self._byte_ranges is None:
            reached = self._reached
            ranges = {(b, b) for b in set(utf8.encode("".join(set(reached.literals))))}
            for key in {(node.ranges, node.negated) for node in reached.classes}:
                ranges.update(self._class(*key)[0])
            for leaf in reached.leaves:
                ranges.update(self._leaf(leaf)[0])
            self._byte_ranges = ranges
        return self._byte_ranges

    # -- FOLLOW, solved on demand --------------------------------------------------------------
    def solve_follow(self, first: int) -> dict[int, int]:
        """The FOLLOW sets of ``first`` and of the rules whose sets flow into it, solved.

        Those are its callers where it may end them, transitively: each gets a set complete
        over every context in the grammar.
        """
        known = self.follow.known
        ids = self._rule_ids
        dispatched = {ids[name] for name in self._reached.dispatched}
        rules = self._rules
        bits: dict[int, int] = {}
        firsts: dict[int, set[int]] = {}
        heirs: dict[int, list[int]] = {}  # rule -> rules whose FOLLOW flows into it
        pending = [first]
        inside = {first}
        while pending:
            rule = pending.pop()
            value = ANY_BYTE if rule in dispatched else 0
            starts: set[int] = set()
            up: list[int] = []
            for caller in {ids[name] for name in self._callers(rules[rule].name)}:
                context = self._contexts_in(caller).get(rule)
                if context is None:  # referenced only inside `x{0}`
                    continue
                context_bits, context_firsts, ends = context
                value |= context_bits
                starts |= context_firsts
                if ends:
                    found = known[caller]
                    if found is not None:
                        value |= found
                    else:
                        up.append(caller)
                        if caller not in inside:
                            inside.add(caller)
                            pending.append(caller)
            bits[rule], firsts[rule], heirs[rule] = value, starts, up
        first_bits = self._first_sets({r for used in firsts.values() for r in used})
        users: dict[int, list[int]] = {}
        for rule, up in heirs.items():
            for used in firsts[rule]:
                bits[rule] |= first_bits[used]
            for caller in up:
                users.setdefault(caller, []).append(rule)
        _propagate(bits, users)
        return bits

    def _callers(self, name: str) -> list[str]:
        """The names of the rules whose bodies reference rule ``name``.

        The first :data:`_SCANS_BEFORE_INDEX` requests scan the references (a first mask asks
        for a few rules); later ones read an index of every rule's callers, built once.
        """
        if self._callers_of is None:
            references = self._reached.references
            if self._scans < _SCANS_BEFORE_INDEX:
                self._scans += 1
                return [caller for caller, called in references if name in called]
            self._callers_of = {}
            for caller, called in references:
                for callee in called:
                    found = self._callers_of.get(callee)
                    if found is None:
                        self._callers_of[callee] = [caller]
                    else:
                        found.append(caller)
        return self._callers_of.get(name, [])

    def _contexts_in(self, caller: int) -> dict[int, Context]:
        """Per rule referenced in ``caller``'s body: what may follow it there (cached)."""
        found = self._contexts.get(caller)
        if found is None:
            body = self._rules[caller].body
            found = self._contexts[caller] = _contexts(body, self._summaries(body),
                                                       self._rule_ids)
        return found

    def _first_sets(self, wanted: set[int]) -> dict[int, int]:
        """The FIRST bytes of the ``wanted`` rules (and of those they start with), solved."""
        solved = self._first
        bits: dict[int, int] = {}
        users: dict[int, list[int]] = {}
        pending = [rule for rule in wanted if rule not in solved]
        while pending:
            rule = pending.pop()
            if rule in bits:
                continue
            body = self._rules[rule].body
            value, called, _ = self._summaries(body)[id(body)]
            for callee in called:
                if callee in solved:
                    value |= solved[callee]
                else:
                    users.setdefault(callee, []).append(rule)
                    pending.append(callee)
            bits[rule] = value
        _propagate(bits, users)
        solved.update(bits)
        return {rule: solved[rule] for rule in wanted}

    # -- one body ----------------------------------------------------------------------------
    def _summaries(self, body: ast.Expr) -> dict[int, Summary]:
        """The :data:`Summary` of every node of ``body`` (by ``id``)."""
        found: dict[int, Summary] = {}
        stack: list[tuple[Any, bool]] = [(body, False)]
        rule_ids, nullable = self._rule_ids, self._nullable
        while stack:
            node, ready = stack.pop()
            kind = type(node)
            if kind is ast.Literal:
                data = utf8.encode(node.value)
                found[id(node)] = (1 << data[0], _NO_RULES, False) if data else (
                    0, _NO_RULES, True)
            elif kind is ast.RuleRef:
                rule = rule_ids[node.name]
                found[id(node)] = (0, frozenset((rule,)), rule in nullable)
            elif kind is ast.CharClass:
                found[id(node)] = (self._class(node.ranges, node.negated)[1], _NO_RULES, False)
            elif kind is ast.Sequence or kind is ast.Choice:
                kids = node.items if kind is ast.Sequence else node.alternatives
                if not ready:
                    stack.append((node, True))
                    stack.extend((kid, False) for kid in kids)
                    continue
                found[id(node)] = (_sequence(found, kids) if kind is ast.Sequence
                                   else _choice(found, kids))
            elif kind is ast.Repeat:
                if node.max == 0:
                    found[id(node)] = (0, _NO_RULES, True)
                elif not ready:
                    stack.append((node, True))
                    stack.append((node.item, False))
                else:
                    bits, called, empty = found[id(node.item)]
                    found[id(node)] = (bits, called, empty or node.min == 0)
            else:  # Regex, TagDispatch, Substring, Token...: built on their own, once each
                found[id(node)] = self._leaf(node)[1]
        return found

    # -- leaves ------------------------------------------------------------------------------
    def _class(self, ranges: Any, negated: bool) -> tuple[frozenset[tuple[int, int]], int]:
        key = (ranges, negated)
        found = self._class_ranges.get(key)
        if found is None:
            sequences = utf8.byte_sequences(utf8.class_codepoints(ranges, negated))
            bits = 0
            for sequence in sequences:
                lo, hi = sequence[0]
                bits |= ((1 << (hi + 1 - lo)) - 1) << lo
            found = self._class_ranges[key] = (
                frozenset(r for sequence in sequences for r in sequence), bits)
        return found

    def _leaf(self, node: Any) -> tuple[frozenset[tuple[int, int]], Summary]:
        """Byte ranges and summary of a leaf built on its own (its calls count as any byte)."""
        found = self._leaves.get(node)
        if found is None:
            names = {name: 0 for _, name in getattr(node, "tags", ())}
            nfa = NFA(Budget(_LEAF_STATES))
            start, end = build_expression(nfa, node, names, self._expand)
            ranges = frozenset((lo, hi) for edges in nfa.byte_edges for lo, hi, _ in edges)
            closure = nfa.epsilon_closure((start,))
            bits = 0
            for s in closure:
                for lo, hi, _ in nfa.byte_edges[s]:
                    bits |= ((1 << (hi + 1 - lo)) - 1) << lo
            found = self._leaves[node] = (ranges, (bits, _NO_RULES, end in closure))
        return found


def _sequence(found: dict[int, Summary], items: Sequence[Any]) -> Summary:
    bits = 0
    called: set[int] = set()
    for item in items:
        item_bits, item_called, empty = found[id(item)]
        bits |= item_bits
        called.update(item_called)
        if not empty:
            return bits, frozenset(called), False
    return bits, frozenset(called), True


def _choice(found: dict[int, Summary], alternatives: Sequence[Any]) -> Summary:
    bits = 0
    called: set[int] = set()
    empty = not alternatives
    for alternative in alternatives:
        item_bits, item_called, item_empty = found[id(alternative)]
        bits |= item_bits
        called.update(item_called)
        empty = empty or item_empty
    return bits, frozenset(called), empty


def _contexts(body: ast.Expr, summaries: dict[int, Summary], rule_ids: Mapping[str, int]
              ) -> dict[int, Context]:
    """Per rule referenced in ``body``: what may follow its references there, merged."""
    found: dict[int, Context] = {}
    # (node, bytes that may follow it, rules whose FIRST may follow it, may the rule end)
    stack: list[tuple[Any, int, frozenset[int], bool]] = [(body, 0, _NO_RULES, True)]
    while stack:
        node, bits, called, ends = stack.pop()
        kind = type(node)
        if kind is ast.RuleRef:
            callee = rule_ids[node.name]
            seen = found.get(callee)
            found[callee] = (bits, called, ends) if seen is None else (
                seen[0] | bits, seen[1] | called, seen[2] or ends)
        elif kind is ast.Sequence:
            for item in reversed(node.items):
                stack.append((item, bits, called, ends))
                item_bits, item_called, empty = summaries[id(item)]
                if empty:
                    bits |= item_bits
                    if item_called:
                        called = called | item_called
                else:
                    bits, called, ends = item_bits, item_called, False
        elif kind is ast.Choice:
            stack.extend((kid, bits, called, ends) for kid in node.alternatives)
        elif kind is ast.Repeat:
            if node.max == 0:
                continue
            if node.max is None or node.max >= 2:  # an iteration may follow another
                item_bits, item_called, _ = summaries[id(node.item)]
                bits |= item_bits
                if item_called:
                    called = called | item_called
            stack.append((node.item, bits, called, ends))
    return found


def _propagate(bits: dict[int, int], users: dict[int, list[int]]) -> None:
    """Close ``bits`` under ``bits[u] |= bits[r]`` for every ``u`` in ``users[r]`` (a worklist)."""
    pending = [r for r, value in bits.items() if value and r in users]
    while pending:
        rule = pending.pop()
        value = bits[rule]
        for user in users.get(rule, ()):
            merged = bits[user] | value
            if merged != bits[user]:
                bits[user] = merged
                pending.append(user)


class FollowSets(Sequence[int]):
    """FOLLOW sets by rule number (the entry pseudo-rule last, always 0), each solved the
    first time it is read (:meth:`ByteFacts.solve_follow`)."""

    def __init__(self, facts: ByteFacts, count: int):
        self._facts = facts
        self.known: list[int | None] = [None] * count + [0]
        """The sets solved so far (``None``: not yet)."""

    def __len__(self) -> int:
        return len(self.known)

    def __getitem__(self, rule: int) -> int:  # type: ignore[override]  # no slices
        found = self.known[rule]
        if found is None:
            for solved, bits in self._facts.solve_follow(rule).items():
                self.known[solved] = bits
            found = self.known[rule]
            assert found is not None
        return found

    def __iter__(self) -> Iterator[int]:
        return (self[rule] for rule in range(len(self.known)))
