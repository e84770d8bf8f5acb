"""llama.cpp GBNF: export a grammar to GBNF text, and read GBNF text into a grammar.

GBNF is the dialect's close cousin: ``name ::= body`` rules, double-quoted literals, ``[...]``
classes, ``( )``, ``|``, ``* + ?`` and ``{m,n}``. The differences handled here:

- Rule names are ``[a-zA-Z0-9-]`` (the reader also accepts ``_``); the start rule is ``root``.
- A rule ends at a newline unless inside parentheses or right after ``|``.
- Escapes are ``\\x`` (exactly two hex digits), ``\\u``, ``\\U``, ``\\t \\r \\n \\\\ \\" \\[ \\] \\-``.
- ``.`` is any code point; ``<[id]>`` and ``!<[id]>`` match one token (one other token).
- Repetition counts above 2000 are rejected (or, for upper bounds, silently made unbounded) by
  llama.cpp, so both directions report them as GK142.

Exporting drops what has no effect on the language (rule lookaheads, and the attributes but
``lazy``), expands ``Regex("...")`` macros, and reports (GK140) what GBNF can't express: ``lazy``
rules (a lazy rule ends at its first match), ``TagDispatch``, ``TokenTagDispatch``,
``Substring`` and ``ExcludeToken`` of several ids. Only the rules reachable
from the root are written. llama.cpp also rejects left-recursive grammars; that is not checked.

Reading reports malformed text as GK141, undefined rules as GK103, duplicated rules as GK104 and a
missing root as GK105, each located in the GBNF text. A rule name the dialect can't spell (one
starting with a digit, ``true``, ``false``) gets a ``.`` prefix.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace

from grammarkit.codepoints import MAX_CODEPOINT, Ranges, merge
from grammarkit.convert.regex import regex_to_ast
from grammarkit.diagnostics import MAX_DIAGNOSTICS, Diagnostic, GrammarError, Severity, error
from grammarkit.ebnf import ast
from grammarkit.ebnf.parser import MAX_NESTING
from grammarkit.source import SourceText

LLAMA_MAX_REPETITION = 2000
"""llama.cpp's limit on repetition counts (``MAX_REPETITION_THRESHOLD``)."""

# Binding strengths, weakest first: where an expression of strength s appears in a context that
# needs more, it is parenthesized.
CHOICE, SEQUENCE, POSTFIX, ATOM = range(4)


def to_gbnf(grammar: ast.GrammarAST, root: str) -> str:
    """``grammar`` as llama.cpp GBNF text, with rule ``root`` renamed ``root``.

    Raises
    ------
    GrammarError
        GK140 for constructs GBNF can't express, GK142 for repetition counts llama.cpp rejects,
        GK103/GK105 for undefined rules or a missing root.
    """
    return _GbnfWriter(grammar, root).write()


def from_gbnf(text: str, root: str = "root") -> ast.GrammarAST:
    """Read llama.cpp GBNF ``text``; ``root`` names the start rule.

    Raises
    ------
    GrammarError
        With every error found, located in ``text``.
    """
    reader = _GbnfReader(text)
    rules = reader.read()
    diagnostics = reader.diagnostics + check_rules(rules, dialect_name(root), reader.unreadable)
    if diagnostics:
        source = SourceText(text, "<gbnf>")
        ordered = sorted(diagnostics, key=lambda d: d.span.start if d.span else len(text))
        if len(ordered) > MAX_DIAGNOSTICS:
            more = len(ordered) - MAX_DIAGNOSTICS
            ordered[MAX_DIAGNOSTICS:] = [Diagnostic(
                "GK100", Severity.NOTE, f"{more} more diagnostics not shown", None,
                "fix the errors above first; later ones are often consequences")]
        raise GrammarError([d.with_source(source) for d in ordered])
    return ast.GrammarAST(tuple(rules))


# -- writing ---------------------------------------------------------------------------------


