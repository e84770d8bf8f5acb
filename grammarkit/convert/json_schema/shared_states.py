"""DFA states as grammar rules shared across automata: one rule per residual language.

Objects split by ``oneOf``, ``anyOf``, ``not`` or ``if`` each exclude their own set of declared
names from the names of their other properties, so one schema can need hundreds of "every name
but these" automata that differ only near their start: past the first few characters, the
state reached after ``"minifyEmb"`` accepts the same strings in every one of them. Writing each
automaton out state by state repeats those states hundreds of times.

:class:`SharedStates` writes a state as a rule only once per *residual language* (the strings
it accepts from there on), across every automaton of one grammar. The language a state accepts
is identified structurally: a state outside any cycle by its accepting flag and its edges'
code-point sets and targets' rules; the states of a cycle by a canonical traversal of their
strongly connected component, in which edges leaving the component name their targets' rules.
Equal identities mean equal languages, so the grammar's language is unchanged; automata that
are minimal (every construction here returns them so) share every state they can.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from grammarkit.analysis.graph import strongly_connected_components
from grammarkit.convert.json_schema.automata import DFA, Ranges
from grammarkit.ebnf import ast

MAX_CANONICAL_COMPONENT = 256
"""Cycles of more states than this are not compared (a canonical traversal from each state costs
the square of their size); their states get rules of their own, as before."""

class SharedStates:
    """The rules of the DFA states written so far in one grammar, by residual language.

    Parameters
    ----------
    fresh_name
        Makes a rule name no other rule has (:meth:`~.emitter.Emitter.fresh_name`).
    state_name
        Makes the next name ``s.N`` no other rule has, for the states after the start
        (:meth:`~.emitter.Emitter.numbered_name`).
    add_rules
        Adds rules that derive some string to the grammar, each with the names of the rules
        it refers to (:meth:`~.emitter.Emitter.add_productive_rules`).
    """

    def __init__(self, fresh_name: Callable[[str], str], state_name: Callable[[], str],
                 add_rules: Callable[[list[tuple[ast.Rule, tuple[str, ...]]]], None]) -> None:
        self._fresh_name = fresh_name
        self._state_name = state_name
        self._add_rules = add_rules
        self._rules: dict[int, str] = {}
        self._languages: dict[Hashable, int] = {}

    def expr(self, a: DFA, name: str, spell: Callable[[Ranges], ast.Expr]) -> ast.Expr:
        """An expression for the language of ``a``, whose states become right-linear rules
        unless a rule for the same residual language exists already: the start state's named
        from ``name``, the others ``s.N`` (automata of other names share them). ``spell``
        turns an edge's code-point set into the expression reading one such point: a terminal,
        or a reference to a rule that derives some string."""
        if a.is_empty():
            return ast.CharClass(())
        identities = _identities(a, self._languages)
        start = identities[a.start]
        if start in self._rules:
            return ast.RuleRef(self._rules[start])
        base = self._fresh_name(name)
        live = _live(a)
        names: dict[int, str] = {}
        new_states = []
        for state in _reachable(a):
            if state not in live:
                continue
            known = self._rules.get(identities[state])
            if known is None:
                known = base if state == a.start else self._state_name()
                self._rules[identities[state]] = known
                new_states.append(state)
            names[state] = known
        rules = []
        for state in new_states:
            alternatives: list[ast.Expr] = []
            references = []
            for ranges, target in a.edges[state]:
                if target in live:
                    spelled = spell(ranges)
                    alternatives.append(ast.Sequence((spelled, ast.RuleRef(names[target]))))
                    if isinstance(spelled, ast.RuleRef):
                        references.append(spelled.name)
                    references.append(names[target])
            if state in a.accepting:
                alternatives.append(ast.Literal(""))
            body = alternatives[0] if len(alternatives) == 1 else ast.Choice(tuple(alternatives))
            rules.append((ast.Rule(names[state], body), tuple(references)))
        self._add_rules(rules)
        return ast.RuleRef(base)


def _reachable(a: DFA) -> list[int]:
    """The states reachable from the start, in the order a depth-first search meets them."""
    seen = {a.start}
    order = []
    stack = [a.start]
    while stack:
        state = stack.pop()
        order.append(state)
        for _, target in reversed(a.edges[state]):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return order


def _live(a: DFA) -> set[int]:
    """The states from which an accepting state can be reached: their rules derive some
    string (edges into the others are left out)."""
    into: list[list[int]] = [[] for _ in a.edges]
    for state, edges in enumerate(a.edges):
        for _, target in edges:
            into[target].append(state)
    live = set(a.accepting)
    stack = list(live)
    while stack:
        for source in into[stack.pop()]:
            if source not in live:
                live.add(source)
                stack.append(source)
    return live


def _identities(a: DFA, languages: dict[Hashable, int]) -> dict[int, int]:
    """For each state reachable from the start, a number equal for two states (of this or
    another automaton) only if they accept the same strings.

    ``languages`` numbers the structural descriptions met so far (and is extended): a state
    outside any cycle is described by its accepting flag and its edges' code-point sets and
    targets' numbers, a state on a cycle by a traversal of its component from it."""
    identities: dict[int, int] = {}

    def number(description: Hashable) -> int:
        return languages.setdefault(description, len(languages))

    successors = [[target for _, target in edges] for edges in a.edges]
    for component in strongly_connected_components(successors, starts=(a.start,)):
        members = set(component)
        if len(component) == 1 and all(t != component[0] for _, t in a.edges[component[0]]):
            state = component[0]
            identities[state] = number((state in a.accepting, tuple(
                (ranges, identities[t]) for ranges, t in a.edges[state])))
        elif len(component) > MAX_CANONICAL_COMPONENT:
            for state in component:
                identities[state] = number(("unshared", len(languages)))
        else:
            for state in component:
                identities[state] = number(("cycle", _traversal(a, state, members,
                                                                identities)))
    return identities


def _traversal(a: DFA, start: int, members: set[int], exits: dict[int, int]
               ) -> tuple[Hashable, ...]:
    """The states of ``start``'s strongly connected component numbered in breadth-first order
    from ``start``, each as its accepting flag and edges (to a number inside, or to the
    identity of a state outside)."""
    number = {start: 0}
    queue = [start]
    shape = []
    for state in queue:
        edges = []
        for ranges, target in a.edges[state]:
            if target in members:
                if target not in number:
                    number[target] = len(queue)
                    queue.append(target)
                edges.append((ranges, True, number[target]))
            else:
                edges.append((ranges, False, exits[target]))
        shape.append((state in a.accepting, tuple(edges)))
    return tuple(shape)
