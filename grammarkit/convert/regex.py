r"""Regular expressions to grammar AST: whole-string match, every error located in the pattern.

Two flavors:

``"ecma"``
    JavaScript syntax with the semantics of xgrammar's ``Grammar.from_regex``: ``.`` matches any
    code point (newline included), ``\d`` and ``\w`` are ASCII, ``\s`` is
    ``[\t\n\v\f\r \xa0]``, ``\a`` and ``\e`` are BEL and ESC, other escaped letters stand for
    themselves (``\q`` is ``q``).
``"python"``
    Python ``re`` syntax with the semantics of ``re.fullmatch(pattern, text, re.ASCII)``:
    ``.`` does not match ``\n``, ``\s`` is ``[\t\n\v\f\r ]``; ``(?P<name>...)``, ``(?#...)``,
    ``\A``, ``\Z``, ``\N{...}``, octal escapes and ``{,n}`` are understood.
``"xgrammar"``
    What xgrammar 0.2.8 accepts inside the EBNF macro ``Regex("...")``: ``"ecma"``, plus
    ``(?P<name>...)`` (any non-empty name); a lookahead ``(?=...)``/``(?!...)`` is ignored, as
    xgrammar ignores it; a quantifier after a quantifier applies to it (``a+*`` is ``(a+)*``);
    a lone ``]`` and the empty classes ``[]`` and ``[^]`` are errors. The inline flag ``(?i)``
    at the very start is read by :mod:`grammarkit.automata.regex_macro`.

A surrogate pair ``\uD83D\uDE00`` names one code point; a lone surrogate can't occur in UTF-8
text and is an error. ``^`` and ``$`` are accepted where they can only match at the ends of the
string. Lazy quantifiers (``*?``) match the same strings as greedy ones.

Diagnostics: GK130 for constructs a grammar can't express (lookaround, backreferences, word
boundaries, inline flags, Unicode property classes, anchors away from the ends), GK131 for
malformed patterns, GK132 for patterns beyond the dialect's limits.
"""

from __future__ import annotations

import enum
import itertools
import re
import unicodedata
from dataclasses import dataclass, field, replace

from grammarkit.codepoints import MAX_CODEPOINT, Ranges, complement, merge
from grammarkit.diagnostics import MAX_DIAGNOSTICS, Diagnostic, GrammarError, Severity, error
from grammarkit.ebnf import ast
from grammarkit.source import SourceText

FLAVORS = ("ecma", "python", "xgrammar")
"""The regular-expression syntaxes understood."""

MAX_NESTING = 1000
"""Groups nested deeper than this are an error, as in the EBNF parser (its ``MAX_NESTING``;
not imported from it, so converting a JSON Schema never loads the EBNF parser)."""

MAX_INTEGER = 10**15
"""The largest repetition count, as in the EBNF lexer (its ``MAX_INTEGER``)."""


"""Inclusive code-point ranges."""

DIGIT: Ranges = ((0x30, 0x39),)
WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
SPACE: dict[str, Ranges] = {
    "ecma": ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0)),
    "python": ((0x09, 0x0D), (0x20, 0x20)),
    "xgrammar": ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0)),
}
"""``\\s`` per flavor: xgrammar's set for ``ecma``, ``re.ASCII``'s for ``python``."""

_CONTROL_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "a": 0x07}
_ESCAPE_E = 0x1B
_HEX = frozenset("0123456789abcdefABCDEF")
_OCTAL = frozenset("01234567")
_FLAG_LETTERS = {
    "ecma": frozenset("dgimsuvy"),
    "python": frozenset("aiLmsux"),
    "xgrammar": frozenset(),
}
_QUANTIFIERS: dict[str, tuple[int, int | None]] = {"*": (0, None), "+": (1, None), "?": (0, 1)}

_PLAIN_RUN = re.compile(r"[^\\^$.|?*+()\[{\ud800-\udfff]+")
"""Characters that stand for themselves (a lone ``]`` or ``}`` does)."""
_XGRAMMAR_PLAIN_RUN = re.compile(r"[^\\^$.|?*+()\[\]{\ud800-\udfff]+")
"""In the ``xgrammar`` flavor a lone ``]`` is an error."""
_BRACES = re.compile(r"\{(\d*)(,?)(\d*)\}", re.ASCII)
_LOW_SURROGATE = re.compile(r"\\u(d[c-f][0-9a-f]{2})", re.IGNORECASE)
_BRACED_HEX = re.compile(r"\\u\{([0-9a-fA-F]{1,8})\}")
_CHAR_NAME = re.compile(r"\\N\{([^{}]{1,128})\}")
_PROPERTY = re.compile(r"\\[pP](\{[^{}]{0,128}\})?")
_NAMED_BACKREFERENCE = {"ecma": re.compile(r"\\k(<[^>]{0,128}>)?"),
                        "python": re.compile(r"\(\?P=[^)]{0,128}\)?")}