class ExpressionWriter(ABC):
    """Writes a grammar in an EBNF-family notation, one rule per line.

    Subclasses name the rules and spell atoms and repetitions; :meth:`adapt` rewrites nodes the
    target lacks into ones it has. Printing is iterative, so deep expressions are safe.
    """

    target = ""
    """The notation's name, for messages."""
    root_name = ""
    """What the start rule must be called."""
    assign = ""
    """What separates a rule's name from its body."""

    def __init__(self, grammar: ast.GrammarAST, root: str):
        self.grammar = grammar
        self.root = root
        self.names: dict[str, str] = {}
        """Target names of the grammar's rules."""
        self.taken: set[str] = set()
        self.suffixes: dict[str, int] = {}
        """The last suffix :meth:`fresh` gave each base name."""
        self.diagnostics: list[Diagnostic] = []

    # -- to be provided by subclasses --------------------------------------------------------
    @abstractmethod
    def mangle(self, name: str) -> str:
        """``name`` made valid in the target (uniqueness is handled by the caller)."""

    @abstractmethod
    def unique(self, base: str, k: int) -> str:
        """The ``k``-th alternative spelling of ``base`` when it is taken."""

    @abstractmethod
    def atom(self, expr: ast.Expr) -> str:
        """A literal, class, rule reference or token, spelled in the target."""

    @abstractmethod
    def quantifier(self, repeat: ast.Repeat) -> str:
        """What follows the repeated item."""

    def adapt(self, expr: ast.Expr) -> ast.Expr:
        """``expr`` rewritten into constructs the target has (unchanged by default)."""
        return expr

    def lower(self, expr: ast.Expr) -> ast.Expr:
        """``expr`` in the constructs the target has: macros expanded (or reported), one-part
        groups unwrapped, then :meth:`adapt`-ed."""
        expr = _unwrapped(expr)
        if isinstance(expr, ast.RegexMacro):
            if expr.flags is not None or expr.json_string or expr.pattern.startswith("(?i)"):
                option = "json_string" if expr.json_string else "flags"
                return self.unsupported(expr, f"`Regex` with `{option}`",
                                        "rewrite it as a plain `Regex(\"...\")` or as rules")
            return self.adapt(_unwrapped(regex_to_ast(expr.pattern, flavor="xgrammar")))
        if isinstance(expr, ast.TagDispatch):
            return self.unsupported(expr, "`TagDispatch`",
                                    "write the dispatch out as rules: free text, then each tag "
                                    "followed by its rule")
        if isinstance(expr, ast.TokenTagDispatch):
            return self.unsupported(expr, "`TokenTagDispatch`", "write the dispatch out as rules")
        if isinstance(expr, ast.Substring):
            return self.unsupported(expr, "`Substring`", "list the allowed substrings with `|`")
        return self.adapt(expr)

    # -- shared machinery --------------------------------------------------------------------
    def unsupported(self, expr: ast.Expr, what: str, hint: str) -> ast.Expr:
        """Report ``expr`` as inexpressible in the target; a placeholder stands in for it."""
        self.diagnostics.append(error("GK140", f"{what} has no {self.target} equivalent",
                                      expr.span, hint))
        return ast.Literal("", expr.span)

    def extra_rules(self) -> list[str]:
        """Lines for rules the target needs besides the grammar's own (none by default)."""
        return []

    def write(self) -> str:
        """The whole grammar: the root rule first, then the rules it reaches, in order."""
        rules = self._reachable_rules()
        for rule in rules:
            self.names[rule.name] = self.fresh(
                self.root_name if rule.name == self.root else self.mangle(rule.name))
        for rule in rules:
            if any(a.key == "lazy" for a in rule.attributes):
                self.diagnostics.append(error(
                    "GK140", f"`{rule.name}[lazy]` has no {self.target} equivalent",
                    rule.name_span, "a lazy rule ends at its first match, which changes the "
                    "language; drop `lazy` in the source, or make the rule's text prefix-free"))
        lines = [f"{self.names[rule.name]}{self.assign}{self.expression(rule.body)}"
                 for rule in rules]
        lines += self.extra_rules()
        if self.diagnostics:
            raise GrammarError(self.diagnostics)
        return "\n".join(lines) + "\n"

    def _reachable_rules(self) -> list[ast.Rule]:
        rule_map = self.grammar.rule_map()
        if self.root not in rule_map:
            self.diagnostics.append(error("GK105", f"the root rule `{self.root}` is not defined",
                                          None, f"define `{self.root} ::= ...`"))
            raise GrammarError(self.diagnostics)
        reached = {self.root}
        todo = [self.root]
        while todo:
            for name, span in ast.referenced_rules(rule_map[todo.pop()].body):
                if name not in rule_map:
                    self.diagnostics.append(error("GK103", f"rule `{name}` is not defined", span,
                                                  f"define `{name} ::= ...`"))
                elif name not in reached:
                    reached.add(name)
                    todo.append(name)
        if self.diagnostics:
            raise GrammarError(self.diagnostics)
        root_rule = rule_map[self.root]
        return [root_rule] + [rule for rule in rule_map.values()
                              if rule.name in reached and rule is not root_rule]

    def fresh(self, base: str) -> str:
        """A rule name in the target, ``base`` if it is still free, and reserve it."""
        candidate, k = base, self.suffixes.get(base, 1)
        while candidate in self.taken:
            k += 1
            candidate = self.unique(base, k)
        self.suffixes[base] = k
        self.taken.add(candidate)
        return candidate

    def expression(self, expr: ast.Expr, context: int = CHOICE) -> str:
        """``expr`` in the target notation, parenthesized if weaker than ``context``."""
        out: list[str] = []
        stack: list[str | tuple[ast.Expr, int]] = [(expr, context)]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            node, needed = item
            node = self.lower(node)
            if _strength(node) < needed:
                stack.extend((")", (node, CHOICE), "("))
            elif isinstance(node, ast.Choice):
                stack.extend(_joined(node.alternatives, " | ", SEQUENCE))
            elif isinstance(node, ast.Sequence):
                stack.extend(_joined(node.items, " ", SEQUENCE))
            elif isinstance(node, ast.Repeat):
                stack.extend((self.quantifier(node), (node.item, ATOM)))
            else:
                out.append(self.atom(node))
        return "".join(out)


