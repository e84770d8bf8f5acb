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
``push[s]``, ``step[s]`` (sparse)
    a counted repetition ``x{m,n}`` that is not unrolled (see :class:`Loop`): ``push[s] = (loop,
    body)`` enters the loop with a fresh counter; ``step[s] = (loop, body, exit)`` ends one
    iteration, after which the automaton loops to ``body`` and/or leaves to ``exit`` depending on
    the count. Counters live in the positions of :mod:`grammarkit.automata.lazy_dfa`.
``deferred[s]`` (sparse)
    a part of a large rule not built yet (see :mod:`grammarkit.automata.construct`):
    :meth:`NFA.expand` builds it, adding the edges leaving ``s`` (and the states they lead
    to); it must be expanded before its edges or those of its epsilon successors are read.

Every automaton has one ``start`` state and a set of ``finals``. :class:`Budget` bounds how many
states all automata of one grammar may create (a memory ceiling far above real grammars), so
hostile grammars fail fast instead of eating memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TokenEdge:
    """A token-level symbol: one of ``ids`` or, when ``exclude``, any token but those."""

    ids: tuple[int, ...]
    exclude: bool = False

    def __str__(self) -> str:
        name = "ExcludeToken" if self.exclude else "Token"
        return f"{name}({', '.join(map(str, self.ids))})"


@dataclass(frozen=True, eq=False, slots=True)
class Loop:
    """A counted repetition ``x{min,max}`` run with a counter instead of unrolled copies.

    Attributes
    ----------
    min, max
        The bounds (``max`` is ``None`` for ``x{min,}``).
    nullable
        Whether the body matches the empty string without rule calls (then a count below
        ``min`` may always be completed by empty iterations).
    solid
        Whether every iteration consumes at least one byte whatever the rules it calls derive:
        then within ``h`` bytes at most ``h`` iterations end, and counts far from both bounds
        behave alike (see :meth:`clamp`).
    """

    min: int
    max: int | None
    nullable: bool
    solid: bool

    def clamp(self, count: int, horizon: int) -> int:
        """A canonical count that behaves like ``count`` for the next ``horizon`` bytes."""
        if not self.solid:
            return count
        if count < self.min - horizon - 1:
            return self.min - horizon - 2
        if count >= self.min and self.max is not None and self.max - count > horizon + 1:
            return max(self.min, self.max - horizon - 2)
        return count


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
        "deferred",
        "epsilon",
        "finals",
        "push",
        "start",
        "step",
        "token_edges",
    )

    def __init__(self, budget: Budget):
        self.byte_edges: list[list[tuple[int, int, int]]] = []
        self.call_edges: list[list[tuple[int, int]]] = []
        self.token_edges: list[list[tuple[TokenEdge, int]]] = []
        self.epsilon: list[list[int]] = []
        self.start = 0
        self.finals: set[int] = set()
        self.push: dict[int, tuple[Loop, int]] = {}
        self.step: dict[int, tuple[Loop, int, int]] = {}
        self.deferred: dict[int, Callable[[int], None]] = {}
        self.budget = budget

    @property
    def num_states(self) -> int:
        return len(self.epsilon)

    def add_state(self) -> int:
        """A new state without edges."""
        budget = self.budget
        budget.remaining -= 1
        if budget.remaining < 0:
            raise BudgetExceeded
        self.byte_edges.append([])
        self.call_edges.append([])
        self.token_edges.append([])
        epsilon = self.epsilon
        epsilon.append([])
        return len(epsilon) - 1

    def add_states(self, count: int) -> None:
        """``count`` new states without edges."""
        self.budget.spend(count)
        if count <= 8:  # most states come a few at a time: appends are faster then
            byte_edges, call_edges = self.byte_edges.append, self.call_edges.append
            token_edges, epsilon = self.token_edges.append, self.epsilon.append
            for _ in range(count):
                byte_edges([])
                call_edges([])
                token_edges([])
                epsilon([])
            return
        self.byte_edges += [[] for _ in range(count)]
        self.call_edges += [[] for _ in range(count)]
        self.token_edges += [[] for _ in range(count)]
        self.epsilon += [[] for _ in range(count)]

    def add_bytes(self, source: int, lo: int, hi: int, target: int) -> None:
        self.byte_edges[source].append((lo, hi, target))

    def add_call(self, source: int, rule: int, target: int) -> None:
        self.call_edges[source].append((rule, target))

    def add_token(self, source: int, token: TokenEdge, target: int) -> None:
        self.token_edges[source].append((token, target))

    def add_epsilon(self, source: int, target: int) -> None:
        self.epsilon[source].append(target)

    def add_loop(self, entry: int, step: int, loop: Loop, body: int, exit_: int) -> None:
        """Make ``entry`` start counted ``loop`` at ``body`` and ``step`` end its iterations."""
        self.push[entry] = (loop, body)
        self.step[step] = (loop, body, exit_)

    def expand(self, state: int) -> None:
        """Build the part deferred at ``state`` (its edges, and the states they lead to)."""
        self.deferred.pop(state)(state)

    @property
    def counted(self) -> bool:
        """Whether the automaton has counted repetitions."""
        return bool(self.push)

    def truncate(self, size: int) -> None:
        """Drop every state numbered ``size`` or more (they must be unreferenced)."""
        self.budget.remaining += self.num_states - size
        del self.byte_edges[size:], self.call_edges[size:], self.token_edges[size:]
        del self.epsilon[size:]
        for marks in (self.push, self.step, self.deferred):
            for s in [s for s in marks if s >= size]:
                del marks[s]

    def copy_states(self, source: NFA, first: int = 0, stop: int | None = None) -> int:
        """Append copies of ``source``'s states ``first..stop-1``; return the id shift applied.

        Edges of the copied states must stay inside that range, and none of them may be
        deferred.
        """
        stop = source.num_states if stop is None else stop
        assert not any(first <= s < stop for s in source.deferred)
        self.budget.spend(stop - first)
        shift = self.num_states - first
        self.byte_edges += [[(lo, hi, t + shift) for lo, hi, t in edges]
                            for edges in source.byte_edges[first:stop]]
        self.call_edges += [[(r, t + shift) for r, t in edges] if edges else []
                            for edges in source.call_edges[first:stop]]
        self.token_edges += [[(k, t + shift) for k, t in edges] if edges else []
                             for edges in source.token_edges[first:stop]]
        self.epsilon += [[t + shift for t in edges] for edges in source.epsilon[first:stop]]
        if source.push:
            for s, (loop, body) in list(source.push.items()):
                if first <= s < stop:
                    self.push[s + shift] = (loop, body + shift)
            for s, (loop, body, exit_) in list(source.step.items()):
                if first <= s < stop:
                    self.step[s + shift] = (loop, body + shift, exit_ + shift)
        return shift

    def epsilon_closure(self, states: Iterable[int]) -> frozenset[int]:
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
