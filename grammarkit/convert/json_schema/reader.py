"""Reading schemas into nodes: what every keyword means, and what it costs to enforce.

:meth:`Reader.resolve` turns a :data:`~.model.Child` into a :class:`~.model.Node`, reading each
subschema once (:class:`_SchemaReader` holds one schema's keywords). Applicators (``allOf``,
``anyOf``, ``oneOf``, ``not``, ``if``, ``$ref``...) are read eagerly and combined with
:mod:`~.algebra`; property values and items stay children, read when the emitter needs them.

Anything no grammar can say exactly is *relaxed*: dropped or widened with a diagnostic
(:meth:`~.report.Reporter.relax`), so the grammar accepts a superset of the valid instances and
the node is marked inexact (its complement is then never taken).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import Any

from grammarkit.convert.errors import SchemaError
from grammarkit.convert.json_schema.absorption import without_absorbed
from grammarkit.convert.json_schema.algebra import (
    TooManyAlternatives,
    intersect,
    negate,
    union,
)
from grammarkit.convert.json_schema.dependencies import Discriminated, discriminated
from grammarkit.convert.json_schema.formats import (
    NUMBER_FORMATS,
    STRING_FORMATS,
    UNCONSTRAINED_FORMATS,
)
from grammarkit.convert.json_schema.if_chains import Conditional, chains, conditional
from grammarkit.convert.json_schema.membership import (
    clause_value,
    property_value,
    string_admits,
    string_set_empty,
    string_set_void,
)
from grammarkit.convert.json_schema.model import (
    ANY,
    ANYTHING,
    NEVER,
    NOTHING,
    ArraySet,
    Child,
    Clause,
    Contains,
    Format,
    Inline,
    Language,
    Literals,
    Node,
    Not,
    NumberSet,
    ObjectSet,
    Pattern,
    Ref,
    StringSet,
    conjoin,
    inline,
)
from grammarkit.convert.json_schema.number_sets import is_point
from grammarkit.convert.json_schema.numbers import MAX_DIGITS, Bound
from grammarkit.convert.json_schema.references import Document
from grammarkit.convert.json_schema.report import (
    CYCLIC_REF,
    FORMAT_NOT_ENFORCED,
    TOO_COMPLEX,
    TOO_LARGE,
    UNKNOWN_KEYWORD,
    UNRESOLVED_REF,
    Reporter,
    join,
)
from grammarkit.convert.json_schema.unevaluated import (
    Undecidable,
    decided_per_alternative,
    unevaluated_items,
    unevaluated_properties,
    with_unevaluated,
)
from grammarkit.convert.json_schema.values import (
    first_too_wide,
    too_wide,
    value_node,
    values_node,
)

MAX_APPLICATOR_DEPTH = 48
"""How deeply applicators and ``$ref`` may nest (each level is read eagerly)."""

MAX_COUNT = 10**9
"""The largest ``min*``/``max*`` count enforced: larger maxima are no limit, larger minima are
relaxed to this one (no JSON text that long is ever matched or generated)."""

MAX_OVERLAPPING_ONE_OF = 8
"""``oneOf`` with more branches than this that may overlap is relaxed to ``anyOf``."""

ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "example", "deprecated", "readOnly",
    "writeOnly", "$comment", "$schema", "$id", "id", "$anchor", "$dynamicAnchor",
    "$recursiveAnchor", "$vocabulary", "$defs", "definitions", "contentEncoding",
    "contentMediaType", "contentSchema", "discriminator", "xml", "externalDocs",
})
"""Keywords that describe without constraining (ignored quietly)."""

VENDOR_ANNOTATIONS = frozenset({
    # VS Code's JSON language service (the SchemaStore schemas use them widely)
    "markdownDescription", "markdownEnumDescriptions", "enumDescriptions", "enumItemLabels",
    "deprecationMessage", "markdownDeprecationMessage", "errorMessage", "patternErrorMessage",
    "defaultSnippets", "doNotSuggest", "suggestSortText", "allowComments",
    "allowTrailingCommas",
    # ajv-errors, json-schema-to-typescript, json-editor and form generators
    "tsType", "tsEnumNames", "enumNames", "options", "propertyOrder", "headerTemplate",
})
"""Well-known vendor annotation keywords (and every ``x-*`` keyword): ignored quietly, as they
describe editors' and generators' behaviour, never the instance."""

_HANDLED = frozenset({
    "type", "nullable", "enum", "const", "$ref", "$dynamicRef", "$recursiveRef", "allOf",
    "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies",
    "dependentRequired", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "minLength", "maxLength", "pattern", "format", "items", "prefixItems",
    "additionalItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains",
    "maxContains", "properties", "patternProperties", "additionalProperties", "required",
    "minProperties", "maxProperties", "propertyNames", "unevaluatedProperties",
    "unevaluatedItems",
})

_TYPES: dict[str, Node] = {
    "null": Node(null=True),
    "boolean": Node(booleans=frozenset({False, True})),
    "number": Node(numbers=(NumberSet(),)),
    "integer": Node(numbers=(NumberSet(integer=True),)),
    "string": Node(strings=(StringSet(),)),
    "array": Node(arrays=(ArraySet(),)),
    "object": Node(objects=(ObjectSet(),)),
}

class Reader:
    """Normalizes the subschemas of one document, memoized."""

    def __init__(self, document: Document, reporter: Reporter, strict: bool = False):
        self.document = document
        self.reporter = reporter
        self.strict = strict
        self._nodes: dict[Child, Node] = {}
        self._active: list[Child] = []
        self._conjuncts: list[int] = []
        self._complements: dict[tuple[Not, str, str], Node] = {}
        self._disjoint_children: dict[tuple[Child, Child], bool] = {}
        self._empty_children: dict[tuple[Child, int], bool] = {}
        self._schemas: dict[str, Node] = {}
        self._empty_objects: dict[tuple[ObjectSet, int], bool] = {}
        self._doubts = 0
        # `unevaluatedProperties` decided per object set needs the sets as the schema wrote
        # them (a set with more clauses evaluates more names): absorb only without it.
        self._absorbs = not any(pointer.endswith("/unevaluatedProperties")
                                for pointer in document.subschemas)

    def resolve(self, child: Child) -> Node:
        """The node of a child (the intersection of its atoms).

        Raises
        ------
        SchemaError
            For a cycle of references with no base case, or applicators nested too deeply.
        """
        found = self._nodes.get(child)
        if found is not None:
            return found
        if child in self._active:
            self._doubts += 1
            pointer = next((a.pointer for a in child if isinstance(a, Ref)), "")
            start = self._active.index(child)
            if any(depth > start for depth in self._conjuncts):
                # S = allOf[S, B]: every validator loops forever on it; its largest
                # solution, S = B, drops the self-conjunct.
                self.reporter.relax(pointer, "this schema is one of its own `allOf` "
                                    "conjuncts (through $ref); that conjunct is ignored",
                                    "remove the reference to the schema itself from its allOf")
                return replace(ANYTHING, exact=False)
            raise self.reporter.fail(pointer, "this schema refers to itself through $ref or "
                                     "applicators with nothing in between, so it has no "
                                     "base case", CYCLIC_REF,
                                     "recurse only through properties or items")
        if len(self._active) >= MAX_APPLICATOR_DEPTH:
            self._doubts += 1
            pointer = next((a.pointer for a in child if isinstance(a, Ref)), "")
            raise self.reporter.fail(pointer, "applicators and $ref nest more than "
                                     f"{MAX_APPLICATOR_DEPTH} levels deep", TOO_LARGE,
                                     "flatten nested allOf/anyOf/$ref chains")
        self._active.append(child)
        try:
            # Chains of `if` or `oneOf` build conjunctions one atom longer at a time (atoms
            # are in document order): one intersection each, not one per atom.
            prefix = self._nodes.get(child[:-1]) if len(child) > 1 else None
            node, rest = (ANYTHING, child) if prefix is None else (prefix, child[-1:])
            for atom in rest:
                if node == NOTHING:
                    break
                node = self._meet(node, self._atom(atom), _pointer_of(atom))
        finally:
            self._active.pop()
        self._nodes[child] = node
        return node

    def conjunct(self, child: Child) -> Node:
        """The node of an ``allOf`` conjunct: as :meth:`resolve`, except that a cycle back
        through this conjunct is cut (relaxed) instead of refused."""
        self._conjuncts.append(len(self._active))
        try:
            return self.resolve(child)
        finally:
            self._conjuncts.pop()

    def canonical(self, child: Child) -> Child:
        """``child``, with a reference to a schema that is nothing but a local ``$ref`` (and
        keywords that never constrain, or up to draft 7 any siblings, which ``$ref`` overrides
        there) replaced by its target, so every use of a definition shares one rule named after
        it."""
        seen = set()
        while len(child) == 1 and isinstance(child[0], Ref) and child[0].pointer not in seen:
            pointer = child[0].pointer
            seen.add(pointer)
            schema = self.document.at(pointer)
            if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
                break
            # Up to draft 7, `$ref` makes its siblings ignored: the schema is an alias; later,
            # it is one when its siblings are annotations or keywords the converter ignores.
            if self.document.location(pointer).draft > 7 and not all(
                    key == "$ref" or key not in _HANDLED for key in schema):
                break
            try:
                target = self.document.resolve(pointer, schema["$ref"])
            except KeyError:
                break
            if target is None:
                break
            child = (Ref(target),)
        return child

    def _atom(self, atom: Ref | Inline | Not) -> Node:
        if isinstance(atom, Inline):
            return atom.node
        if isinstance(atom, Ref):
            return self._read(atom.pointer)
        key = (atom, atom.pointer, atom.keyword)
        found = self._complements.get(key)
        if found is None:
            found = self.complement(self.resolve(atom.child), atom.pointer, atom.keyword)
            self._complements[key] = found
        return found

    def complement(self, node: Node, pointer: str, keyword: str) -> Node:
        """``not node``, or (relaxed) any value if it has no representation."""
        try:
            negated = negate(node, pointer, keyword)
        except TooManyAlternatives:
            negated = None
        if negated is None:
            self.reporter.relax(join(pointer, keyword), f"`{keyword}` needs the complement of a "
                                "schema that a grammar can't express exactly (only types, "
                                "numeric bounds, lengths, patterns, required and simple "
                                "property and item schemas can be negated)")
            return replace(ANYTHING, exact=False)
        return negated

    def meet(self, a: Node, b: Node) -> Node:
        """``a & b`` without the alternatives that visibly allow nothing (contradictory
        constants, a required property that can't be present...), so that chains of ``if``
        or overlapping ``oneOf`` branches stay linear instead of multiplying out.

        Raises
        ------
        TooManyAlternatives
            As :func:`~.algebra.intersect`.
        """
        node = intersect(a, b)
        if len(node.arrays) + len(node.objects) + len(node.strings) <= 1:
            objects = tuple(self._without_implied(s) for s in node.objects)
            return node if objects == node.objects else replace(node, objects=objects)
        objects = tuple(s for s in map(self._without_implied, node.objects)
                        if not self._object_set_empty(s, 2))
        if self._absorbs and len(objects) > 1:
            objects = tuple(without_absorbed(objects))
        return replace(
            node,
            strings=tuple(s for s in node.strings if not string_set_empty(s)),
            arrays=tuple(s for s in node.arrays if not self._array_set_empty(s, 2)),
            objects=objects,
        )

    def _without_implied(self, s: ObjectSet) -> ObjectSet:
        """``s`` without the clauses a complement added (``name``, if present, is not in X)
        that another clause already implies (its value for ``name`` is disjoint from X): a
        chain of ``if`` on one discriminator property then keeps one clause per alternative
        instead of one per branch (each branch's constant excludes every other branch's)."""
        negations = [_negated_property(clause) for clause in s.clauses]
        if all(negated is None for negated in negations):
            return s
        kept: list[Clause] = []
        declared: set[str] = set()
        # Only on the evidence of clauses that aren't complements themselves.
        positive = [clause for clause, negated in zip(s.clauses, negations, strict=True)
                    if negated is None]
        for clause, negated in zip(s.clauses, negations, strict=True):
            if negated is None or not self._disjoint(conjoin(*(
                    clause_value(other, negated[0]) for other in positive
                    if negated[0] in other.by_name)), negated[1]):
                kept.append(clause)
            elif negated[0] not in declared:
                # The first declaration of a name fixes its place in the property order:
                # keep the place, without the constraint.
                kept.append(Clause(properties=((negated[0], ANY),)))
            else:
                continue
            declared.update(kept[-1].by_name)
        clauses = tuple(kept)
        return s if clauses == s.clauses else replace(s, clauses=clauses)

    def _disjoint(self, a: Child, b: Child) -> bool:
        """Whether no value satisfies both children (``False`` when in doubt), memoized."""
        key = (a, b)
        found = self._disjoint_children.get(key)
        if found is None:
            both = conjoin(a, b)
            found = self.child_is_empty(both) or self._no_string_in(both)
            self._disjoint_children[key] = found
        return found

    def _no_string_in(self, child: Child) -> bool:
        """Whether ``child`` allows strings only, and none (by automata: disjoint patterns);
        ``False`` when in doubt."""
        if not child:
            return False
        if child in self._active:
            self._doubts += 1
            return False
        try:
            node = self.resolve(child)
        except SchemaError:
            return False
        return not (node.null or node.booleans or node.numbers or node.arrays
                    or node.objects) and all(string_set_void(s) for s in node.strings)

    def _meet(self, a: Node, b: Node, pointer: str) -> Node:
        try:
            return self.meet(a, b)
        except TooManyAlternatives as exc:
            self.reporter.relax(pointer, f"combining these subschemas needs too many "
                                f"alternatives ({exc}); only the first is enforced",
                                code=TOO_COMPLEX)
            return replace(a, exact=False)

    def _read(self, pointer: str) -> Node:
        """The node of the schema at ``pointer`` alone, memoized unless reading it met a
        child being read (a cycle, whose answer depends on where it was met)."""
        found = self._schemas.get(pointer)
        if found is not None:
            return found
        doubts = self._doubts
        found = self._read_schema(pointer)
        if self._doubts == doubts:
            self._schemas[pointer] = found
        return found

    def _read_schema(self, pointer: str) -> Node:
        schema = self.document.at(pointer)
        if schema is True:
            return ANYTHING
        if schema is False:
            return NOTHING
        if not isinstance(schema, dict):
            self.reporter.invalid(pointer, "a schema must be an object or a boolean, not "
                                  f"{_json_type(schema)}")
            return ANYTHING
        return _SchemaReader(self, pointer, schema).node()

    def property_names(self, child: Child) -> tuple[StringSet, ...] | None:
        """The string sets a ``propertyNames`` child allows (``None``: any string)."""
        node = self.resolve(child)
        if node.strings == (StringSet(),):
            return None
        return node.strings

    def is_empty(self, node: Node, depth: int = 3) -> bool:
        """Whether ``node`` allows no value (looking ``depth`` levels into required children);
        ``False`` when in doubt."""
        if node.null or node.booleans:
            return False
        if node.numbers:
            return False
        if any(not string_set_empty(s) for s in node.strings):
            return False
        if any(not self._array_set_empty(s, depth) for s in node.arrays):
            return False
        return all(self._object_set_empty(s, depth) for s in node.objects)

    def child_is_empty(self, child: Child, depth: int = 3) -> bool:
        """Whether no value satisfies ``child``; ``False`` when in doubt.

        Memoized, except for answers that depended on which children were being read (a
        child met again while it is read is in doubt): those may differ elsewhere."""
        if child == NEVER:
            return True
        if depth <= 0 or not child:
            return False
        if child in self._active:
            self._doubts += 1
            return False
        key = (child, depth)
        found = self._empty_children.get(key)
        if found is not None:
            return found
        doubts = self._doubts
        try:
            found = self.is_empty(self.resolve(child), depth - 1)
        except SchemaError:
            self._doubts += 1
            return False
        if self._doubts == doubts:
            self._empty_children[key] = found
        return found

    def discriminators(self, node: Node) -> dict[str, frozenset[tuple[str, Any]]]:
        """The properties every object of ``node`` has, whose values are constants (a
        ``oneOf`` branch's ``type: {const: ...}``), each with the constants it may take (as
        :func:`_constant_keys` writes them): two nodes whose constants for one such name are
        disjoint allow no object in common."""
        found: dict[str, frozenset[tuple[str, Any]]] | None = None
        for s in node.objects:
            tags = {}
            for name in s.required:
                if found is not None and name not in found:
                    continue
                value = property_value(s, name)
                if not value or value in self._active:
                    continue
                try:
                    keys, open_in = _constant_keys(self.resolve(value))
                except SchemaError:
                    continue
                if not open_in:
                    tags[name] = frozenset(keys)
            found = tags if found is None else {
                name: values | found[name] for name, values in tags.items() if name in found}
            if not found:
                break
        return found or {}

    def _array_set_empty(self, s: ArraySet, depth: int) -> bool:
        required = range(min(s.min_items, len(s.prefix) + 1))
        if any(self.child_is_empty(s.item(i), depth) for i in required):
            return True
        return s.min_items > len(s.prefix) and self.child_is_empty(s.items, depth)

    def _object_set_empty(self, s: ObjectSet, depth: int) -> bool:
        """Whether ``s`` allows no object, memoized as :meth:`child_is_empty` (chains of
        ``allOf`` and ``if`` meet the same sets again at every step)."""
        key = (s, depth)
        found = self._empty_objects.get(key)
        if found is None:
            doubts = self._doubts
            found = self._object_set_empty_now(s, depth)
            if self._doubts == doubts:
                self._empty_objects[key] = found
        return found

    def _object_set_empty_now(self, s: ObjectSet, depth: int) -> bool:
        if s.max_properties is not None and len(s.required) > s.max_properties:
            return True
        for name in s.required:
            if s.names is not None and not any(string_admits(n, name) is not False
                                               for n in s.names):
                return True
            if self.child_is_empty(property_value(s, name), depth):
                return True
        return False


def _negated_property(clause: Clause) -> tuple[str, Child] | None:
    """``(name, X)`` for the clause a complement writes for "``name``, if present, is not in
    X" (:func:`~.algebra.negate`), else ``None``."""
    if len(clause.properties) != 1 or clause.patterns or clause.additional != ANY:
        return None
    name, value = clause.properties[0]
    if len(value) != 1 or not isinstance(value[0], Not):
        return None
    return name, value[0].child


def _is_annotation(keyword: str) -> bool:
    """Whether ``keyword`` is ignored quietly (it describes, never constrains)."""
    return keyword in ANNOTATIONS or keyword in VENDOR_ANNOTATIONS or keyword.startswith("x-")


def _pointer_of(atom: Ref | Inline | Not) -> str:
    return atom.pointer if isinstance(atom, (Ref, Not)) else ""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Decimal):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