def scalar_ranges(ranges: Ranges) -> Ranges:
    """``ranges`` with no surrogate (U+D800-DFFF) at either end of a range.

    Surrogates never occur in UTF-8 text, so the set matches the same text; and targets like
    Rust's ``regex`` refuse a surrogate written as an escape.
    """
    result = []
    for low, high in ranges:
        low = 0xE000 if 0xD800 <= low <= 0xDFFF else low
        high = 0xD7FF if 0xD800 <= high <= 0xDFFF else high
        if low <= high:
            result.append((low, high))
    return tuple(result)


def _unwrapped(expr: ast.Expr) -> ast.Expr:
    """``expr`` without sequences and choices of one part; ``()`` as the empty literal."""
    while isinstance(expr, (ast.Sequence, ast.Choice)):
        parts = expr.items if isinstance(expr, ast.Sequence) else expr.alternatives
        if len(parts) != 1:
            return ast.Literal("", expr.span) if not parts else expr
        expr = parts[0]
    return expr


def _strength(expr: ast.Expr) -> int:
    if isinstance(expr, ast.Choice):
        return CHOICE
    if isinstance(expr, ast.Sequence):
        return SEQUENCE
    if isinstance(expr, ast.Repeat):
        return POSTFIX
    return ATOM


def _joined(operands: tuple[ast.Expr, ...], separator: str,
            context: int) -> list[str | tuple[ast.Expr, int]]:
    """Stack entries printing ``operands`` with ``separator`` between them (reversed)."""
    entries: list[str | tuple[ast.Expr, int]] = []
    for k, operand in enumerate(reversed(operands)):
        if k:
            entries.append(separator)
        entries.append((operand, context))
    return entries


_GBNF_ESCAPES = {0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r", 0x5C: "\\\\"}


def _gbnf_char(cp: int, specials: str) -> str:
    if cp in _GBNF_ESCAPES:
        return _GBNF_ESCAPES[cp]
    c = chr(cp)
    if c in specials:
        return "\\" + c
    if c.isprintable() and not 0xD800 <= cp <= 0xDFFF:
        return c
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    return f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}"