_HINT_LOOKAROUND = (
    "a grammar can't look ahead or behind; match the text itself, or check it after generation"
)
_HINT_BACKREFERENCE = (
    "a grammar can't require a repeat of earlier text; spell out the alternatives instead"
)
_HINT_WORD_BOUNDARY = (
    "a grammar has no word boundaries; match the separating characters (e.g. `[ ,.]`) instead"
)
_HINT_FLAGS = "flags can't be switched inside a grammar; write both cases, e.g. `[aA]`, instead"
_HINT_PROPERTY = "list the characters instead, e.g. `[a-zA-Z\\u00c0-\\u024f]` for Latin letters"
_HINT_ANCHOR = "the whole string is matched, so `^` and `$` belong only at its start and end"
_HINT_OCTAL = "legacy octal escapes aren't supported; write `\\x` and two hex digits, e.g. `\\x01`"


def regex_to_ast(pattern: str, flavor: str = "ecma") -> ast.Expr:
    """The grammar expression matching exactly the strings ``pattern`` matches in full.

    Parameters
    ----------
    pattern
        The regular expression.
    flavor
        ``"ecma"`` (JavaScript, as xgrammar's ``from_regex``) or ``"python"`` (``re``).

    Raises
    ------
    GrammarError
        With every problem found, each spanning the offending part of the pattern.
    ValueError
        If ``flavor`` is unknown.
    """
    if flavor not in FLAVORS:
        raise ValueError(f"unknown regex flavor {flavor!r}; expected one of {FLAVORS}")
    parser = _Parser(pattern, flavor)
    expr = parser.parse()
    if parser.diagnostics:
        source = SourceText(pattern, "<regex>")
        ordered = sorted(parser.diagnostics, key=lambda d: d.span.start if d.span else len(pattern))
        raise GrammarError([d.with_source(source) for d in ordered])
    return expr


def ignored_lookaheads(pattern: str) -> list[ast.Span]:
    """Where a ``Regex("...")`` pattern has a lookahead, which xgrammar 0.2.8 (and so the
    ``xgrammar`` flavor) ignores: each ``(?=...)``/``(?!...)`` as a span of the pattern."""
    parser = _Parser(pattern, "xgrammar")
    parser.parse()
    return parser.ignored


def regex_to_grammar(pattern: str, flavor: str = "ecma") -> ast.GrammarAST:
    """A grammar whose rule ``root`` matches exactly what ``pattern`` matches in full.

    See :func:`regex_to_ast` for the parameters and errors.
    """
    return ast.GrammarAST((ast.Rule("root", regex_to_ast(pattern, flavor)),))


@dataclass(frozen=True)
class _Unsupported:
    """Why a group can't be expressed; the group is parsed (to recover), then dropped."""

    message: str
    hint: str


class _Last(enum.Enum):
    """What came just before the current position in a branch, for quantifier checks."""

    NOTHING = enum.auto()
    ATOM = enum.auto()
    QUANTIFIED = enum.auto()
    ANCHOR = enum.auto()


@dataclass
class _Branch:
    """One alternative of a group, being built."""

    start: int
    items: list[ast.Expr] = field(default_factory=list)
    end_anchor: ast.Span | None = None
    """A ``$`` after which nothing may follow (cleared once reported)."""


@dataclass
class _Group:
    """A group being parsed (the whole pattern is the outermost one)."""

    start: int
    """Offset of the ``(``, or 0 for the whole pattern."""
    body_start: int
    at_start: bool
    """No text can precede the group in a match, so ``^`` is allowed at its beginning."""
    unsupported: _Unsupported | None = None
    ignored: bool = False
    """A lookahead in the ``xgrammar`` flavor: parsed, then dropped."""
    branches: list[_Branch] = field(default_factory=list)
    has_anchor: bool = False
    last: _Last = _Last.NOTHING
    last_has_anchor: bool = False

    def __post_init__(self) -> None:
        self.branches.append(_Branch(self.body_start))

    @property
    def branch(self) -> _Branch:
        return self.branches[-1]


