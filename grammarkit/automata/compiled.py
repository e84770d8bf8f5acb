"""``CompiledGrammar``: every rule as a byte-level automaton, in one flat, immutable table.

This is the form both the exact recognizer (:mod:`grammarkit.automata.earley`) and the token-mask
decoder work on: a *recursive transition network*.

States
    Ints ``0..num_states-1``, numbered rule after rule, so a state is a small hashable value
    and sets of states are ``frozenset[int]``. ``state_rule[s]`` is the rule owning ``s``.
Rules
    Ints ``0..num_rules-1`` (``rule_names`` in grammar order, only rules reachable from the root
    after inlining). ``rule_start[r]`` is where a derivation of ``r`` begins; it ends in any
    state of ``finals`` owned by ``r``. ``nullable`` holds the rules that derive the empty
    string. ``deterministic[r]`` tells whether ``r``'s automaton is a DFA (the usual case).
Edges, per state
    ``byte_edges[s]``: ``(lo, hi, target)`` sorted by ``lo``, for one byte in ``lo..hi``
    (non-overlapping when the rule is deterministic). ``call_edges[s]``: ``(rule, target)``, taken
    after a complete derivation of ``rule``. ``token_edges[s]``: ``(TokenEdge, target)`` for
    ``Token``/``ExcludeToken``; they only match vocabulary tokens, never bytes.
Entry
    A pseudo-rule ``<start> ::= root`` numbered ``num_rules``: ``entry_state`` has one call edge
    to the root rule leading to ``accept_state``, which is final. A parse begins with
    ``entry_state`` and has recognised its input when ``accept_state`` is reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from grammarkit.automata.nfa import TokenEdge

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, eq=False)
class CompiledGrammar:
    """Byte-level automata for every rule of a grammar (see the module docstring)."""

    rule_names: tuple[str, ...]
    root: int
    rule_start: tuple[int, ...]
    state_rule: tuple[int, ...]
    finals: frozenset[int]
    byte_edges: tuple[tuple[tuple[int, int, int], ...], ...]
    call_edges: tuple[tuple[tuple[int, int], ...], ...]
    token_edges: tuple[tuple[tuple[TokenEdge, int], ...], ...]
    nullable: frozenset[int]
    deterministic: tuple[bool, ...]
    entry_state: int
    accept_state: int

    @property
    def num_states(self) -> int:
        return len(self.state_rule)

    @property
    def num_rules(self) -> int:
        return len(self.rule_names)

    def rule_states(self, rule: int) -> range:
        """The states owned by ``rule`` (a contiguous range)."""
        start = self.rule_start[rule]
        stop = self.rule_start[rule + 1] if rule + 1 < self.num_rules else self.entry_state
        return range(start, stop)

    def byte_table(self) -> np.ndarray:
        """Byte transitions as an ``int32`` array ``[num_states, 256]``, ``-1`` for none.

        Raises
        ------
        ValueError
            If some rule is nondeterministic (a byte has several targets).
        """
        import numpy as np

        table = np.full((self.num_states, 256), -1, dtype=np.int32)
        for s, edges in enumerate(self.byte_edges):
            for lo, hi, t in edges:
                if (table[s, lo:hi + 1] >= 0).any():
                    raise ValueError(f"state {s} has several targets for some byte")
                table[s, lo:hi + 1] = t
        return table

    def format(self) -> str:
        """A readable listing of every rule's automaton (for debugging and tests)."""
        lines = []
        for rule, name in enumerate(self.rule_names):
            kind = "" if self.deterministic[rule] else " (nondeterministic)"
            nullable = " nullable" if rule in self.nullable else ""
            lines.append(f"{name}{kind}{nullable}:")
            for s in self.rule_states(rule):
                lines.append(f"  {self._format_state(s)}")
        return "\n".join(lines)

    def _format_state(self, s: int) -> str:
        marks = ("start " if s in self.rule_start else "") + ("final " if s in self.finals else "")
        edges = [f"{_byte_range(lo, hi)}->{t}" for lo, hi, t in self.byte_edges[s]]
        edges += [f"{self.rule_names[r]}->{t}" for r, t in self.call_edges[s]]
        edges += [f"{k}->{t}" for k, t in self.token_edges[s]]
        return f"{s}: {marks}[{', '.join(edges)}]"

    def __str__(self) -> str:
        return self.format()


def _byte_range(lo: int, hi: int) -> str:
    def show(b: int) -> str:
        c = chr(b)
        return c if c.isprintable() and b < 0x7F and c not in "[]-\\'" else f"\\x{b:02x}"

    return f"'{show(lo)}'" if lo == hi else f"[{show(lo)}-{show(hi)}]"