class _GbnfWriter(ExpressionWriter):
    target = "GBNF"
    root_name = "root"
    assign = " ::= "

    def mangle(self, name: str) -> str:
        return re.sub(r"[^A-Za-z0-9-]", "-", name)

    def unique(self, base: str, k: int) -> str:
        return f"{base}-{k}"

    def adapt(self, expr: ast.Expr) -> ast.Expr:
        if isinstance(expr, ast.Literal) and any(0xD800 <= ord(c) <= 0xDFFF for c in expr.value):
            return self.unsupported(expr, "a literal with a surrogate code point (`\\uD800`..)",
                                    "GBNF text is UTF-8, which cannot hold a lone surrogate")
        if isinstance(expr, ast.TokenSet) and len(expr.ids) > 1:
            if expr.exclude:
                return self.unsupported(expr, "`ExcludeToken` of several tokens",
                                        "llama.cpp's `!<[id]>` excludes one token only")
            return ast.Choice(tuple(ast.TokenSet((i,), span=expr.span) for i in expr.ids),
                              expr.span)
        if isinstance(expr, ast.Repeat) and max(expr.min, expr.max or 0) > LLAMA_MAX_REPETITION:
            self.diagnostics.append(error(
                "GK142", f"llama.cpp rejects repetition counts above {LLAMA_MAX_REPETITION}",
                expr.span, "use `*` or `+`, or split the repetition into rules"))
            return replace(expr, min=0, max=None)
        return expr

    def atom(self, expr: ast.Expr) -> str:
        if isinstance(expr, ast.Literal):
            return '"' + "".join(_gbnf_char(ord(c), '"') for c in expr.value) + '"'
        if isinstance(expr, ast.CharClass):
            return self._char_class(expr)
        if isinstance(expr, ast.RuleRef):
            return self.names[expr.name]
        if isinstance(expr, ast.TokenSet):
            return f"{'!' if expr.exclude else ''}<[{expr.ids[0]}]>"
        raise TypeError(f"cannot write {type(expr).__name__} as GBNF")

    def _char_class(self, expr: ast.CharClass) -> str:
        ranges = scalar_ranges(expr.ranges)
        if ranges == ((0, MAX_CODEPOINT),) and not expr.negated or not ranges and expr.negated:
            return "."
        if not ranges:
            return f"[^\\x00-\\U{MAX_CODEPOINT:08X}]"
        parts = []
        for low, high in ranges:
            spelled = _gbnf_char(low, "]-[")
            if high != low:
                spelled += "-" + _gbnf_char(high, "]-[")
            parts.append(spelled)
        if parts[0].startswith("^") and not expr.negated:
            parts[0] = "\\x5E" + parts[0][1:]
        return f"[{'^' if expr.negated else ''}{''.join(parts)}]"

    def quantifier(self, repeat: ast.Repeat) -> str:
        low, high = repeat.min, repeat.max
        short = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
        if short:
            return short
        if high is None:
            return f"{{{low},}}"
        return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


# -- reading ---------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9_-]+")
_RULE_START = re.compile(r"^[ \t]*[A-Za-z0-9_-]+[ \t]*::=", re.MULTILINE)
_INTEGER = re.compile(r"[0-9]+")
_TOKEN_ID = re.compile(r"<\[([0-9]+)\]>")
_CHAR_ESCAPES = {"t": 0x09, "r": 0x0D, "n": 0x0A, "\\": 0x5C, '"': 0x22, "[": 0x5B, "]": 0x5D,
                 "-": 0x2D}
_HEX_WIDTHS = {"x": 2, "u": 4, "U": 8}
_RESERVED = frozenset({"true", "false"})


def dialect_name(name: str) -> str:
    """A GBNF rule name as a dialect name: ``.`` goes before ones the dialect can't spell."""
    return "." + name if name[:1].isdigit() or name in _RESERVED else name


