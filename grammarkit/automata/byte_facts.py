"""Whole-grammar byte facts read off the rule bodies, without building any automaton.

The token-mask decoder needs two facts about *every* rule before its first mask: the byte
ranges some edge may carry (bytes in the same ranges everywhere are never told apart) and,
per rule, the bytes that may follow it (FOLLOW sets). Reading them off the compiled automata
would compile every rule of a 100,000-rule grammar; one walk over the rule bodies gives them
in time linear in the text:

* **byte ranges**: exactly the ranges :mod:`grammarkit.automata.construct` puts on edges
  (literal bytes, the UTF-8 sequences of classes; the leaves a construction builds in a more
  involved way, ``Regex``, ``TagDispatch``, ``Substring``, are built once each on their own and
  their edges read). Determinized and minimized automata only carry unions of these ranges, so
  the classes they induce are never coarser than the automata's.
* **FOLLOW sets**: the textbook FIRST/FOLLOW fixpoint over bytes, with calls of nullable rules
  stepped over and counters ignored (``x{2,5}`` may follow itself), as on the NFAs. Rules a
  ``TagDispatch`` or ``TokenTagDispatch`` dispatches to may be followed by any byte (a
  superset). The sets are over every context in the rule bodies, a superset of what the
  inlined automata still call, which is what the decoder relies on.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
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

_NO_RULES: frozenset[int] = frozenset()


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
    """

    def __init__(self, rules: Sequence[ast.Rule], rule_ids: Mapping[str, int],
                 nullable: Container[int], expand: Callable[[ast.RegexMacro], ast.Expr]):
        self._rule_ids = rule_ids
        self._nullable = nullable
        self._expand = expand
        self._leaves: dict[Any, tuple[frozenset[tuple[int, int]], Summary]] = {}
        self._class_ranges: dict[tuple[Any, bool], tuple[frozenset[tuple[int, int]], int]] = {}
        self.byte_ranges: set[tuple[int, int]] = set()
        """Every byte range an edge of some rule automaton may carry."""
        count = len(rules)
        first = [0] * (count + 1)
        first_users: list[set[int]] = [set() for _ in range(count + 1)]
        follow = [0] * (count + 1)
        follow_firsts: list[set[int]] = [set() for _ in range(count + 1)]
        heirs: list[set[int]] = [set() for _ in range(count + 1)]
        literal_bytes: set[int] = set()
        for number, rule in enumerate(rules):
            summaries = self._summaries(rule.body, literal_bytes)
            bits, called, _ = summaries[id(rule.body)]
            first[number] = bits
            for callee in called:
                first_users[callee].add(number)
            self._contexts(number, rule.body, summaries, follow, follow_firsts, heirs)
        self.byte_ranges.update((b, b) for b in literal_bytes)
        _propagate(first, first_users)
        for callee, sources in enumerate(follow_firsts):
            for source in sources:
                follow[callee] |= first[source]
        _propagate(follow, heirs)
        self.follow = follow
        """Per rule (the entry pseudo-rule last, always 0): the bytes that may follow it."""

    # -- one body ----------------------------------------------------------------------------
    def _summaries(self, body: ast.Expr, literal_bytes: set[int]) -> dict[int, Summary]:
        """The :data:`Summary` of every node of ``body`` (by ``id``), collecting byte ranges."""
        found: dict[int, Summary] = {}
        stack: list[tuple[Any, bool]] = [(body, False)]
        rule_ids, nullable = self._rule_ids, self._nullable
        while stack:
            node, ready = stack.pop()
            kind = type(node)
            if kind is ast.Literal:
                data = utf8.encode(node.value)
                literal_bytes.update(data)
                found[id(node)] = (1 << data[0], _NO_RULES, False) if data else (
                    0, _NO_RULES, True)
            elif kind is ast.RuleRef:
                rule = rule_ids[node.name]
                found[id(node)] = (0, frozenset((rule,)), rule in nullable)
            elif kind is ast.CharClass:
                ranges, bits = self._class(node.ranges, node.negated)
                self.byte_ranges.update(ranges)
                found[id(node)] = (bits, _NO_RULES, False)
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
                ranges, summary = self._leaf(node)
                self.byte_ranges.update(ranges)
                found[id(node)] = summary
        return found

    def _contexts(self, rule: int, body: ast.Expr, summaries: dict[int, Summary],
                  follow: list[int], follow_firsts: list[set[int]], heirs: list[set[int]]
                  ) -> None:
        """Record, for each reference in ``body``, what may follow it there."""
        rule_ids = self._rule_ids
        # (node, bytes that may follow it, rules whose FIRST may follow it, may the rule end)
        stack: list[tuple[Any, int, frozenset[int], bool]] = [(body, 0, _NO_RULES, True)]
        while stack:
            node, bits, called, ends = stack.pop()
            kind = type(node)
            if kind is ast.RuleRef:
                callee = rule_ids[node.name]
                follow[callee] |= bits
                follow_firsts[callee].update(called)
                if ends:
                    heirs[rule].add(callee)
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
            elif kind is ast.TagDispatch or kind is ast.TokenTagDispatch:
                for _, name in node.tags:  # any byte may follow a dispatched rule (a superset)
                    follow[rule_ids[name]] = ANY_BYTE

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


def _propagate(bits: list[int], users: list[set[int]]) -> None:
    """Close ``bits`` under ``bits[u] |= bits[r]`` for every ``u`` in ``users[r]`` (a worklist)."""
    pending = [r for r in range(len(bits)) if bits[r] and users[r]]
    while pending:
        rule = pending.pop()
        value = bits[rule]
        for user in users[rule]:
            merged = bits[user] | value
            if merged != bits[user]:
                bits[user] = merged
                pending.append(user)
