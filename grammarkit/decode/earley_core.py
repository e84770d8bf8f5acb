"""`EarleyCore`: the one place the decoder touches the Earley recognizer's internals.

The decoder needs more than :class:`~grammarkit.automata.earley.Recognizer`'s public
``initial``/``advance``/``is_accepting``: it steps single configurations (interned sets of
rule-automaton states), closes kernels, reads byte rows, and decides which groups and parent
entries of a parse state can still act. Those live in the recognizer's private per-grammar
tables; this adapter wraps them behind a small public API so the rest of ``grammarkit.decode``
depends on nothing private.
"""

from __future__ import annotations

from collections.abc import Sequence

from grammarkit.automata.char_deadlines import DeadlineScan
from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.earley import Frame, ParseState, Recognizer
from grammarkit.automata.nfa import TokenEdge

__all__ = ["EarleyCore", "Frame", "ParseState"]


class EarleyCore:
    """Earley steps and configuration properties of one compiled grammar."""

    def __init__(self, compiled: CompiledGrammar):
        self.compiled = compiled
        compiled.prefer_minimal()  # masks are computed per state: fewer states, fewer masks
        self.recognizer = Recognizer(compiled)
        self._tables = self.recognizer._tables  # the recognizer's shared memo tables
        self.empty_config = self._tables.closed_config(())
        self._calls: dict[int, frozenset[int]] = {}
        self._rules: dict[int, frozenset[int]] = {}
        self._inactive: dict[int, bool] = {}
        self._token_edges: dict[int, tuple[tuple[TokenEdge, int], ...]] = {}
        self._follow: Sequence[int] | None = None
        self._canonical: dict[tuple[int, int], int] = {}
        self._follow_of: dict[int, tuple[tuple[int, int], ...]] = {}
        self._callers: dict[tuple[int, int], tuple[int, frozenset[int]]] = {}

    # -- whole states ----------------------------------------------------------------------------
    def initial(self) -> ParseState:
        """The state before any input."""
        return self.recognizer.initial()

    def advance(self, state: ParseState, data: bytes) -> ParseState | None:
        """The state after ``data``, or ``None`` if the grammar rejects it."""
        return self.recognizer.advance(state, data)

    def is_accepting(self, state: ParseState) -> bool:
        """Whether the input so far is a complete sentence."""
        return self.recognizer.is_accepting(state)

    def close(self, kernel: dict[Frame, int], position: int) -> ParseState:
        """The state of ``kernel`` (groups just stepped) after completion and prediction."""
        return ParseState(position, tuple(self._tables.close(kernel, position).items()))

    def deadline_scan(self) -> DeadlineScan:
        """A new scan giving items the character deadlines of the grammar's ``max_chars``
        rules (see :mod:`grammarkit.automata.char_deadlines`)."""
        return DeadlineScan(self._tables, self.compiled.char_deadlines)

    # -- configurations --------------------------------------------------------------------------
    def config(self, states: frozenset[int] | list[int]) -> int:
        """The configuration of ``states``, closed under nullable calls."""
        return self._tables.closed_config(states)

    def states(self, config: int) -> frozenset[int]:
        """The rule-automaton states of ``config``."""
        return self._tables.configs[config]

    def union(self, a: int, b: int) -> int:
        """The configuration holding the states of both."""
        return self._tables.union(a, b)

    def canonical(self, config: int, horizon: int) -> int:
        """A configuration accepting the same byte strings as ``config`` up to ``horizon`` bytes.

        Counts of counted repetitions far from their bounds are replaced by one representative
        (see :meth:`CompiledGrammar.canonical_state`); without counters, ``config`` itself.
        """
        if not self.compiled.counted:
            return config
        key = (config, horizon)
        found = self._canonical.get(key)
        if found is None:
            canonical = self.compiled.canonical_state
            states = self._tables.configs[config]
            found = self._canonical[key] = self._tables.closed_config(
                [canonical(s, horizon) for s in states])
        return found

    def byte_row(self, config: int) -> list[int]:
        """The configuration each byte leads ``config`` to (``-1``: rejected)."""
        row = self._tables.rows[config]
        return row if row is not None else self._tables.build_row(config)

    def completes(self, config: int) -> tuple[int, ...]:
        """The rules ``config`` completes."""
        return self._tables.completes[config]

    def return_configs(self, config: int) -> tuple[int, ...]:
        """The configurations ``config`` continues in once a rule it calls completes."""
        return tuple(self._tables.returns(config).values())

    def num_configs(self) -> int:
        """Configurations interned so far (they are numbered ``0..n-1``)."""
        return len(self._tables.configs)

    def token_edges(self, config: int) -> tuple[tuple[TokenEdge, int], ...]:
        """The ``Token``/``ExcludeToken`` edges leaving the states of ``config``."""
        found = self._token_edges.get(config)
        if found is None:
            edges = self.compiled.token_edges
            found = tuple(e for s in sorted(self._tables.configs[config]) for e in edges[s])
            self._token_edges[config] = found
        return found

    def calls(self, config: int) -> frozenset[int]:
        """The rules some state of ``config`` calls."""
        found = self._calls.get(config)
        if found is None:
            edges = self.compiled.call_edges
            found = frozenset(r for s in self._tables.configs[config] for r, _ in edges[s])
            self._calls[config] = found
        return found

    def rules(self, config: int) -> frozenset[int]:
        """The rules owning the states of ``config``."""
        found = self._rules.get(config)
        if found is None:
            owner = self.compiled.state_rule
            found = frozenset(owner[s] for s in self._tables.configs[config])
            self._rules[config] = found
        return found


    def completion_callers(self, config: int, own: int) -> tuple[int, frozenset[int]]:
        """What a group ``config`` at a frame that predicted ``own`` can complete into there.

        Returns ``(callers, rules)``: the configuration of the states of ``own`` that call a
        rule the group can complete at its frame (``own``'s other states never act on it),
        and those rules (the group's own, and those of the callers, which can complete in
        turn). ``returns(callers)`` agrees with ``returns(own)`` on every such rule.
        """
        key = (config, own)
        found = self._callers.get(key)
        if found is None:
            call_edges, owner = self.compiled.call_edges, self.compiled.state_rule
            rules = set(self.rules(config))
            pending = set(self._tables.configs[own])
            kept: list[int] = []
            grown = True
            while grown:
                grown = False
                for s in list(pending):
                    if any(rule in rules for rule, _ in call_edges[s]):
                        pending.discard(s)
                        kept.append(s)
                        if owner[s] not in rules:
                            rules.add(owner[s])
                            grown = True
            found = self._callers[key] = (self.config(kept), frozenset(rules))
        return found

    def follow_of(self, rules: frozenset[int]) -> tuple[tuple[int, int], ...]:
        """The bytes that can come right after each of ``rules`` completes (as :meth:`follow`,
        for these rules)."""
        if self._follow is None:
            self._follow = self.compiled.follow_sets()
        follow = self._follow
        return tuple((r, follow[r]) for r in sorted(rules) if follow[r])

    def follow(self, own: int) -> tuple[tuple[int, int], ...]:
        """For each rule ``own`` predicts: the bytes that can come right after it completes.

        Pairs ``(rule, bytes as a 256-bit int)``, ascending, over any context in the grammar
        (FOLLOW sets over bytes, closed over rules that complete at once with the rule); rules
        nothing can follow are left out.
        """
        found = self._follow_of.get(own)
        if found is None:
            if self._follow is None:
                self._follow = self.compiled.follow_sets()
            follow = self._follow
            found = tuple((r, follow[r]) for r in sorted(self.rules(own)) if follow[r])
            self._follow_of[own] = found
        return found

    def is_inactive(self, config: int) -> bool:
        """Whether a group in ``config`` can do nothing more (its completions are done).

        No byte, call or token edges leave it, and it does not accept.
        """
        found = self._inactive.get(config)
        if found is None:
            g = self.compiled
            states = self._tables.configs[config]
            found = (not self._tables.accepting[config]
                     and not any(g.byte_edges[s] or g.call_edges[s] or g.token_edges[s]
                                 for s in states))
            self._inactive[config] = found
        return found