def check_rules(rules: list[ast.Rule], root: str,
                unreadable: frozenset[str] = frozenset()) -> list[Diagnostic]:
    """Duplicate definitions, undefined references and a missing root, as diagnostics.

    Rules named in ``unreadable`` count as defined: their errors are already reported.
    """
    diagnostics: list[Diagnostic] = []
    defined: dict[str, ast.Rule] = {}
    for rule in rules:
        if rule.name in defined:
            diagnostics.append(error("GK104", f"rule `{rule.name}` is defined more than once",
                                     rule.name_span, "llama.cpp keeps only the last definition; "
                                     "merge them into one rule with `|`"))
        defined[rule.name] = rule
    for rule in rules:
        for name, span in ast.referenced_rules(rule.body):
            if name not in defined and name not in unreadable:
                diagnostics.append(error("GK103", f"rule `{name}` is not defined", span,
                                         f"define `{name} ::= ...`"))
    if root not in defined and root not in unreadable:
        diagnostics.append(error("GK105", f"the root rule `{root}` is not defined", None,
                                 f"define `{root} ::= ...`"))
    return diagnostics


@dataclass
class _Group:
    """A parenthesized group (or a rule body) being read."""

    start: int
    nested: bool
    branches: list[list[ast.Expr]] = field(default_factory=lambda: [[]])
    branch_starts: list[int] = field(default_factory=list)

    def build(self, end: int) -> ast.Expr:
        alternatives: list[ast.Expr] = []
        for start, items in zip(self.branch_starts, self.branches):
            if not items:
                alternatives.append(ast.Literal("", ast.Span(start, start)))
            elif len(items) == 1:
                alternatives.append(items[0])
            else:
                last = items[-1].span
                alternatives.append(ast.Sequence(tuple(items),
                                                 ast.Span(start, last.end if last else end)))
        if len(alternatives) == 1:
            return alternatives[0]
        return ast.Choice(tuple(alternatives), ast.Span(self.start, end))


class _Syntax(Exception):
    """Aborts reading the current rule; the diagnostic is already recorded."""


