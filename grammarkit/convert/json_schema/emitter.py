"""Nodes to grammar rules: one rule per distinct child schema, built breadth-first.

:meth:`Emitter.emit` starts from the root and works through a queue, so however deep the schema
(or however recursive), no Python recursion follows it. A child's rule is named after its JSON
pointer (``root.address.city``, ``Node.children``); helper rules extend their owner's name, and
shared rules (``json-value``, ``json-string``, ``ws``...) come last. Small scalar schemas are
inlined where they are used rather than given a rule of their own.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from grammarkit.convert.json_schema.absorption import without_absorbed
from grammarkit.convert.json_schema.arrays import array_expr
from grammarkit.convert.json_schema.automata import SCALARS, Ranges
from grammarkit.convert.json_schema.digits import choice, is_nothing, repeat, sequence
from grammarkit.convert.json_schema.json_text import quoted, spell_ranges
from grammarkit.convert.json_schema.layout import WS_RULE, Layout
from grammarkit.convert.json_schema.model import (
    ANY,
    ANYTHING,
    NEVER,
    Child,
    Literals,
    Node,
    Ref,
    StringSet,
)
from grammarkit.convert.json_schema.number_sets import is_point, number_expr, points_expr
from grammarkit.convert.json_schema.numbers import ANY_NUMBER
from grammarkit.convert.json_schema.objects import object_expr
from grammarkit.convert.json_schema.pruning import pruned
from grammarkit.convert.json_schema.reader import Reader
from grammarkit.convert.json_schema.references import unescape
from grammarkit.convert.json_schema.report import (
    INDENT_RELAXED,
    TOO_COMPLEX,
    TOO_LARGE,
    Reporter,
)
from grammarkit.convert.json_schema.strings import string_expr
from grammarkit.ebnf import ast

T = TypeVar("T")

MAX_INDENT_DEPTH = 16
"""In ``indented`` mode, values nested deeper than this accept any whitespace layout."""

MAX_RULES = 20_000
"""The most rules one grammar may have."""

MAX_LISTED_PARTS = 3
"""The error for a grammar beyond :data:`MAX_RULES` names this many of its largest subschemas."""

MAX_INLINE_SIZE = 12
"""Scalar schemas whose expression has at most this many nodes are inlined where used."""

_NAME_CHARACTER = re.compile(r"[^A-Za-z0-9_-]")
_SHARED_NAME = re.compile(r"json-(?:char|integer|number|string|value|object|array)(?:-[0-9]+)?")
"""The names of the fixed shared rules (:meth:`Emitter.shared`): a ``$defs`` entry called
``json-string`` must not take one before the shared rule is first needed."""
_CONTAINER_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "definitions",
                                 "dependentSchemas"})


class Emitter:
    """Builds the rules of one grammar."""

    def __init__(self, reader: Reader, reporter: Reporter, layout: Layout, property_order: str):
        self.reader = reader
        self.reporter = reporter
        self.layout = layout
        self.property_order = property_order
        self._rules: dict[str, ast.Rule] = {}
        self._shared: dict[str, ast.Rule] = {}
        self._taken: set[str] = {"root", WS_RULE.name}
        self._counters: dict[str, int] = {}
        self._memo: dict[Hashable, Any] = {}
        self._queue: deque[tuple[str, Child, int]] = deque()
        self._named: dict[tuple[Child, int], str] = {}
        self._by_node: dict[tuple[Node, int], str] = {}
        self._inlined: dict[Child, ast.Expr | None] = {}
        self._chars: dict[tuple[Ranges, bool], ast.Expr] = {}
        self._letter_rules = 0
        self._productive: dict[str, tuple[str, ...]] = {}
        self._bounded_strings: dict[tuple[int, int | None], ast.RuleRef] = {}
        self._uses_whitespace = False
        self._helpers: dict[ast.Expr, ast.RuleRef] = {}
        self._keys: dict[str, ast.RuleRef] = {}
        self._key_rules: list[ast.Rule] = []

    # -- the whole grammar -----------------------------------------------------------------
    def emit(self, root: Child) -> ast.GrammarAST:
        """The grammar whose rule ``root`` matches the values ``root`` allows."""
        self._named[(root, 0)] = "root"
        self._by_node[(self.reader.resolve(root), 0)] = "root"
        self._queue.append(("root", root, 0))
        sizes: dict[str, int] = {}
        over_budget = False
        while self._queue:
            name, child, depth = self._queue.popleft()
            before = self._counted_rules()
            self._rules[name] = ast.Rule(name, _NOTHING)  # keeps its place before its helpers
            node = self.reader.resolve(child)
            pointer = _pointer(child)
            if over_budget:
                self.reporter.relax(pointer, f"the grammar reached {MAX_RULES} rules before "
                                    "this subschema: any value of its types is accepted here",
                                    "simplify the schema's largest subschemas", TOO_COMPLEX)
                self._rules[name] = ast.Rule(name, self.any_of_types(node, depth))
            else:
                self._rules[name] = ast.Rule(name, self.node_expr(node, name, depth))
            count = self._counted_rules()
            sizes[pointer] = sizes.get(pointer, 0) + count - before
            if count > MAX_RULES and not over_budget:
                largest = sorted(sizes.items(), key=lambda item: -item[1])[:MAX_LISTED_PARTS]
                if not self.reporter.lenient:
                    parts = ", ".join(f"{p or '/'} ({n} rules)" for p, n in largest)
                    raise self.reporter.fail(
                        largest[0][0], f"the grammar needs more than {MAX_RULES} rules (the "
                        f"largest subschemas so far: {parts})", TOO_LARGE,
                        "simplify these subschemas, or pass lenient=True to accept any value "
                        "of their types in the subschemas left beyond the limit")
                over_budget = True
        rules = (*self._rules.values(), *self._key_rules, *self._shared.values())
        return ast.GrammarAST(pruned(rules + ((WS_RULE,) if self._uses_whitespace else ()),
                                     self._productive))

    def _counted_rules(self) -> int:
        """The rules that count towards :data:`MAX_RULES`: not the key rules nor the rules of
        one character (``char.a``), of which there is at most one per name or character."""
        return len(self._rules) + len(self._shared) - self._letter_rules

    def node_expr(self, node: Node, name: str, depth: int) -> ast.Expr:
        """The expression for a value ``node`` allows, at nesting ``depth``."""
        if node == ANYTHING:
            return self.any_value(depth)
        alternatives: list[ast.Expr] = []
        if node.null:
            alternatives.append(ast.Literal("null"))
        alternatives.extend(ast.Literal("true" if b else "false") for b in sorted(node.booleans,
                                                                                 reverse=True))
        points = [s.low.value for s in node.numbers if is_point(s) and s.low is not None]
        if points:
            alternatives.append(points_expr(points, self))
        alternatives.extend(number_expr(s, self) for s in node.numbers if not is_point(s))
        alternatives.extend(string_expr(s, self, f"{name}.string")
                            for s in _merge_literal_sets(node.strings))
        containers = [array_expr(array, self, name, depth) for array in node.arrays]
        containers.extend(object_expr(obj, self, name, depth)
                          for obj in without_absorbed(node.objects))
        for expr in containers:
            # Flattened, so that the empty container of several sets is written once.
            if isinstance(expr, ast.Choice):
                alternatives.extend(expr.alternatives)
            elif expr is not None:
                alternatives.append(expr)
        return choice(list(dict.fromkeys(alternatives)))

    # -- children --------------------------------------------------------------------------
    def value(self, child: Child, depth: int, hint: str) -> ast.Expr:
        """An expression for the values ``child`` allows at ``depth``: a shared or inlined
        expression for small scalar schemas, else a reference to the child's own rule."""
        if child == ANY:
            return self.any_value(depth)
        if child == NEVER:
            return ast.CharClass(())
        child = self.reader.canonical(child)
        node = self.reader.resolve(child)
        if node == ANYTHING:
            return self.any_value(depth)
        if not node.arrays and not node.objects:
            inlined = self._scalar(child, node, hint)
            if inlined is not None:
                return inlined
        depth = self.depth_key(depth)
        name = self._named.get((child, depth))
        if name is None:
            # Children that differ only in how they were reached (a `$ref` beside an `allOf`
            # of the same schema, the same branch under several `if`s) share one rule.
            name = self._by_node.get((node, depth))
            if name is None:
                name = self._by_node[(node, depth)] = self.fresh_name(
                    self._base_name(child, hint))
                self._queue.append((name, child, depth))
            self._named[(child, depth)] = name
        return ast.RuleRef(name)

    def _scalar(self, child: Child, node: Node, hint: str) -> ast.Expr | None:
        if child not in self._inlined:
            expr = self.node_expr(node, self._base_name(child, hint), 0)
            self._inlined[child] = expr if _size(expr) <= MAX_INLINE_SIZE else None
        return self._inlined[child]

    def _base_name(self, child: Child, hint: str) -> str:
        refs = [atom.pointer for atom in child if isinstance(atom, Ref)]
        return pointer_name(refs[0]) if len(child) == 1 and refs else hint

    def depth_key(self, depth: int) -> int:
        """The depth that matters for layout: always 0 unless indented, capped past the limit."""
        if self.layout.mode != "indented":
            return 0
        return min(depth, MAX_INDENT_DEPTH + 1)

    def layout_at(self, depth: int) -> Layout:
        """The layout for containers at ``depth``."""
        if self.layout.mode == "indented" and depth > MAX_INDENT_DEPTH:
            self.reporter.warn("", INDENT_RELAXED, f"indentation is enforced to depth "
                               f"{MAX_INDENT_DEPTH}; deeper values accept any whitespace",
                               "flatten the schema or use whitespace='flexible'")
            self._uses_whitespace = True
            return self.layout.flexible
        self._uses_whitespace |= self.layout.mode == "flexible"
        return self.layout

    # -- rules -----------------------------------------------------------------------------
    def fresh_name(self, base: str) -> str:
        """A rule name made from ``base`` (invalid characters replaced) that no other rule has."""
        base = ".".join(_NAME_CHARACTER.sub("_", part) or "_" for part in base.split("."))
        if base[0].isdigit():
            base = "_" + base
        if _SHARED_NAME.fullmatch(base):
            base += "_"
        name = base
        counter = self._counters.get(base, 1)
        while name in self._taken:
            counter += 1
            name = f"{base}-{counter}"
        self._counters[base] = counter
        self._taken.add(name)
        return name

    def numbered_name(self, prefix: str) -> str:
        """``prefix.N`` for the least ``N`` above the last one given that no other rule has
        (``prefix`` a valid name: thousands of automaton states skip :meth:`fresh_name`'s
        checks)."""
        count = self._counters.get(prefix + ".", 0) + 1
        while f"{prefix}.{count}" in self._taken:
            count += 1
        self._counters[prefix + "."] = count
        name = f"{prefix}.{count}"
        self._taken.add(name)
        return name

    def add_rule(self, name: str, body: ast.Expr) -> ast.RuleRef:
        """Add a helper rule (``name`` must come from :meth:`fresh_name`)."""
        self._rules[name] = ast.Rule(name, body)
        return ast.RuleRef(name)

    def helper(self, base: str, body: ast.Expr) -> ast.RuleRef:
        """A rule (named from ``base``) with ``body``, shared with any identical helper."""
        found = self._helpers.get(body)
        if found is None:
            found = self._helpers[body] = self.add_rule(self.fresh_name(base), body)
        return found

    def shared_body(self, base: str, body: ast.Expr) -> tuple[ast.RuleRef, bool]:
        """The rule (named from ``base``) with ``body``, shared with any identical helper, and
        whether it is new: the caller then adds it with :meth:`add_rule`."""
        found = self._helpers.get(body)
        if found is not None:
            return found, False
        found = self._helpers[body] = ast.RuleRef(self.fresh_name(base))
        return found, True

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, computed once per ``key`` in this grammar (its rules are then shared:
        two objects declaring the same property names share one automaton for the others, and
        the product automaton of the same string constraints is built once)."""
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = build()
        return found

    def add_rules(self, rules: list[ast.Rule]) -> None:
        """Add helper rules named by :meth:`fresh_name` (or extensions of such a name)."""
        for rule in rules:
            self._taken.add(rule.name)
            self._rules[rule.name] = rule

    def add_productive_rules(self, rules: list[tuple[ast.Rule, tuple[str, ...]]]) -> None:
        """Add helper rules (as :meth:`add_rules`) that derive some string, each with the
        names of the rules it refers to, all of them such rules too: pruning takes them as
        they are instead of walking them."""
        for rule, references in rules:
            self._taken.add(rule.name)
            self._rules[rule.name] = rule
            self._productive[rule.name] = references

    def shared(self, name: str, build: Callable[[], ast.Expr]) -> ast.RuleRef:
        """The shared rule ``name``, built by ``build()`` the first time it is needed (which
        may refer back to it)."""
        if name not in self._shared:
            self._taken.add(name)
            self._shared[name] = ast.Rule(name, _NOTHING)
            self._shared[name] = ast.Rule(name, build())
        return ast.RuleRef(name)

    def key(self, name: str) -> ast.RuleRef:
        """The JSON spellings of the property name ``name``, quotes included: one rule per
        name (``key.id ::= "\\"" char.i char.d "\\""``, each character a shared
        :meth:`char` rule), which every object declaring the name refers to instead of
        spelling it again. Key rules don't count towards :data:`MAX_RULES`: there is at most
        one per name the schema declares."""
        found = self._keys.get(name)
        if found is None:
            rule_name = self.fresh_name(f"key.{name}")
            chars = [self.char(((ord(c), ord(c)),), share=True) for c in name]
            self._key_rules.append(ast.Rule(rule_name, quoted(sequence(chars))))
            if not any(is_nothing(char) for char in chars):  # a lone surrogate is nothing
                self._productive[rule_name] = tuple(
                    char.name for char in chars if isinstance(char, ast.RuleRef))
            found = self._keys[name] = ast.RuleRef(rule_name)
        return found

    def char(self, ranges: Ranges, share: bool = False) -> ast.Expr:
        """The JSON-string spellings of one code point in ``ranges`` (a shared rule when large,
        or when ``share`` and there are several spellings)."""
        found = self._chars.get((ranges, share))
        if found is None and isinstance(self._chars.get((ranges, not share)), ast.RuleRef):
            found = self._chars[(ranges, not share)]
        if found is not None:
            return found
        if ranges == SCALARS:
            expr: ast.Expr = self.shared("json-char", lambda: spell_ranges(SCALARS))
            self._productive["json-char"] = ()
        else:
            spelled = spell_ranges(ranges)
            size = _size(spelled)
            if size <= 6 and not (share and size > 1):
                expr = spelled
            else:
                expr = self.shared(self.fresh_name(_char_rule_name(ranges, len(self._chars))),
                                   lambda: spelled)
                self._letter_rules += ranges[0][0] == ranges[-1][1]
                self._productive[expr.name] = ()  # terminals of a nonempty set
        self._chars[(ranges, share)] = expr
        return expr

    # -- any value -------------------------------------------------------------------------
    def any_value(self, depth: int) -> ast.Expr:
        """Any JSON value at ``depth``."""
        depth = self.depth_key(depth)
        suffix = f"-{depth}" if self.layout.mode == "indented" else ""
        return self.shared(f"json-value{suffix}", lambda: self._any_value_body(depth, suffix))

    def any_of_types(self, node: Node, depth: int) -> ast.Expr:
        """Any JSON value of the types ``node`` allows, at ``depth`` (what a subschema beyond
        the rule budget is relaxed to)."""
        if node == ANYTHING:
            return self.any_value(depth)
        alternatives: list[ast.Expr] = [ast.Literal("null")] if node.null else []
        alternatives.extend(ast.Literal("true" if b else "false")
                            for b in sorted(node.booleans, reverse=True))
        if node.numbers:
            alternatives.append(self.any_number())
        if node.strings:
            alternatives.append(self.any_string())
        if node.arrays or node.objects:
            self.any_value(depth)  # defines the containers' shared rules
            suffix = f"-{self.depth_key(depth)}" if self.layout.mode == "indented" else ""
            alternatives.extend(ast.RuleRef(f"json-{kind}{suffix}") for kind, present in (
                ("array", node.arrays), ("object", node.objects)) if present)
        return choice(alternatives)

    def _any_value_body(self, depth: int, suffix: str) -> ast.Expr:
        layout = self.layout_at(depth)
        inner = self.any_value(depth + 1)
        string = self.any_string()
        member = sequence([string, layout.colon(), inner])
        obj = self.shared(f"json-object{suffix}", lambda: choice([
            layout.empty("{}"),
            sequence([layout.open("{", depth), member,
                      ast.Repeat(sequence([layout.comma(depth), member]), 0, None, "*"),
                      layout.close("}", depth)]),
        ]))
        array = self.shared(f"json-array{suffix}", lambda: choice([
            layout.empty("[]"),
            sequence([layout.open("[", depth), inner,
                      ast.Repeat(sequence([layout.comma(depth), inner]), 0, None, "*"),
                      layout.close("]", depth)]),
        ]))
        return choice([obj, array, string, self.any_number(), ast.Literal("true"),
                       ast.Literal("false"), ast.Literal("null")])

    def any_string(self) -> ast.RuleRef:
        """Any JSON string."""
        return self.shared("json-string", lambda: sequence([
            ast.Literal('"'), ast.Repeat(self.char(SCALARS), 0, None, "*"), ast.Literal('"')]))

    def bounded_string(self, low: int, high: int | None) -> ast.RuleRef:
        """Any JSON string of ``low`` to ``high`` characters (``None``: unbounded): one shared
        rule per distinct bounds (``json-string.max12 ::= "\\"" json-char{0,12} "\\""``).

        Every value with the same bounds refers to that rule instead of spelling the
        repetition in place, so a decoder meets one string body, not one per property (50
        ``maxLength: 12`` properties share the token classes of one rule's states).
        """
        if (low, high) == (0, None):
            return self.any_string()
        found = self._bounded_strings.get((low, high))
        if found is None:
            name = self.fresh_name(f"json-string.{_length_suffix(low, high)}")
            found = self._bounded_strings[(low, high)] = self.shared(name, lambda: quoted(
                repeat(self.char(SCALARS), low, high)))
        return found

    def any_number(self) -> ast.RuleRef:
        """Any JSON number."""
        return self.shared("json-number", lambda: ANY_NUMBER)


def _pointer(child: Child) -> str:
    """The JSON pointer a child stands for (its first reference; ``""`` for inline nodes)."""
    return next((atom.pointer for atom in child if isinstance(atom, Ref)), "")


def _length_suffix(low: int, high: int | None) -> str:
    """``max12``, ``min3``, ``min3-max12`` or ``len5``: a rule name's part for length bounds."""
    if low == high:
        return f"len{low}"
    parts = [f"min{low}"] if low else []
    if high is not None:
        parts.append(f"max{high}")
    return "-".join(parts)


def _char_rule_name(ranges: Ranges, count: int) -> str:
    """``char.a`` for one ASCII letter or digit, else ``chars.N``."""
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1] and chr(ranges[0][0]).isascii() and (
            chr(ranges[0][0]).isalnum()):
        return f"char.{chr(ranges[0][0])}"
    return f"chars.{count + 1}"


