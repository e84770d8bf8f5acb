"""Unions of object sets without the sets another one of them visibly contains.

``oneOf`` writes each branch as "this branch and not the others", a union over the ways to fail
each other branch; where the branch's own constraints already fail another, the union holds
the branch itself beside variants adding more clauses, which allow nothing more. Dropping them
keeps a ``oneOf`` of seven branches at seven object sets instead of thousands.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import cached_property

from grammarkit.convert.json_schema.model import ANY, Clause, ObjectSet


def declared_names(o: ObjectSet) -> list[str]:
    """The names ``o`` declares (``properties``, ``required``, ``dependentRequired``), in
    declaration order: the order of its properties in ``property_order="schema"``."""
    names: dict[str, None] = {}
    for clause in o.clauses:
        names.update(dict.fromkeys(n for n, _ in clause.properties))
    names.update(dict.fromkeys(o.required))
    for source, companions in o.dependent_required:
        names[source] = None
        names.update(dict.fromkeys(companions))
    return list(names)


def without_absorbed(objects: tuple[ObjectSet, ...]) -> list[ObjectSet]:
    """``objects`` (a union) without the sets another one of them visibly contains.

    ``oneOf`` writes each branch as "this branch and not the others", a union over the ways
    to fail each other branch; where the branch's own constant already fails another (the
    reader drops such implied clauses), the union holds the branch itself beside variants
    adding more clauses, which allow nothing more but would each cost an object grammar of
    their own. A set is contained in another here when it has every constraint of the other
    (its clauses, required names, dependencies, narrower bounds, the same ``propertyNames``)
    and the same declared names in the same order, so its grammar, in either property order,
    allows nothing the other's doesn't.
    """
    if len(objects) < 2:
        return list(objects)
    facts = [_Constraints.of(o) for o in objects]
    # A rival contains a set only if each of its constraints is one of the set's: each rival
    # is filed under its rarest constraint, and a set is compared with the rivals filed under
    # its own constraints (not with every rival: a `oneOf` can make thousands of sets).
    frequency: dict[Hashable, int] = {}
    for fact in facts:
        for item in fact.items:
            frequency[item] = frequency.get(item, 0) + 1
    kept: dict[tuple[tuple[str, ...], Hashable], list[_Constraints]] = {}
    absorbed = set()
    for index in sorted(range(len(objects)), key=lambda i: facts[i].size):
        mine = facts[index]
        candidates = (kept.get((mine.declared, item), ()) for item in (None, *mine.items))
        if any(rival.contains(mine) for rivals in candidates for rival in rivals):
            absorbed.add(index)
        else:
            rarest = min(mine.items, key=frequency.__getitem__, default=None)
            kept.setdefault((mine.declared, rarest), []).append(mine)
    return [o for index, o in enumerate(objects) if index not in absorbed]


@dataclass(frozen=True)
class _Constraints:
    """An object set's constraints as sets, to test containment."""

    declared: tuple[str, ...]
    clauses: frozenset[Clause]
    required: frozenset[str]
    dependent_required: frozenset[tuple[str, tuple[str, ...]]]
    source: ObjectSet

    @classmethod
    def of(cls, o: ObjectSet) -> _Constraints:
        # Clauses naming properties without constraining them only fix the declared order.
        clauses = frozenset(c for c in o.clauses
                            if c.patterns or c.additional != ANY
                            or any(child != ANY for _, child in c.properties))
        return cls(tuple(declared_names(o)), clauses, frozenset(o.required),
                   frozenset(o.dependent_required), o)

    @property
    def size(self) -> int:
        return len(self.clauses) + len(self.required) + len(self.dependent_required)

    @cached_property
    def items(self) -> tuple[Hashable, ...]:
        """Every constraint, each a hashable item: a rival contains this set only if all of
        its items are among this set's (:meth:`contains` checks the rest)."""
        return (*self.clauses, *((True, name) for name in self.required),
                *((False, entry) for entry in self.dependent_required))

    def contains(self, other: _Constraints) -> bool:
        """Whether every object of ``other`` is in this set (``False`` when in doubt)."""
        mine, theirs = self.source, other.source
        return (self.declared == other.declared and self.clauses <= other.clauses
                and self.required <= other.required
                and self.dependent_required <= other.dependent_required
                and mine.names in (None, theirs.names)
                and mine.min_properties <= theirs.min_properties
                and (mine.max_properties is None or (
                    theirs.max_properties is not None
                    and theirs.max_properties <= mine.max_properties)))