class _GbnfReader:
    """Reads GBNF as llama.cpp's ``llama_grammar_parser`` does, with an explicit group stack."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.diagnostics: list[Diagnostic] = []
        self.unreadable: frozenset[str] = frozenset()
        """Names of the rules whose definitions had errors."""

    def read(self) -> list[ast.Rule]:
        rules = []
        self._skip_space(newlines=True)
        while self.pos < len(self.text):
            name = _NAME.match(self.text, self.pos)
            try:
                rules.append(self._rule())
            except _Syntax:
                if name is not None:
                    self.unreadable |= {dialect_name(name.group())}
                found = _RULE_START.search(self.text, self.pos + 1)
                self.pos = found.start() if found else len(self.text)
            self._skip_space(newlines=True)
        return rules

    def _fail(self, message: str, span: ast.Span, hint: str, code: str = "GK141") -> _Syntax:
        self.diagnostics.append(error(code, message, span, hint))
        return _Syntax()

    def _here(self, length: int = 1) -> ast.Span:
        return ast.Span(self.pos, min(self.pos + length, len(self.text)))

    def _skip_space(self, newlines: bool) -> None:
        text = self.text
        while self.pos < len(text):
            c = text[self.pos]
            if c == "#":
                while self.pos < len(text) and text[self.pos] not in "\r\n":
                    self.pos += 1
            elif c in " \t" or newlines and c in "\r\n":
                self.pos += 1
            else:
                return

    def _rule(self) -> ast.Rule:
        start = self.pos
        name = _NAME.match(self.text, start)
        if name is None:
            raise self._fail("expected a rule name", self._here(),
                             "a rule starts with its name: letters, digits and `-`")
        self.pos = name.end()
        self._skip_space(newlines=False)
        if not self.text.startswith("::=", self.pos):
            raise self._fail("expected `::=` after the rule name", self._here(),
                             f"write `{name.group()} ::= ...`")
        self.pos += 3
        self._skip_space(newlines=True)
        body = self._body()
        if self.pos < len(self.text) and self.text[self.pos] not in "\r\n":
            raise self._fail(f"unexpected `{self.text[self.pos]}`", self._here(),
                             "a rule ends at the end of its line; continue it inside `( )` or "
                             "after a `|`")
        span = ast.Span(start, self.pos)
        return ast.Rule(dialect_name(name.group()), body, span=span,
                        name_span=ast.Span(start, name.end()))

    def _body(self) -> ast.Expr:
        text = self.text
        stack = [_Group(self.pos, nested=False, branch_starts=[self.pos])]
        while True:
            group = stack[-1]
            start = self.pos
            c = text[start] if start < len(text) else ""
            item: ast.Expr
            if c == '"':
                item = self._literal()
            elif c == "[":
                item = self._class()
            elif c and c in "<!":
                item = self._token()
            elif c and _NAME.match(c):
                found = _NAME.match(text, start)
                assert found is not None
                self.pos = found.end()
                item = ast.RuleRef(dialect_name(found.group()), ast.Span(start, self.pos))
            elif c == ".":
                self.pos += 1
                item = ast.CharClass(((0, MAX_CODEPOINT),), span=ast.Span(start, self.pos))
            elif c == "(":
                if len(stack) > MAX_NESTING:
                    raise self._fail(f"groups are nested more than {MAX_NESTING} levels deep",
                                     self._here(), "move inner groups into rules of their own")
                self.pos += 1
                self._skip_space(newlines=True)
                stack.append(_Group(start, nested=True, branch_starts=[self.pos]))
                continue
            elif c and c in "*+?":
                self.pos += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
                self._repeat(group, low, high, c, start)
                self._skip_space(group.nested)
                continue
            elif c == "{":
                low, high = self._braces(group.nested)
                self._repeat(group, low, high, "{}", start)
                continue
            elif c == "|":
                self.pos += 1
                self._skip_space(newlines=True)
                group.branches.append([])
                group.branch_starts.append(self.pos)
                continue
            elif c == ")" and group.nested:
                stack.pop()
                self.pos += 1
                item = replace(group.build(start), span=ast.Span(group.start, self.pos))
                group = stack[-1]
            elif group.nested:
                raise self._fail("expected `)`", self._here(),
                                 f"close the group opened at offset {group.start}")
            else:
                return group.build(self.pos)
            group.branches[-1].append(item)
            self._skip_space(group.nested)

    def _repeat(self, group: _Group, low: int, high: int | None, op: str, start: int) -> None:
        items = group.branches[-1]
        if not items:
            raise self._fail("nothing to repeat", ast.Span(start, self.pos),
                             "put the repetition after a literal, class, rule or group")
        item = items.pop()
        item_start = item.span.start if item.span else start
        items.append(ast.Repeat(item, low, high, op, ast.Span(item_start, self.pos)))

    def _braces(self, nested: bool) -> tuple[int, int | None]:
        """``{m}``, ``{m,}`` or ``{m,n}`` (spaces allowed), as llama.cpp reads them."""
        start = self.pos
        self.pos += 1
        self._skip_space(nested)
        low = self._integer()
        self._skip_space(nested)
        high: int | None = low
        if self.text.startswith(",", self.pos):
            self.pos += 1
            self._skip_space(nested)
            high = self._integer() if _INTEGER.match(self.text, self.pos) else None
            self._skip_space(nested)
        if not self.text.startswith("}", self.pos):
            raise self._fail("expected `}`", self._here(), "write `{m}`, `{m,}` or `{m,n}`")
        self.pos += 1
        span = ast.Span(start, self.pos)
        self._skip_space(nested)
        if max(low, high or 0) > LLAMA_MAX_REPETITION:
            raise self._fail(
                f"llama.cpp rejects repetition counts above {LLAMA_MAX_REPETITION}", span,
                "llama.cpp makes an upper bound above 2000 unbounded; write `{m,}` if that is "
                "meant", code="GK142")
        if high is not None and high < low:
            raise self._fail(f"repetition bounds are reversed: {low} > {high}", span,
                             f"write `{{{high},{low}}}`")
        return low, high

    def _integer(self) -> int:
        found = _INTEGER.match(self.text, self.pos)
        if found is None:
            raise self._fail("expected an integer", self._here(), "write `{m}`, `{m,}` or `{m,n}`")
        self.pos = found.end()
        digits = found.group().lstrip("0") or "0"
        return int(digits) if len(digits) <= 9 else 10**9  # far above any limit either way

    def _char(self, in_literal: bool) -> int:
        """One character of a literal or class (an escape or a raw character) at ``pos``.

        Surrogates can bound a class's range, but can't be matched in a literal.
        """
        text, start = self.text, self.pos
        if start >= len(text):
            raise self._fail("unexpected end of input", self._here(), "close the literal or class")
        c = text[start]
        if c != "\\":
            self.pos += 1
            if in_literal and 0xD800 <= ord(c) <= 0xDFFF:
                raise self._fail("a lone surrogate can't occur in UTF-8 text",
                                 ast.Span(start, self.pos), "write the character itself")
            return ord(c)
        escaped = text[start + 1 : start + 2]
        if escaped in _CHAR_ESCAPES:
            self.pos += 2
            return _CHAR_ESCAPES[escaped]
        width = _HEX_WIDTHS.get(escaped)
        if width is None:
            raise self._fail(f"unknown escape `\\{escaped}`", ast.Span(start, start + 2),
                             "GBNF escapes are \\x \\u \\U \\t \\r \\n \\\\ \\\" \\[ \\] \\-")
        digits = text[start + 2 : start + 2 + width]
        if not re.fullmatch(f"[0-9a-fA-F]{{{width}}}", digits):
            raise self._fail(f"`\\{escaped}` needs exactly {width} hex digits",
                             ast.Span(start, start + 2), "e.g. `\\x41` or `\\u00e9`")
        self.pos = start + 2 + width
        value = int(digits, 16)
        if value > MAX_CODEPOINT or in_literal and 0xD800 <= value <= 0xDFFF:
            raise self._fail(f"`{text[start:self.pos]}` is not a Unicode scalar value",
                             ast.Span(start, self.pos), "check the hex digits")
        return value

    def _literal(self) -> ast.Literal:
        start = self.pos
        self.pos += 1
        chars = []
        while not self.text.startswith('"', self.pos):
            if self.pos >= len(self.text):
                raise self._fail("this literal is never closed", ast.Span(start, start + 1),
                                 'end it with `"`')
            chars.append(chr(self._char(in_literal=True)))
        self.pos += 1
        return ast.Literal("".join(chars), ast.Span(start, self.pos))

    def _class(self) -> ast.CharClass:
        text, start = self.text, self.pos
        self.pos += 1
        negated = text.startswith("^", self.pos)
        self.pos += negated
        ranges = []
        while not text.startswith("]", self.pos):
            if self.pos >= len(text):
                raise self._fail("this class is never closed", ast.Span(start, start + 1),
                                 "end it with `]`")
            item_start = self.pos
            low = high = self._char(in_literal=False)
            if text.startswith("-", self.pos) and text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = self._char(in_literal=False)
                if high < low:
                    raise self._fail("character range is reversed",
                                     ast.Span(item_start, self.pos),
                                     "put the lower character first")
            ranges.append((low, high))
        self.pos += 1
        span = ast.Span(start, self.pos)
        if not ranges:
            raise self._fail("empty character class", span,
                             "llama.cpp reads `[]` and `[^]` as the empty string; write `\"\"` "
                             "or `.` for what you mean")
        return ast.CharClass(merge(ranges), negated, span)

    def _token(self) -> ast.TokenSet:
        start = self.pos
        exclude = self.text.startswith("!", start)
        found = _TOKEN_ID.match(self.text, start + exclude)
        if found is None:
            raise self._fail("expected a token id like `<[42]>`", self._here(2),
                             "tokens given by their text need the model's vocabulary; write "
                             "the id as `<[id]>`")
        self.pos = found.end()
        digits = found.group(1).lstrip("0") or "0"
        if len(digits) > 10 or int(digits) >= 2**32:
            raise self._fail("token id is too large", ast.Span(start, self.pos),
                             "llama.cpp token ids are 32-bit")
        return ast.TokenSet((int(digits),), exclude, ast.Span(start, self.pos))