def pointer_name(pointer: str) -> str:
    """A rule name for the schema at ``pointer``: ``root`` then the path, keyword containers
    (``properties``, ``$defs``...) left out, ``$defs`` entries named after themselves.
    :meth:`Emitter.fresh_name` then makes it a valid, unique rule name."""
    tokens = [unescape(token) for token in pointer[1:].split("/")] if pointer else []
    parts = ["root"]
    index = 0
    if len(tokens) >= 2 and tokens[0] in ("$defs", "definitions"):
        parts = [tokens[1]]
        index = 2
    while index < len(tokens):
        token = tokens[index]
        if token in _CONTAINER_KEYWORDS and index + 1 < len(tokens):
            token = tokens[index + 1]
            index += 1
        parts.append(token)
        index += 1
    return ".".join(parts)


_NOTHING = ast.CharClass(())


def _size(expr: ast.Expr) -> int:
    return sum(1 for _ in ast.walk(expr))


def _merge_literal_sets(sets: tuple[StringSet, ...]) -> list[StringSet]:
    """``sets`` with the plain literal sets (``enum``/``const`` strings) joined into one, so
    overlapping ``enum``s in ``anyOf`` branches don't write the same alternative twice."""
    plain = [s for s in sets if len(s.languages) == 1 and isinstance(s.languages[0], Literals)
             and s == StringSet(languages=s.languages, pointer=s.pointer)]
    if len(plain) <= 1:
        return list(sets)
    values = [v for s in plain for lang in s.languages if isinstance(lang, Literals)
              for v in lang.values]
    joined = StringSet(languages=(Literals.of(values),), pointer=plain[0].pointer)
    return [joined if s is plain[0] else s for s in sets if s is plain[0] or s not in plain]