class _Parser:
    """A one-pass parser; groups live on an explicit stack, so nesting never recurses."""

    def __init__(self, text: str, flavor: str):
        self.text = text
        self.flavor = flavor
        self.python = flavor == "python"
        self.xgrammar = flavor == "xgrammar"
        self.plain_run = _XGRAMMAR_PLAIN_RUN if self.xgrammar else _PLAIN_RUN
        self.pos = 0
        self.halted = False
        self.diagnostics: list[Diagnostic] = []
        self.stack = [_Group(0, 0, at_start=True)]
        self.ignored: list[ast.Span] = []
        """The lookaheads parsed and dropped (``xgrammar`` flavor)."""

    @property
    def group(self) -> _Group:
        return self.stack[-1]

    def _span(self, start: int, length: int) -> ast.Span:
        return ast.Span(start, min(start + length, len(self.text)))

    def _error(self, code: str, message: str, span: ast.Span, hint: str) -> None:
        self.diagnostics.append(error(code, message, span, hint))
        if len(self.diagnostics) == MAX_DIAGNOSTICS:
            self.diagnostics.append(Diagnostic(
                "GK100", Severity.NOTE, f"the pattern was read no further than offset {self.pos}",
                None, "fix the errors above first; later ones are often consequences"))
            self.halted = True

    # -- driver ------------------------------------------------------------------------------
    def parse(self) -> ast.Expr:
        text = self.text
        while self.pos < len(text) and not self.halted:
            start = self.pos
            c = text[start]
            if c == "(":
                self._open_group()
            elif c == ")":
                self._close_group()
            elif c == "|":
                self.pos += 1
                self.group.branches.append(_Branch(self.pos))
                self.group.last = _Last.NOTHING
            elif c in _QUANTIFIERS:
                self.pos += 1
                self._quantifier(start, *_QUANTIFIERS[c], op=c)
            elif c == "{":
                self._braces()
            elif c == "[":
                self._class()
            elif c == "]" and self.xgrammar:
                self.pos += 1
                self._error("GK131", "this `]` closes no character class",
                            self._span(start, 1), "escape a literal bracket as `\\]`")
            elif c == "\\":
                self._escape()
            elif c == "^":
                self.pos += 1
                self._start_anchor(start)
            elif c == "$":
                self.pos += 1
                self._end_anchor(start)
            elif c == ".":
                self.pos += 1
                dot = _char_class(complement(((0x0A, 0x0A),)) if self.python
                                  else ((0, MAX_CODEPOINT),))
                self._atom(replace(dot, span=ast.Span(start, self.pos)))
            else:
                self._literal_run()
        if not self.halted:
            for group in self.stack[1:]:
                self._error("GK131", "this group is never closed", self._span(group.start, 1),
                            "add the missing `)`, or escape a literal one as `\\(`")
        return self._build(self.stack[0], len(text))

    # -- atoms -------------------------------------------------------------------------------
    def _atom(self, node: ast.Expr, has_anchor: bool = False) -> None:
        """Append ``node`` to the current branch."""
        group = self.group
        branch = group.branch
        if branch.end_anchor is not None:
            self._error("GK130", "`$` is followed by more of the pattern", branch.end_anchor,
                        _HINT_ANCHOR)
            branch.end_anchor = None
        branch.items.append(node)
        group.last = _Last.ATOM
        group.last_has_anchor = has_anchor

    def _placeholder(self, span: ast.Span) -> None:
        """Stand in for a construct already reported, so that no error cascades from it."""
        self._atom(ast.Literal("", span))

    def _literal_run(self) -> None:
        """Ordinary characters at ``pos`` as one literal; a quantifier after them takes the last
        character alone."""
        text, start = self.text, self.pos
        match = self.plain_run.match(text, start)
        if match is None:  # a lone surrogate
            self.pos += 1
            self._literal(ord(text[start]), start)
            return
        end = match.end()
        if end - start > 1 and text[end : end + 1] in ("*", "+", "?", "{"):
            end -= 1
        self.pos = end
        self._atom(ast.Literal(text[start:end], ast.Span(start, end)))

    def _literal(self, cp: int, start: int) -> None:
        """The code point ``cp``, spelled from ``start`` to ``pos``."""
        span = ast.Span(start, self.pos)
        if 0xD800 <= cp <= 0xDFFF:
            self._surrogate_error(span)
            self._placeholder(span)
        else:
            self._atom(ast.Literal(chr(cp), span))

    def _surrogate_error(self, span: ast.Span) -> None:
        example = "\\U0001F600" if self.python else "\\u{1F600}"
        self._error("GK131", "a lone UTF-16 surrogate can't occur in UTF-8 text", span,
                    f"name the character itself, e.g. `{example}`")

    # -- anchors -----------------------------------------------------------------------------
    def _start_anchor(self, start: int) -> None:
        group = self.group
        if not group.at_start or not all(_is_empty(item) for item in group.branch.items):
            self._error("GK130", "`^` can only match at the start of the string here",
                        ast.Span(start, self.pos), _HINT_ANCHOR)
        self._note_anchor()

    def _end_anchor(self, start: int) -> None:
        branch = self.group.branch
        if branch.end_anchor is None:
            branch.end_anchor = ast.Span(start, self.pos)
        self._note_anchor()

    def _note_anchor(self) -> None:
        self.group.has_anchor = True
        self.group.last = _Last.ANCHOR

    # -- groups ------------------------------------------------------------------------------
    def _open_group(self) -> None:
        start = self.pos
        if len(self.stack) > MAX_NESTING:
            self._error("GK132", f"groups are nested more than {MAX_NESTING} levels deep",
                        self._span(start, 1), "flatten the pattern")
            self.halted = True
            return
        ignored = self.xgrammar and self.text[start : start + 3] in ("(?=", "(?!")
        opens, unsupported = self._group_opening()
        if not opens:
            return
        parent = self.group
        at_start = parent.at_start and all(_is_empty(item) for item in parent.branch.items)
        group = _Group(start, self.pos, at_start, None if ignored else unsupported, ignored)
        self.stack.append(group)

    def _group_opening(self) -> tuple[bool, _Unsupported | None]:
        """Consume a group's opening: whether a group opens, and why it can't be expressed.

        No group opens for a comment, an inline flag, or an unrecoverable error.
        """
        text, start = self.text, self.pos
        if not text.startswith("(?", start):
            self.pos += 1
            return True, None
        after = text[start + 2 : start + 4]
        if after[:1] == ":":
            self.pos += 3
            return True, None
        if after[:1] in ("=", "!"):
            self.pos += 3
            return True, _Unsupported("lookahead assertions can't be expressed", _HINT_LOOKAROUND)
        if after in ("<=", "<!"):
            self.pos += 4
            return True, _Unsupported("lookbehind assertions can't be expressed",
                                      _HINT_LOOKAROUND)
        if self.python:
            return self._python_group_opening(start, after)
        if self.xgrammar and after == "P<":
            return self._named_group(start, start + 4)
        if after[:1] == "<":
            return self._named_group(start, start + 3)
        return self._flag_group(start)

    def _python_group_opening(self, start: int, after: str) -> tuple[bool, _Unsupported | None]:
        text = self.text
        if after == "P<":
            return self._named_group(start, start + 4)
        if after == "P=":
            self._backreference(_NAMED_BACKREFERENCE["python"].match(text, start))
            return False, None
        if after[:1] == "#":
            end = text.find(")", start)
            if end < 0:
                self._error("GK131", "this comment is never closed", self._span(start, 3),
                            "end the comment with `)`")
                self.halted = True
            self.pos = len(text) if end < 0 else end + 1
            return False, None
        if after[:1] == ">":
            self.pos += 3
            return True, _Unsupported("atomic groups can't be expressed",
                                      "write a plain group `(?:...)`; note that it may match "
                                      "more strings")
        if after[:1] == "(":
            end = text.find(")", start + 3)
            self.pos = len(text) if end < 0 else end + 1
            return True, _Unsupported("conditional groups can't be expressed",
                                      "write the alternatives out with `|`")
        return self._flag_group(start)

    def _named_group(self, start: int, name_start: int) -> tuple[bool, _Unsupported | None]:
        text = self.text
        end = text.find(">", name_start)
        if end < 0:
            self._error("GK131", "the group name is never closed with `>`",
                        ast.Span(start, len(text)), "write `(?<name>...)`" if not self.python
                        else "write `(?P<name>...)`")
            self.halted = True
            return False, None
        name = text[name_start:end]
        if not (name if self.xgrammar else name.isidentifier()):
            self._error("GK131", f"invalid group name {name!r}", ast.Span(start, end + 1),
                        "a group name is letters, digits and `_`, not starting with a digit")
        self.pos = end + 1
        return True, None

    def _flag_group(self, start: int) -> tuple[bool, _Unsupported | None]:
        """``(?i)`` or ``(?i:...)``; anything else after ``(?`` is malformed."""
        text, flags = self.text, _FLAG_LETTERS[self.flavor]
        i = start + 2
        while i < len(text) and (text[i] in flags or text[i] == "-"):
            i += 1
        if i > start + 2 and text[i : i + 1] == ":":
            self.pos = i + 1
            return True, _Unsupported("inline flags can't be expressed", _HINT_FLAGS)
        if i > start + 2 and text[i : i + 1] == ")":
            self.pos = i + 1
            self._error("GK130", "inline flags can't be expressed", ast.Span(start, self.pos),
                        _HINT_FLAGS)
            return False, None
        named = "(?P<name>...)" if self.python else "(?<name>...)"
        hint = (f"`(?:...)` is a group, `{named}` a named group; escape a literal parenthesis "
                "as `\\(`")
        if not self.python and text.startswith("(?P<", start):
            hint = ("`(?P<name>...)` is Python's named group: write `(?<name>...)`, or read the "
                    "pattern as Python's (flavor=\"python\"; on the command line `grammarkit "
                    "convert regex --flavor python`)")
        self._error("GK131", "unknown group syntax", self._span(start, 3), hint)
        self.pos = start + 2
        return True, None

    def _close_group(self) -> None:
        if len(self.stack) == 1:
            self._error("GK131", "this `)` closes no group", self._span(self.pos, 1),
                        "remove it, or escape a literal parenthesis as `\\)`")
            self.pos += 1
            return
        group = self.stack.pop()
        node = self._build(group, self.pos)
        self.pos += 1
        span = ast.Span(group.start, self.pos)
        if group.ignored:
            self.ignored.append(span)
            return
        if group.unsupported is not None:
            self._error("GK130", group.unsupported.message, span, group.unsupported.hint)
            self._placeholder(span)
            return
        self._atom(replace(node, span=span), has_anchor=group.has_anchor)
        parent = self.group
        parent.has_anchor |= group.has_anchor
        end_anchor = next((b.end_anchor for b in group.branches if b.end_anchor), None)
        if end_anchor is not None:
            parent.branch.end_anchor = end_anchor

    def _build(self, group: _Group, end: int) -> ast.Expr:
        ends = [branch.start - 1 for branch in group.branches[1:]] + [end]
        alternatives = tuple(
            _sequence(branch.items, ast.Span(branch.start, branch_end))
            for branch, branch_end in zip(group.branches, ends)
        )
        if len(alternatives) == 1:
            return alternatives[0]
        return ast.Choice(alternatives, ast.Span(group.body_start, end))

    # -- quantifiers -------------------------------------------------------------------------
    def _braces(self) -> None:
        """``{n}``, ``{n,}``, ``{n,m}`` (and ``{,m}`` in Python); else an error or a literal."""
        start = self.pos
        match = _BRACES.match(self.text, start)
        low_text, comma, high_text = match.groups() if match else ("", "", "")
        if match is None or not low_text and not (self.python and comma):
            if self.python:
                self.pos += 1
                self._literal(ord("{"), start)
            elif match is not None and high_text:
                self._error("GK131", "a repetition needs a lower bound",
                            ast.Span(start, match.end()), f"write `{{0,{high_text}}}`")
                self.pos = match.end()
            else:
                self._error("GK131", "`{` doesn't start a repetition `{n}`, `{n,}` or `{n,m}`",
                            self._span(start, 1), "escape a literal brace as `\\{`")
                self.pos += 1
            return
        self.pos = match.end()
        span = ast.Span(start, self.pos)
        if any(len(t.lstrip("0")) > len(str(MAX_INTEGER)) or int(t) > MAX_INTEGER
               for t in (low_text, high_text) if t):
            self._error("GK132", f"repetition count is too large (more than {MAX_INTEGER:.0e})",
                        span, "use `*` or `+` for an unbounded repetition")
            return
        low = int(low_text or "0")
        high = None if comma and not high_text else int(high_text or low_text)
        if high is not None and high < low:
            self._error("GK131", f"repetition bounds are reversed: {low} > {high}", span,
                        f"write `{{{high},{low}}}`")
            high = low
        self._quantifier(start, low, high, op="{}")

    def _quantifier(self, start: int, low: int, high: int | None, op: str) -> None:
        """Apply the quantifier spelled from ``start`` to ``pos`` (plus a lazy/possessive mark)."""
        text = self.text
        if text.startswith("?", self.pos):
            self.pos += 1  # lazy: the same strings match in full
        elif self.python and text.startswith("+", self.pos):
            self.pos += 1
            self._error("GK130", "possessive quantifiers can't be expressed",
                        ast.Span(start, self.pos),
                        "drop the trailing `+`; note that the pattern may then match more")
        span = ast.Span(start, self.pos)
        group = self.group
        if group.last is _Last.QUANTIFIED and self.xgrammar:
            group.last = _Last.ATOM  # xgrammar repeats the quantified item: `a+*` is `(a+)*`
        if group.last is _Last.QUANTIFIED:
            self._error("GK131", "two quantifiers in a row", span,
                        "wrap the repeated part in a group first, e.g. `(?:a+)*`")
            return
        if group.last is not _Last.ATOM:
            what = "an anchor" if group.last is _Last.ANCHOR else "nothing"
            self._error("GK131", f"this quantifier repeats {what}", span,
                        "put it after a character, class or group, or escape it with `\\`")
            return
        item = group.branch.items.pop()
        if group.last_has_anchor and high != 1:
            self._error("GK130", "an anchor inside a repeated group", span, _HINT_ANCHOR)
        item_start = item.span.start if item.span else start
        group.branch.items.append(ast.Repeat(item, low, high, op, ast.Span(item_start, self.pos)))
        group.last = _Last.QUANTIFIED

    # -- escapes -----------------------------------------------------------------------------
    def _escape(self) -> None:
        text, start = self.text, self.pos
        if start + 1 >= len(text):
            self._error("GK131", "the pattern ends with a lone backslash", self._span(start, 1),
                        "write `\\\\` for a backslash")
            self.pos += 1
            return
        c = text[start + 1]
        ranges = self._class_escape(c)
        if ranges is not None:
            self.pos += 2
            self._atom(replace(_char_class(ranges), span=ast.Span(start, self.pos)))
        elif c in "bB":
            self.pos += 2
            self._error("GK130", "word boundaries can't be expressed", ast.Span(start, self.pos),
                        _HINT_WORD_BOUNDARY)
        elif self.python and c in "AZ":
            self.pos += 2
            (self._start_anchor if c == "A" else self._end_anchor)(start)
        elif c in "pP":
            self._placeholder(self._property_escape())
        elif c == "k" and not self.python:
            self._backreference(_NAMED_BACKREFERENCE["ecma"].match(text, start))
        elif c in "123456789" and not self._is_python_octal(start):
            end = start + 2
            if self.python and text[end : end + 1].isdigit():
                end += 1
            self.pos = end
            self._error("GK130", "backreferences can't be expressed", ast.Span(start, end),
                        _HINT_BACKREFERENCE)
            self._placeholder(ast.Span(start, end))
        else:
            cp = self._char_escape(in_class=False)
            if cp is not None:
                self._literal(cp, start)

    def _backreference(self, match: re.Match[str] | None) -> None:
        assert match is not None  # both patterns match their two-character prefix
        self.pos = match.end()
        span = ast.Span(match.start(), match.end())
        self._error("GK130", "backreferences can't be expressed", span, _HINT_BACKREFERENCE)
        self._placeholder(span)

    def _property_escape(self) -> ast.Span:
        match = _PROPERTY.match(self.text, self.pos)
        assert match is not None  # called at `\p` or `\P`
        self.pos = match.end()
        span = ast.Span(match.start(), match.end())
        self._error("GK130", "Unicode property classes can't be expressed", span, _HINT_PROPERTY)
        return span

    def _is_python_octal(self, start: int) -> bool:
        digits = self.text[start + 1 : start + 4]
        return self.python and len(digits) == 3 and all(d in _OCTAL for d in digits)

    def _class_escape(self, c: str) -> Ranges | None:
        """The set named by ``\\d \\D \\w \\W \\s \\S``, else ``None``."""
        ranges = {"d": DIGIT, "w": WORD, "s": SPACE[self.flavor]}.get(c.lower())
        if ranges is None:
            return None
        return complement(ranges) if c.isupper() else ranges

    def _char_escape(self, in_class: bool) -> int | None:
        """Consume the escape at ``pos`` naming one code point; ``None`` (reported) if invalid."""
        text, start = self.text, self.pos
        c = text[start + 1]
        self.pos += 2
        if c in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[c]
        if c == "e" and not self.python:
            return _ESCAPE_E
        if c == "b" and in_class:
            return 0x08
        if c == "x":
            return self._hex_escape(start, 2)
        if c == "u" and not self.python and text.startswith("{", start + 2):
            return self._braced_escape(start)
        if c == "u" or c == "U" and self.python:
            return self._hex_escape(start, 4 if c == "u" else 8)
        if c == "N" and self.python:
            return self._named_escape(start)
        if c == "c" and not self.python:
            letter = text[start + 2 : start + 3]
            if letter.isascii() and letter.isalpha():
                self.pos += 1
                return ord(letter) % 32
            self._error("GK131", "`\\c` must be followed by a letter", self._span(start, 2),
                        "`\\cJ` is a line feed; write `\\\\c` for a backslash and a `c`")
            return None
        if c.isdigit() and c.isascii():
            return self._digit_escape(start, in_class)
        if self.python and c.isascii() and c.isalnum():
            self._error("GK131", f"unknown escape `\\{c}`", self._span(start, 2),
                        f"write `{c}` for the letter itself")
            return None
        return ord(c)

    def _digit_escape(self, start: int, in_class: bool) -> int | None:
        """``\\0``, and in Python octal escapes; backreferences are handled before."""
        text = self.text
        if not self.python:
            if text[start + 1] == "0" and not text[start + 2 : start + 3].isdigit():
                return 0
            length = 3 if text[start + 1] == "0" else 2
            message = "ambiguous escape" if length == 3 else "a backreference inside a class"
            self._error("GK131", f"{message} `{text[start:start + length]}`",
                        self._span(start, length), _HINT_OCTAL)
            return None
        end = start + 1
        while end < start + 4 and text[end : end + 1] in _OCTAL and text[end : end + 1]:
            end += 1
        if end == start + 1:
            self._error("GK131", f"unknown escape `\\{text[start + 1]}`", self._span(start, 2),
                        "octal escapes use the digits 0-7")
            return None
        self.pos = end
        value = int(text[start + 1 : end], 8)
        if value > 0o377:
            self._error("GK131", f"octal escape `{text[start:end]}` is above `\\377`",
                        ast.Span(start, end), "write `\\x` or `\\u` with hex digits")
            return None
        return value

    def _hex_escape(self, start: int, width: int) -> int | None:
        text = self.text
        digits = text[start + 2 : start + 2 + width]
        if len(digits) != width or not all(d in _HEX for d in digits):
            found = len(list(itertools.takewhile(_HEX.__contains__, digits)))
            self._error("GK131", f"`\\{text[start + 1]}` needs exactly {width} hex digits",
                        self._span(start, 2 + found), "e.g. `\\x41` or `\\u0041` for `A`")
            return None
        self.pos = start + 2 + width
        value = int(digits, 16)
        if not self.python and width == 4 and 0xD800 <= value <= 0xDBFF:
            low = _LOW_SURROGATE.match(text, self.pos)
            if low is not None:
                self.pos = low.end()
                return 0x10000 + ((value - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
        return self._checked_codepoint(value, ast.Span(start, self.pos))

    def _braced_escape(self, start: int) -> int | None:
        match = _BRACED_HEX.match(self.text, start)
        if match is None:
            self._error("GK131", "invalid `\\u{...}` escape", self._span(start, 3),
                        "write hex digits between the braces, e.g. `\\u{1F600}`")
            return None
        self.pos = match.end()
        return self._checked_codepoint(int(match.group(1), 16), ast.Span(start, self.pos))

    def _named_escape(self, start: int) -> int | None:
        match = _CHAR_NAME.match(self.text, start)
        if match is None:
            self._error("GK131", "`\\N` needs a character name in braces", self._span(start, 2),
                        "e.g. `\\N{EM DASH}`")
            return None
        self.pos = match.end()
        try:
            return ord(unicodedata.lookup(match.group(1)))
        except KeyError:
            self._error("GK131", f"unknown character name {match.group(1)!r}",
                        ast.Span(start, self.pos), "check the name in the Unicode tables")
            return None

    def _checked_codepoint(self, value: int, span: ast.Span) -> int | None:
        if value > MAX_CODEPOINT:
            self._error("GK131", f"U+{value:X} is beyond the last code point U+10FFFF", span,
                        "check the number of hex digits")
            return None
        if 0xD800 <= value <= 0xDFFF:
            self._surrogate_error(span)
            return None
        return value

    # -- character classes -------------------------------------------------------------------
    def _class(self) -> None:
        text, start = self.text, self.pos
        self.pos += 1
        negated = text.startswith("^", self.pos)
        self.pos += negated
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.pos >= len(text):
                self._error("GK131", "this character class is never closed",
                            ast.Span(start, len(text)),
                            "add the missing `]`, or escape a literal bracket as `\\[`")
                self.halted = True
                return
            if text[self.pos] == "]" and not (first and self.python):
                break
            first = False
            item_start = self.pos
            left = self._class_atom()
            if text.startswith("-", self.pos) and text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                ranges.extend(self._class_range(item_start, left))
            elif left is not None:
                ranges.extend(left)
        self.pos += 1
        span = ast.Span(start, self.pos)
        if first and not negated:
            self._error("GK131", "empty character class `[]` matches nothing", span,
                        "write `[^]` for any character, or escape a literal bracket as `\\[`")
            self._placeholder(span)
            return
        if first and self.xgrammar:
            self._error("GK131", "empty character class `[^]`: xgrammar refuses it", span,
                        "write `[\\s\\S]` for any character")
            self._placeholder(span)
            return
        merged = merge(ranges)
        if not merged and not negated:
            self._placeholder(span)  # every member was reported
            return
        if negated and not merged:
            merged, negated = ((0, MAX_CODEPOINT),), False
        self._atom(ast.CharClass(merged, negated, span))

    def _class_range(self, start: int, left: Ranges | None) -> Ranges:
        """The range whose ``-`` is at ``pos``; JavaScript reads ``[\\d-z]`` as ``\\d``, ``-``,
        ``z``."""
        self.pos += 1
        right = self._class_atom()
        span = ast.Span(start, self.pos)
        if left is None or right is None:
            return ()
        if _is_single(left) and _is_single(right):
            low, high = left[0][0], right[0][0]
            if low <= high:
                return ((low, high),)
            self._error("GK131", "character range is reversed", span,
                        "put the lower character first")
            return ()
        if not self.python and _is_single(right):
            return left + ((0x2D, 0x2D),) + right
        self._error("GK131", "a class like `\\d` can't be the end of a range", span,
                    "escape the dash as `\\-` to mean a literal `-`")
        return ()

    def _class_atom(self) -> Ranges | None:
        """One member of a class at ``pos``: a code point or a set; ``None`` if invalid."""
        text, start = self.text, self.pos
        c = text[start]
        if c != "\\":
            self.pos += 1
            if 0xD800 <= ord(c) <= 0xDFFF:
                self._surrogate_error(self._span(start, 1))
                return None
            return ((ord(c), ord(c)),)
        if start + 1 >= len(text):
            self.pos += 1
            return None
        escaped = text[start + 1]
        ranges = self._class_escape(escaped)
        if ranges is not None:
            self.pos += 2
            return ranges
        if escaped in "pP":
            self._property_escape()
            return None
        if self.python and escaped in "AZ":
            self.pos += 2
            self._error("GK131", f"`\\{escaped}` can't appear in a class", self._span(start, 2),
                        "anchors belong outside classes")
            return None
        cp = self._char_escape(in_class=True)
        return None if cp is None else ((cp, cp),)


def _is_empty(expr: ast.Expr) -> bool:
    return isinstance(expr, ast.Literal) and not expr.value


def _is_single(ranges: Ranges) -> bool:
    return len(ranges) == 1 and ranges[0][0] == ranges[0][1]


def _sequence(items: list[ast.Expr], span: ast.Span) -> ast.Expr:
    """``items`` in order, adjacent literals merged; the empty string if there are none."""
    if len(items) == 1 and not _is_empty(items[0]):
        return items[0]
    merged: list[ast.Expr] = []
    for is_literal, run in itertools.groupby(
        (item for item in items if not _is_empty(item)), key=lambda e: isinstance(e, ast.Literal)
    ):
        if not is_literal:
            merged.extend(run)
            continue
        literals = [item for item in run if isinstance(item, ast.Literal)]
        first, last = literals[0].span, literals[-1].span
        joined = "".join(item.value for item in literals)
        merged.append(ast.Literal(joined, ast.Span(first.start, last.end) if first and last
                                  else None))
    if not merged:
        return ast.Literal("", ast.Span(span.start, span.start))
    if len(merged) == 1:
        return merged[0]
    return ast.Sequence(tuple(merged), span)


def _char_class(ranges: Ranges) -> ast.CharClass:
    """A class for sorted ``ranges``, negated when that is shorter (``\\D`` as ``[^0-9]``)."""
    outside = complement(ranges)
    if 0 < len(outside) < len(ranges):
        return ast.CharClass(outside, negated=True)
    return ast.CharClass(ranges)
