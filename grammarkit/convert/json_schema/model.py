"""The normalized schema: for each JSON type, the set of values a schema allows.

A raw schema mixes keywords of every type and combines subschemas with ``allOf``, ``anyOf``,
``not``, ``$ref``... The converter reads each one into a :class:`Node`, which says per type what
is allowed (``null``, the booleans, and unions of number, string, array and object *sets*).
Because the types are disjoint, intersection, union and (where it exists) complement work type by
type (:mod:`~grammarkit.convert.json_schema.algebra`), and emitting a grammar is a choice over the
node's sets (:mod:`~grammarkit.convert.json_schema.emitter`).

Subschemas below a node (property values, array items) are not read eagerly: they are
:data:`Child` references, conjunctions of :class:`Ref` (a location in the document),
:class:`Inline` (an already-built node, e.g. from ``const``) and :class:`Not` atoms. That keeps
recursive schemas finite and lets each distinct child become one grammar rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property, lru_cache

from grammarkit.convert.json_schema.numbers import Bound


# -- references to subschemas ------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Ref:
    """The subschema at a JSON pointer of the document (``""`` is the root)."""

    pointer: str


@dataclass(frozen=True)
class Inline:
    """A subschema already normalized."""

    node: Node


@dataclass(frozen=True)
class Not:
    """The complement of a child, introduced by ``keyword`` at ``pointer``."""

    child: Child
    pointer: str = field(compare=False)
    keyword: str = field(compare=False)


Atom = Ref | Inline | Not
Child = tuple[Atom, ...]
"""A conjunction of atoms in canonical order (see :func:`conjoin`); ``()`` allows every value."""

ANY: Child = ()


def _order(atom: Atom) -> tuple[int, tuple[str | int, ...], int, str]:
    if isinstance(atom, Ref):
        return 0, _natural(atom.pointer), 0, ""
    if isinstance(atom, Not):
        return 0, _natural(atom.pointer), 1, atom.keyword
    return 1, (), 0, ""


@lru_cache(maxsize=1 << 16)
def _natural(pointer: str) -> tuple[str | int, ...]:
    """``pointer`` ordered with its numbers as numbers (``/allOf/9`` before ``/allOf/10``), so
    the conjunctions a chain of ``allOf`` or ``if`` builds grow at their end and each extends
    one already resolved."""
    return tuple(int(part) if index % 2 else part
                 for index, part in enumerate(re.split(r"(\d+)", pointer)))


def conjoin(*children: Child) -> Child:
    """The intersection of children: their atoms, deduplicated, in document order (references
    and complements by pointer, inline nodes last). The order is deterministic, so equal
    conjunctions built alike compare equal."""
    nonempty = [child for child in children if child]
    if len(nonempty) <= 1:
        # Every child is canonical already (built by this function, or a single atom).
        return nonempty[0] if nonempty else ANY
    atoms = dict.fromkeys(atom for child in nonempty for atom in child)
    return tuple(sorted(atoms, key=_order))


def inline(node: Node) -> Child:
    """A child standing for ``node``."""
    return (Inline(node),)


# -- string languages --------------------------------------------------------------------------
@dataclass(frozen=True)
class Pattern:
    """Strings in which the ECMA-262 regular expression ``source`` finds a match."""

    source: str
    pointer: str = field(default="", compare=False)


@dataclass(frozen=True)
class Format:
    """Strings of the named ``format``."""

    name: str
    pointer: str = field(default="", compare=False)


@dataclass(frozen=True)
class Literals:
    """Exactly these strings (sorted, distinct)."""

    values: tuple[str, ...]

    @cached_property
    def members(self) -> frozenset[str]:
        """``values`` as a set, for membership tests."""
        return frozenset(self.values)

    @classmethod
    def of(cls, values: Iterable[str]) -> Literals:
        return cls(tuple(sorted(set(values))))


Language = Pattern | Format | Literals


# -- per-type value sets -----------------------------------------------------------------------
@dataclass(frozen=True)
class NumberSet:
    """Numbers within bounds, optionally only integers (``integer=True``) or only non-integers
    (``False``), multiples of ``multiple_of`` and of none of ``not_multiple_of``."""

    low: Bound | None = None
    high: Bound | None = None
    integer: bool | None = None
    multiple_of: Decimal | None = None
    not_multiple_of: tuple[Decimal, ...] = ()
    pointer: str = field(default="", compare=False)

    @property
    def is_unconstrained(self) -> bool:
        return self == NumberSet()


@dataclass(frozen=True)
class StringSet:
    """Strings with length (in code points) in ``[min_length, max_length]``, in every language
    of ``languages`` and in none of ``excluded``."""

    min_length: int = 0
    max_length: int | None = None
    languages: tuple[Language, ...] = ()
    excluded: tuple[Language, ...] = ()
    pointer: str = field(default="", compare=False)


@dataclass(frozen=True)
class Contains:
    """Between ``minimum`` and ``maximum`` items (``None``: no maximum) from index ``start`` on
    satisfy ``child``."""

    child: Child
    minimum: int = 1
    maximum: int | None = None
    start: int = 0
    pointer: str = field(default="", compare=False)


@dataclass(frozen=True)
class ArraySet:
    """Arrays whose first items satisfy ``prefix`` (position by position) and the rest
    ``items``, with a length in ``[min_items, max_items]``, every ``contains`` condition met,
    and all items distinct if ``unique``."""

    prefix: tuple[Child, ...] = ()
    items: Child = ANY
    min_items: int = 0
    max_items: int | None = None
    contains: tuple[Contains, ...] = ()
    unique: bool = False
    pointer: str = field(default="", compare=False)

    def item(self, index: int) -> Child:
        """The schema of the item at ``index``."""
        return self.prefix[index] if index < len(self.prefix) else self.items


@dataclass(frozen=True)
class Clause:
    """One schema's ``properties``, ``patternProperties`` and ``additionalProperties``: a
    property's value satisfies its ``properties`` entry and every pattern its name matches, or
    ``additional`` when neither applies."""

    properties: tuple[tuple[str, Child], ...] = ()
    patterns: tuple[tuple[Pattern, Child], ...] = ()
    additional: Child = ANY

    @cached_property
    def by_name(self) -> dict[str, list[Child]]:
        """The ``properties`` entries of each name."""
        found: dict[str, list[Child]] = {}
        for name, child in self.properties:
            found.setdefault(name, []).append(child)
        return found

    @cached_property
    def values(self) -> dict[str, Child]:
        """What this clause requires of each property name asked about so far (filled by
        :func:`~.membership.clause_value`)."""
        return {}

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        # Computed once: chains of `if` and `allOf` hash the same deep clauses many times.
        return hash((self.properties, self.patterns, self.additional))


@dataclass(frozen=True)
class ObjectSet:
    """Objects meeting every clause, with every ``required`` name, a property count in
    ``[min_properties, max_properties]``, names in ``names`` (a union of string sets;
    ``None``: any name) and each ``dependent_required`` name's companions present."""

    clauses: tuple[Clause, ...] = ()
    required: tuple[str, ...] = ()
    min_properties: int = 0
    max_properties: int | None = None
    names: tuple[StringSet, ...] | None = None
    dependent_required: tuple[tuple[str, tuple[str, ...]], ...] = ()
    pointer: str = field(default="", compare=False)

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((self.clauses, self.required, self.min_properties, self.max_properties,
                     self.names, self.dependent_required))


@dataclass(frozen=True)
class Node:
    """The values a schema allows, type by type; each ``*s`` field is a union of sets.

    ``exact`` is ``False`` when reading the schema had to drop a constraint (the node then
    allows more than the schema): its complement must not be taken.
    """

    null: bool = False
    booleans: frozenset[bool] = frozenset()
    numbers: tuple[NumberSet, ...] = ()
    strings: tuple[StringSet, ...] = ()
    arrays: tuple[ArraySet, ...] = ()
    objects: tuple[ObjectSet, ...] = ()
    exact: bool = field(default=True, compare=False)

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        # Computed once: nodes are hashed whenever a child holding them is looked up.
        return hash((self.null, self.booleans, self.numbers, self.strings, self.arrays,
                     self.objects))

    @property
    def is_nothing(self) -> bool:
        """Whether the node trivially allows no value (deeper emptiness is not checked)."""
        return not (self.null or self.booleans or self.numbers or self.strings or self.arrays
                    or self.objects)


NOTHING = Node()
ANYTHING = Node(True, frozenset({False, True}), (NumberSet(),), (StringSet(),), (ArraySet(),),
                (ObjectSet(),))
NEVER: Child = inline(NOTHING)
"""The child no value satisfies."""