class _SchemaReader:
    """The keywords of one schema object, read into a node."""

    def __init__(self, reader: Reader, pointer: str, schema: dict[str, Any]):
        self.reader = reader
        self.reporter = reader.reporter
        self.pointer = pointer
        self.schema = schema
        location = reader.document.location(pointer)
        self.draft = location.draft
        self.formats_asserted = not (location.declared and location.draft >= 2019)
        self.exact = True
        self.unevaluated_per_alternative = False

    # -- helpers ---------------------------------------------------------------------------
    def at(self, *tokens: str | int) -> str:
        return join(self.pointer, *tokens)

    def child(self, *tokens: str | int) -> Child:
        return (Ref(self.at(*tokens)),)

    def relax(self, keyword: str, message: str, hint: str | None = None,
              code: str | None = None) -> None:
        self.exact = False
        if code is None:
            self.reporter.relax(self.at(keyword), message, hint)
        else:
            self.reporter.relax(self.at(keyword), message, hint, code)

    def invalid(self, keyword: str, message: str) -> None:
        self.reporter.invalid(self.at(keyword), message)

    def count(self, keyword: str) -> int | None:
        """A non-negative integer keyword (``2.0`` is 2), or ``None`` if absent or invalid."""
        value = self.schema.get(keyword)
        if value is None:
            return None
        if isinstance(value, Decimal) and value == value.to_integral_value() and value >= 0:
            if value <= MAX_COUNT:
                return int(value)
            if keyword.startswith("max"):
                return None
            # Never int(value): 1e999999999 has a billion digits.
            self.relax(keyword, f"`{keyword}` {value} is beyond the largest count enforced "
                       f"({MAX_COUNT}); {MAX_COUNT} is enforced instead", code=TOO_COMPLEX)
            return MAX_COUNT
        self.invalid(keyword, f"`{keyword}` must be a non-negative integer")
        return None

    def number(self, keyword: str) -> Decimal | None:
        value = self.schema.get(keyword)
        if value is None or isinstance(value, bool):
            return None
        if isinstance(value, Decimal):
            return value
        self.invalid(keyword, f"`{keyword}` must be a number")
        return None

    def subschema_list(self, keyword: str) -> list[Child] | None:
        value = self.schema.get(keyword)
        if value is None:
            return None
        if not isinstance(value, list) or not value:
            self.invalid(keyword, f"`{keyword}` must be a non-empty array of schemas")
            return None
        return [self.child(keyword, index) for index in range(len(value))]

    def meet(self, node: Node, other: Node, keyword: str) -> Node:
        try:
            return self.reader.meet(node, other)
        except TooManyAlternatives as exc:
            self.relax(keyword, f"enforcing `{keyword}` together with the rest of this schema "
                       f"needs too many alternatives ({exc})", code=TOO_COMPLEX)
            return node

    # -- the whole schema ------------------------------------------------------------------
    def node(self) -> Node:
        schema = self.schema
        if "$ref" in schema and self.draft <= 7:  # `$ref` overrides its siblings
            node = self.reference("$ref")
            return node if self.exact else replace(node, exact=False)
        node = self.types()
        for keyword, build in (
            ("number", self.numbers),
            ("string", self.strings),
            ("array", self.arrays),
            ("object", self.objects),
        ):
            constraint = build()
            if constraint is not None:
                node = self.meet(node, constraint, keyword)
        for keyword, apply in (
            ("const", self.const),
            ("enum", self.enum),
            ("$ref", lambda: self.reference("$ref")),
            ("$dynamicRef", lambda: self.reference("$dynamicRef")),
            ("$recursiveRef", lambda: self.reference("$recursiveRef")),
            ("allOf", self.all_of),
            ("anyOf", self.any_of),
            ("oneOf", None),  # met with the node so far (see one_of)
            ("not", self.negation),
            ("if", self.conditional),
            ("dependentSchemas", lambda: self.dependent_schemas("dependentSchemas")),
            ("dependencies", lambda: self.dependent_schemas("dependencies")),
        ):
            if keyword in schema:
                if apply is None:
                    node = self.one_of(node)
                    continue
                constraint = apply()
                if constraint is not None:
                    node = self.meet(node, constraint, keyword)
        for keyword in schema:
            if keyword not in _HANDLED and not _is_annotation(keyword):
                self.reporter.note(self.at(keyword), UNKNOWN_KEYWORD,
                                   f"unknown keyword `{keyword}` ignored (JSON Schema treats it "
                                   "as an annotation)")
        if self.unevaluated_per_alternative:
            if self.exact and node.exact:
                keyword = self.at("unevaluatedProperties")
                node = replace(node, objects=tuple(with_unevaluated(s, keyword)
                                                   for s in node.objects))
            else:
                # A relaxed subschema may have lost clauses that evaluate names.
                self._relax_unevaluated_properties()
        if not self.exact:
            node = replace(node, exact=False)
        return node

    def types(self) -> Node:
        declared = self.schema.get("type")
        nullable = self.schema.get("nullable") is True
        if declared is None:
            return ANYTHING
        names = declared if isinstance(declared, list) else [declared]
        nodes = []
        for name in names:
            if not isinstance(name, str) or name not in _TYPES:
                self.invalid("type", f"unknown type {name!r}; expected one of "
                             f"{', '.join(_TYPES)}")
                return ANYTHING
            nodes.append(_TYPES[name])
        if nullable:
            nodes.append(_TYPES["null"])
        return union(nodes)

    # -- type-specific keywords ------------------------------------------------------------
    def numbers(self) -> Node | None:
        low = self._bound("minimum", "exclusiveMinimum", lower=True)
        high = self._bound("maximum", "exclusiveMaximum", lower=False)
        step = self.number("multipleOf")
        if step is not None and step <= 0:
            self.invalid("multipleOf", "`multipleOf` must be greater than 0")
            step = None
        if step is not None and too_wide(step):
            self.relax("multipleOf", f"`multipleOf` {step} needs more than {MAX_DIGITS} digits "
                       "in plain notation; it is not enforced", code=TOO_COMPLEX)
            step = None
        format_name = self.schema.get("format")
        if isinstance(format_name, str) and format_name in NUMBER_FORMATS:
            first, last = NUMBER_FORMATS[format_name]
            low = _tighter(low, Bound(first), lower=True)
            high = _tighter(high, Bound(last), lower=False)
        if low is None and high is None and step is None:
            return None
        return _only("numbers", (NumberSet(low, high, None, step, (), self.pointer),))

    def _bound(self, inclusive: str, exclusive: str, lower: bool) -> Bound | None:
        value = self.number(inclusive)
        flag = self.schema.get(exclusive)
        if isinstance(flag, bool):
            # Draft 4: the boolean makes the inclusive bound exclusive.
            return None if value is None else Bound(value, flag)
        bound = None if value is None else Bound(value)
        other = self.number(exclusive)
        if other is not None:
            bound = _tighter(bound, Bound(other, True), lower)
        return bound

    def strings(self) -> Node | None:
        low = self.count("minLength") or 0
        high = self.count("maxLength")
        languages: list[Language] = []
        pattern = self.schema.get("pattern")
        if pattern is not None:
            if isinstance(pattern, str):
                languages.append(Pattern(pattern, self.at("pattern")))
            else:
                self.invalid("pattern", "`pattern` must be a string")
        format_name = self.schema.get("format")
        if isinstance(format_name, str) and not self.formats_asserted:
            self.reporter.note(self.at("format"), FORMAT_NOT_ENFORCED,
                               f"format {format_name!r} is an annotation under the draft "
                               "$schema declares; it is not enforced")
        elif isinstance(format_name, str):
            if format_name in STRING_FORMATS:
                languages.append(Format(format_name, self.at("format")))
            elif format_name not in UNCONSTRAINED_FORMATS and format_name not in NUMBER_FORMATS:
                self.reporter.warn(self.at("format"), FORMAT_NOT_ENFORCED,
                                   f"format {format_name!r} is not enforced (grammarkit knows "
                                   f"{', '.join(sorted(STRING_FORMATS))})",
                                   "use a `pattern` to constrain the string")
        elif format_name is not None:
            self.invalid("format", "`format` must be a string")
        if not low and high is None and not languages:
            return None
        return _only("strings", (StringSet(low, high, tuple(languages), (), self.pointer),))

    def arrays(self) -> Node | None:
        schema = self.schema
        prefix: tuple[Child, ...] = ()
        items: Child = ANY
        if isinstance(schema.get("prefixItems"), list):
            prefix = tuple(self.child("prefixItems", i) for i in range(len(schema["prefixItems"])))
            if "items" in schema and not isinstance(schema["items"], list):
                items = self.child("items")
        elif isinstance(schema.get("items"), list):
            prefix = tuple(self.child("items", i) for i in range(len(schema["items"])))
            if "additionalItems" in schema:
                items = self.child("additionalItems")
        elif "items" in schema:
            items = self.child("items")
        elif "prefixItems" in schema:
            self.invalid("prefixItems", "`prefixItems` must be an array of schemas")
        if self.reader.strict and self._undeclared_forbidden("array", (
                "items", "additionalItems", "unevaluatedItems"), ("prefixItems",)) and (
                "items" not in schema or isinstance(schema["items"], list)):
            items = NEVER
        low = self.count("minItems") or 0
        high = self.count("maxItems")
        contains: tuple[Contains, ...] = ()
        if "contains" in schema:
            least = self.count("minContains")
            most = self.count("maxContains")
            contains = (Contains(self.child("contains"), 1 if least is None else least, most, 0,
                                 self.at("contains")),)
        unique = schema.get("uniqueItems") is True
        unevaluated = self.unevaluated_items()
        if unevaluated is not None:
            width = max(len(prefix), unevaluated[0])
            prefix = prefix + (ANY,) * (width - len(prefix))
            items = conjoin(items, unevaluated[1])
        if not prefix and items == ANY and not low and high is None and not contains and not (
                unique):
            return None
        return _only("arrays", (ArraySet(prefix, items, low, high, contains, unique,
                                         self.pointer),))

    def objects(self) -> Node | None:
        schema = self.schema
        properties: list[tuple[str, Child]] = []
        if isinstance(schema.get("properties"), dict):
            properties = [(name, self.child("properties", name))
                          for name in schema["properties"]]
        patterns: list[tuple[Pattern, Child]] = []
        if isinstance(schema.get("patternProperties"), dict):
            patterns = [(Pattern(source, self.at("patternProperties", source)),
                         self.child("patternProperties", source))
                        for source in schema["patternProperties"]]
        additional = self.child("additionalProperties") if (
            "additionalProperties" in schema) else ANY
        if self.reader.strict and self._undeclared_forbidden("object", (
                "additionalProperties", "unevaluatedProperties"),
                ("properties", "patternProperties")):
            additional = NEVER
        clauses = []
        if properties or patterns or additional != ANY:
            clauses.append(Clause(tuple(properties), tuple(patterns), additional))
        unevaluated = self.unevaluated_properties()
        if unevaluated is not None:
            clauses.append(unevaluated)
        required = self.names_list("required")
        dependent = self.dependent_required()
        names = None
        if "propertyNames" in schema:
            names = self.reader.property_names(self.child("propertyNames"))
        low = self.count("minProperties") or 0
        high = self.count("maxProperties")
        if not clauses and not required and not dependent and names is None and not low and (
                high is None):
            return None
        return _only("objects", (ObjectSet(tuple(clauses), tuple(required), low, high, names,
                                           dependent, self.pointer),))

    def _undeclared_forbidden(self, type_name: str, allowing: tuple[str, ...],
                              declaring: tuple[str, ...]) -> bool:
        """Strict mode: whether this schema describes the type's members (declares some or
        names the type) without saying what else may appear."""
        if any(keyword in self.schema for keyword in allowing):
            return False
        declared = self.schema.get("type")
        names = declared if isinstance(declared, list) else [declared]
        return type_name in names or any(keyword in self.schema for keyword in declaring)

    def names_list(self, keyword: str) -> list[str]:
        value = self.schema.get(keyword)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.invalid(keyword, f"`{keyword}` must be an array of strings")
            return []
        return list(dict.fromkeys(value))

    def dependent_required(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        found: list[tuple[str, tuple[str, ...]]] = []
        for keyword in ("dependentRequired", "dependencies"):
            value = self.schema.get(keyword)
            if not isinstance(value, dict):
                if value is not None:
                    self.invalid(keyword, f"`{keyword}` must be an object")
                continue
            for name, companions in value.items():
                if isinstance(companions, list):
                    if not all(isinstance(c, str) for c in companions):
                        self.invalid(keyword, f"`{keyword}` lists must hold strings")
                        continue
                    if companions:
                        found.append((name, tuple(dict.fromkeys(companions))))
                elif keyword == "dependentRequired":
                    self.invalid(keyword, "`dependentRequired` values must be arrays of strings")
        return tuple(found)

    # -- values ----------------------------------------------------------------------------
    def const(self) -> Node:
        self._check_widths("const")
        return value_node(self.schema["const"])

    def enum(self) -> Node | None:
        values = self.schema["enum"]
        if not isinstance(values, list):
            self.invalid("enum", "`enum` must be an array")
            return None
        self._check_widths("enum")
        return values_node(values)

    def _check_widths(self, keyword: str) -> None:
        wide = first_too_wide(self.schema[keyword])
        if wide is not None:
            self.relax(keyword, f"`{keyword}` lists {wide}, whose plain notation needs more than "
                       f"{MAX_DIGITS} digits; any number is accepted in its place",
                       code=TOO_COMPLEX)

    # -- applicators -----------------------------------------------------------------------
    def reference(self, keyword: str) -> Node:
        reference = self.schema[keyword]
        if not isinstance(reference, str):
            self.invalid(keyword, f"`{keyword}` must be a string")
            return ANYTHING
        if keyword == "$recursiveRef":
            reference = "#"
        try:
            target = self.reader.document.resolve(self.pointer, reference)
        except KeyError:
            self.reporter.invalid(self.at(keyword), f"`{keyword}` {reference!r} names nothing "
                                  "in this document", None, UNRESOLVED_REF)
            return ANYTHING
        if target is None:
            self.relax(keyword, f"`{keyword}` {reference!r} names another document; it is not "
                       "enforced", "bundle the referenced schema into $defs and refer to it "
                       "with #/$defs/...")
            return ANYTHING
        if keyword != "$ref" and self._dynamic(keyword, reference, target):
            self.relax(keyword, f"`{keyword}` {reference!r} resolves dynamically; it is not "
                       "enforced")
            return ANYTHING
        return self.reader.resolve((Ref(target),))

    def _dynamic(self, keyword: str, reference: str, target: str) -> bool:
        """Whether a ``$dynamicRef`` / ``$recursiveRef`` may resolve elsewhere than statically."""
        document = self.reader.document
        if keyword == "$recursiveRef":
            return any(
                isinstance(s := document.at(p), dict) and s.get("$recursiveAnchor") is True
                for p in document.subschemas if p
            )
        name = reference.partition("#")[2]
        schema = document.at(target)
        if not isinstance(schema, dict) or schema.get("$dynamicAnchor") != name:
            return False
        return len(document.dynamic_anchors.get(name, ())) > 1

    def all_of(self) -> Node | None:
        children = self.subschema_list("allOf")
        if children is None:
            return None
        found = [conditional(self.reader.document, self.at("allOf", index))
                 for index in range(len(children))]
        starts = dict(chains(found))
        node = ANYTHING
        index = 0
        while index < len(children):
            if index in starts:
                run = [c for c in found[index:starts[index]] if c is not None]
                node = self.meet(node, self._if_chain(run), "allOf")
                index = starts[index]
                continue
            node = self.meet(node, self.reader.conjunct(children[index]), "allOf")
            index += 1
        return node

    def _if_chain(self, run: list[Conditional]) -> Node:
        """The conjunction of a chain of conditionals on one property with disjoint values,
        as the union of its cases (:mod:`.if_chains`): linear in the chain's length."""
        name = run[0].name
        pointer = self.at("allOf")
        thens = [self.reader.conjunct((Ref(c.then),)) for c in run]
        untold = replace(ANYTHING, objects=() if run[0].required else (
            ObjectSet(clauses=(Clause(properties=((name, NEVER),)),), pointer=pointer),))
        for then in thens:
            untold = self.meet(untold, then, "allOf")
        cases = [untold]
        for c, then in zip(run, thens, strict=True):
            holds = Node(objects=(ObjectSet(clauses=(Clause(properties=((name, (Ref(c.value),)),)),),
                                            required=(name,), pointer=c.pointer),))
            cases.append(self.meet(holds, then, "allOf"))
        others = inline(replace(ANYTHING, strings=(StringSet(excluded=(Literals.of(
            value for c in run for value in c.values),)),)))
        cases.append(Node(objects=(ObjectSet(
            clauses=(Clause(properties=((name, others),)),),
            required=() if run[0].required else (name,), pointer=pointer),)))
        return self._union(cases, "allOf") or replace(ANYTHING, exact=False)

    def any_of(self) -> Node | None:
        children = self.subschema_list("anyOf")
        if children is None:
            return None
        return self._union([self.reader.resolve(child) for child in children], "anyOf")

    def _union(self, nodes: list[Node], keyword: str) -> Node | None:
        try:
            return union(nodes)
        except TooManyAlternatives as exc:
            self.relax(keyword, f"`{keyword}` needs too many alternatives ({exc})",
                       code=TOO_COMPLEX)
            return None

    def one_of(self, context: Node) -> Node:
        """``context`` (what the rest of the schema allows) and exactly one branch.

        Each branch is met with ``context`` before the others' complements, so that what the
        context implies (a ``type: string`` beside disjoint file-name patterns) drops the
        ways of failing another branch that can't happen, instead of multiplying them out
        (seven branches of three properties made 3,645 object sets)."""
        children = self.subschema_list("oneOf")
        if children is None:
            return context
        nodes = [self.reader.resolve(child) for child in children]
        if self._disjoint(nodes):
            return self._met_union(context, nodes)
        if len(nodes) > MAX_OVERLAPPING_ONE_OF:
            self.relax("oneOf", f"`oneOf` with {len(nodes)} overlapping branches would need "
                       "each branch minus every other; it is enforced as `anyOf`",
                       code=TOO_COMPLEX)
            return self._met_union(context, nodes)
        branches = []
        for index, node in enumerate(nodes):
            branch = self.meet(context, node, "oneOf")
            exact = node.exact
            for other in range(len(nodes)):
                if other != index:
                    negated = self.reader.resolve((Not(children[other], self.pointer, "oneOf"),))
                    exact = exact and negated.exact
                    branch = self.meet(branch, negated, "oneOf")
            if not exact:
                self.exact = False
                return self._met_union(context, nodes)
            branches.append(branch)
        found = self._union(branches, "oneOf")
        return context if found is None else found

    def _met_union(self, context: Node, nodes: list[Node]) -> Node:
        found = self._union(nodes, "oneOf")
        return context if found is None else self.meet(context, found, "oneOf")

    def _disjoint(self, nodes: list[Node]) -> bool:
        """Whether no value satisfies two of ``nodes`` (``False`` when in doubt).

        Constants (``null``, booleans, numbers and strings listed by ``const``/``enum``) are
        compared by value, so a ``oneOf`` of thousands of constants costs linear time; only
        pairs that share a type in which one of them is not a list of constants are
        intersected."""
        owners: dict[tuple[str, Any], int] = {}
        open_types: dict[str, list[int]] = {}
        for index, node in enumerate(nodes):
            keys, open_in = _constant_keys(node)
            for key in keys:
                if owners.setdefault(key, index) != index:
                    return False
            for type_name in open_in:
                open_types.setdefault(type_name, []).append(index)
        pairs: set[tuple[int, int]] = set()
        for type_name, indices in open_types.items():
            having = [i for i, node in enumerate(nodes) if _has_type(node, type_name)]
            pairs.update((min(i, j), max(i, j)) for i in indices for j in having if i != j)
        tags: dict[int, dict[str, frozenset[tuple[str, Any]]]] = {}
        for first, second in sorted(pairs):
            a, b = nodes[first], nodes[second]
            if a.objects and b.objects:
                for index in (first, second):
                    if index not in tags:
                        tags[index] = self.reader.discriminators(nodes[index])
                if _told_apart(tags[first], tags[second]):
                    a, b = replace(a, objects=()), replace(b, objects=())
            try:
                common = intersect(a, b)
            except TooManyAlternatives:
                return False
            if not self.reader.is_empty(common):
                return False
        return True

    def negation(self) -> Node:
        return self.reader.complement(self.reader.resolve(self.child("not")), self.pointer, "not")

    def conditional(self) -> Node | None:
        condition = self.reader.resolve(self.child("if"))
        then = self.reader.resolve(self.child("then")) if "then" in self.schema else ANYTHING
        otherwise = self.reader.resolve(self.child("else")) if "else" in self.schema else ANYTHING
        if "then" not in self.schema and "else" not in self.schema:
            return None
        complement = self.reader.complement(condition, self.pointer, "if")
        if not complement.exact:
            self.exact = False
            return self._union([intersect(condition, then), otherwise], "if")
        return self._union([self.meet(condition, then, "then"),
                            self.meet(complement, otherwise, "else")], "if")

    def dependent_schemas(self, keyword: str) -> Node | None:
        value = self.schema[keyword]
        if not isinstance(value, dict):
            if keyword == "dependentSchemas":
                self.invalid(keyword, "`dependentSchemas` must be an object")
            return None
        node = ANYTHING
        found = discriminated(self.reader.document, value)
        if found is not None:
            node = self.meet(node, self._discriminated(found, keyword), keyword)
        for name, dependent in value.items():
            if not isinstance(dependent, (dict, bool)) or (
                    found is not None and name in found.allowed):
                continue
            absent = ObjectSet(clauses=(Clause(properties=((name, NEVER),)),))
            present = ObjectSet(required=(name,))
            others = replace(ANYTHING, objects=(absent,))
            when_present = self.meet(self.reader.resolve(self.child(keyword, name)),
                                     Node(objects=(present,)), keyword)
            either = self._union([others, when_present], keyword)
            if either is not None:
                node = self.meet(node, either, keyword)
        return node

    def _discriminated(self, found: Discriminated, keyword: str) -> Node:
        """The conjunction of dependencies that each restrict one property to string
        constants, as the union of its cases (:mod:`.dependencies`)."""
        pointer = self.at(keyword)

        def lacking(names: Iterable[str]) -> tuple[tuple[str, Child], ...]:
            return tuple((name, NEVER) for name in sorted(names))

        def holding(value: Child, absent: Iterable[str]) -> ObjectSet:
            return ObjectSet(clauses=(Clause(properties=((found.name, value), *lacking(absent))),),
                             required=(found.name,), pointer=pointer)

        cases = [ObjectSet(clauses=(Clause(properties=lacking((found.name,))),), pointer=pointer)]
        cases.extend(holding(inline(Node(strings=(StringSet(languages=(Literals.of(values),)),))),
                             excluded) for values, excluded in found.groups())
        cases.append(holding(inline(replace(ANYTHING, strings=(StringSet(excluded=(
            Literals.of(found.listed),)),))), found.allowed))
        return replace(ANYTHING, objects=tuple(cases))

    # -- unevaluated* ----------------------------------------------------------------------
    def unevaluated_properties(self) -> Clause | None:
        if "unevaluatedProperties" not in self.schema:
            return None
        try:
            return unevaluated_properties(self.reader.document, self.pointer)
        except Undecidable:
            if decided_per_alternative(self.reader.document, self.pointer):
                self.unevaluated_per_alternative = True
            else:
                self._relax_unevaluated_properties()
            return None

    def _relax_unevaluated_properties(self) -> None:
        self.relax("unevaluatedProperties", "`unevaluatedProperties` beside `anyOf` or a "
                   "dynamic reference depends on which branches matched; it is not enforced")

    def unevaluated_items(self) -> tuple[int, Child] | None:
        if "unevaluatedItems" not in self.schema:
            return None
        try:
            return unevaluated_items(self.reader.document, self.pointer)
        except Undecidable:
            self.relax("unevaluatedItems", "`unevaluatedItems` beside `anyOf`, `oneOf`, `not`, "
                       "`if`, dependent schemas or `contains` depends on which items matched; "
                       "it is not enforced")
            return None


def _constant_keys(node: Node) -> tuple[list[tuple[str, Any]], list[str]]:
    """The constants ``node`` lists, as ``(type, value)`` keys equal exactly when the values
    are JSON-equal, and the types in which ``node`` allows more than listed constants."""
    keys: list[tuple[str, Any]] = [("null", None)] if node.null else []
    keys.extend(("boolean", value) for value in node.booleans)
    open_in = []
    if all(is_point(s) for s in node.numbers):
        keys.extend(("number", s.low.value) for s in node.numbers if s.low is not None)
    else:
        open_in.append("number")
    literal_sets = [s.languages[0] for s in node.strings
                    if s == StringSet(languages=s.languages, pointer=s.pointer)
                    and len(s.languages) == 1 and isinstance(s.languages[0], Literals)]
    if len(literal_sets) == len(node.strings):
        keys.extend(("string", text) for literals in literal_sets for text in literals.values)
    else:
        open_in.append("string")
    if node.arrays:
        open_in.append("array")
    if node.objects:
        open_in.append("object")
    return keys, open_in


def _told_apart(a: dict[str, frozenset[tuple[str, Any]]],
                b: dict[str, frozenset[tuple[str, Any]]]) -> bool:
    """Whether a property both discriminator maps name has no constant in common."""
    return any(name in b and not values & b[name] for name, values in a.items())


def _has_type(node: Node, type_name: str) -> bool:
    facet = {"number": node.numbers, "string": node.strings, "array": node.arrays,
             "object": node.objects}[type_name]
    return bool(facet)


def _only(facet: str, value: Any) -> Node:
    """Every value, except that type ``facet`` is limited to ``value``."""
    return replace(ANYTHING, **{facet: value})


def _tighter(a: Bound | None, b: Bound, lower: bool) -> Bound:
    if a is None:
        return b
    if a.value == b.value:
        return Bound(a.value, a.exclusive or b.exclusive)
    if lower:
        return a if a.value > b.value else b
    return a if a.value < b.value else b

