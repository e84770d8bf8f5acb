"""The compiler's working automaton: a growable NFA over bytes, rule calls and tokens.

States are consecutive ints from 0. Each state has four edge lists:

``byte_edges[s]``
    ``(lo, hi, target)``: one byte in ``lo..hi`` (inclusive) moves to ``target``.
``call_edges[s]``
    ``(rule, target)``: a complete derivation of rule number ``rule`` moves to ``target``.
``token_edges[s]``
    ``(TokenEdge, target)``: one vocabulary token (``Token(...)``/``ExcludeToken(...)``); no byte
    string ever matches it.
``epsilon[s]``
    targets reached without consuming anything.

Every automaton has one ``start`` state and a set of ``finals``. :class:`Budget` bounds how many
states all automata of one grammar may create, so hostile grammars fail fast instead of eating
memory.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenEdge:
    """A token-level symbol: one of ``ids`` or, when ``exclude``, any token but those."""

    ids: tuple[int, ...]
    exclude: bool = False

    def __str__(self) -> str:
        name = "ExcludeToken" if self.exclude else "Token"
        return f"{name}({', '.join(map(str, self.ids))})"


class BudgetExceeded(Exception):
    """Raised by :meth:`Budget.spend` when a grammar needs more states than allowed."""


class Budget:
    """A countdown of automaton states shared by every automaton built for one grammar."""

    def __init__(self, limit: int):
        self.limit = limit
        self.remaining = limit

    def spend(self, count: int = 1) -> None:
        """Take ``count`` states, or raise :class:`BudgetExceeded`."""
        self.remaining -= count
        if self.remaining < 0:
            raise BudgetExceeded


class NFA:
    """A nondeterministic automaton; see the module docstring for the edge kinds."""

    __slots__ = (
        "budget",
        "byte_edges",
        "call_edges",
        "epsilon",
        "finals",
        "start",
        "token_edges",
    )

    def __init__(self, budget: Budget):
        self.byte_edges: list[list[tuple[int, int, int]]] = []
        self.call_edges: list[list[tuple[int, int]]] = []
        self.token_edges: list[list[tuple[TokenEdge, int]]] = []
        self.epsilon: list[list[int]] = []
        self.start = 0
        self.finals: set[int] = set()
        self.budget = budget

    @property
    def num_states(self) -> int:
        return len(self.epsilon)

    def add_state(self) -> int:
        """A new state without edges."""
        self.budget.spend()
        self.byte_edges.append([])
        self.call_edges.append([])
        self.token_edges.append([])
        self.epsilon.append([])
        return len(self.epsilon) - 1

    def add_bytes(self, source: int, lo: int, hi: int, target: int) -> None:
        self.byte_edges[source].append((lo, hi, target))

    def add_call(self, source: int, rule: int, target: int) -> None:
        self.call_edges[source].append((rule, target))

    def add_token(self, source: int, token: TokenEdge, target: int) -> None:
        self.token_edges[source].append((token, target))

    def add_epsilon(self, source: int, target: int) -> None:
        self.epsilon[source].append(target)

    def truncate(self, size: int) -> None:
        """Drop every state numbered ``size`` or more (they must be unreferenced)."""
        self.budget.remaining += self.num_states - size
        del self.byte_edges[size:], self.call_edges[size:], self.token_edges[size:]
        del self.epsilon[size:]

    def copy_states(self, source: NFA, first: int = 0, stop: int | None = None) -> int:
        """Append copies of ``source``'s states ``first..stop-1``; return the id shift applied.

        Edges of the copied states must stay inside that range.
        """
        stop = source.num_states if stop is None else stop
        self.budget.spend(stop - first)
        shift = self.num_states - first
        for s in range(first, stop):
            self.byte_edges.append([(lo, hi, t + shift) for lo, hi, t in source.byte_edges[s]])
            self.call_edges.append([(r, t + shift) for r, t in source.call_edges[s]])
            self.token_edges.append([(k, t + shift) for k, t in source.token_edges[s]])
            self.epsilon.append([t + shift for t in source.epsilon[s]])
        return shift

    def epsilon_closure(self, states: frozenset[int] | set[int]) -> frozenset[int]:
        """``states`` and everything reachable from them through epsilon edges."""
        seen = set(states)
        stack = list(states)
        epsilon = self.epsilon
        while stack:
            for t in epsilon[stack.pop()]:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return frozenset(seen)
