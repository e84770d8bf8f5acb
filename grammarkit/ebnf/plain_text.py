"""Plain rule definitions read straight from the text, without token objects.

Most rules of big grammars (what converters write) are plain: literals, classes, references,
groups, alternatives and quantifiers, one rule starting each line, no comments. For those the
lexer's token objects and the reader walking them cost more than the AST they become. This
reader takes one regular-expression step per token and builds the very nodes
:mod:`grammarkit.ebnf.descent` builds from the tokens (same types, values and spans).

Comments are kept as the lexer keeps them, and a lookahead ``(= ...)`` ending a rule is read
as the rule's body is. Anything else ends the fast reading of a rule: a macro call, an
attribute block, or anything the lexer or the parser would report, except references to
undefined rules (the caller checks those). That rule's text, up to the next line that starts
a rule definition, becomes a :class:`Region` for the lexer and the parser.
``tests/ebnf/test_fast_paths.py`` checks that both paths agree on generated texts.

Reading lazily (``read(text, lazy_from=root)``, what :meth:`Grammar.from_ebnf` asks for), a
text whose every rule is certified plain by a few whole-text regular-expression passes
(:func:`_unread_rules`) becomes rules whose bodies are read when first used: a big grammar's
verdict pays for the rules it reaches, not for all of them. A text whose root reaches many
rules through the first elements of their alternatives (a chain of rules, each an
alternative of the one before) is read now: its first verdict reads them all anyway, and
certifying them first would only add to that.
"""

from __future__ import annotations

import gc
import re
from dataclasses import dataclass, field
from operator import itemgetter, methodcaller
from typing import Any

from grammarkit.ebnf import ast
from grammarkit.ebnf.ast import Span
from grammarkit.ebnf.lexer import (
    MACRO_NAMES,
    PLAIN_CLASS,
    PLAIN_STRING,
    CharClassValue,
    decode_plain_literal,
    plain_class_value,
)

MAX_DEPTH = 100
"""Group nesting read here; deeper rules are left to the parser."""

_NAME = r"[A-Za-z_.\-][A-Za-z0-9_.\-]*+"
_SPACE = r"[ \t\r\n]*+"
_INTEGER = r"[0-9]{1,15}(?![0-9])"
_TOKEN = re.compile(
    _SPACE + r"(?:"
    rf"(?P<name>{_NAME})(?!\[)(?P<assign>{_SPACE}::=)?"
    r"|(?P<suffix>[*+?])|(?P<open>\((?!=))|(?P<close>\))|(?P<pipe>\|)|(?P<lookahead>\(=)"
    rf"|(?P<string>{PLAIN_STRING})"
    rf"|(?P<char_class>{PLAIN_CLASS})"
    rf"|(?P<braces>\{{{_SPACE}(?P<low>{_INTEGER}){_SPACE}"
    rf"(?:(?P<comma>,){_SPACE}(?:(?P<high>{_INTEGER})|(?P<minus>-1)(?![A-Za-z0-9_.\-\[]))?"
    rf"{_SPACE})?\}})"
    r"|(?P<comment>#[^\r\n]*+)|(?P<end>\Z))"
)
"""One token (or comment) and the whitespace before it; a name directly before ``::=`` (the
next rule) takes the ``::=`` along. The classes of characters and escapes are the lexer's."""

_RULE_START = re.compile(rf"{_SPACE}(?P<name>{_NAME}){_SPACE}::=")
_NEXT_RULE = re.compile(rf"^[ \t]*+({_NAME})(?:\[[^\r\n]*?\])?{_SPACE}::=", re.MULTILINE)
"""A line that starts a rule definition: where a region of careful parsing may end."""
_LINE_BREAK = re.compile(r"[\r\n]")
_NOT_NAMES = frozenset({"true", "false"})
_SUFFIXES: dict[str, tuple[int, int | None, str]] = {
    "*": (0, None, "*"),
    "+": (1, None, "+"),
    "?": (0, 1, "?"),
}
_LITERAL, _CHAR_CLASS, _RULE_REF = ast.Literal, ast.CharClass, ast.RuleRef
_SEQUENCE, _CHOICE, _REPEAT = ast.Sequence, ast.Choice, ast.Repeat
_NEW_TUPLE = tuple.__new__
"""Builds a :class:`Span` (a named tuple) without a Python frame: ``new(Span, (start, end))``."""


@dataclass(frozen=True, slots=True)
class Region:
    """Text ``[start, stop)`` to lex and parse with care.

    ``stop`` is ``None`` at the end of the text; otherwise the text ends with the next rule's
    name and ``::=`` (the lexer needs them to tell where the region's last rule ends), and
    fast reading resumes at that name.
    """

    start: int
    stop: int | None


class _NotPlain(Exception):
    """The rule at hand needs the lexer and the parser."""


@dataclass(frozen=True, slots=True)
class Reading:
    """The rule definitions of a text in order, each read here or left as a region."""

    pieces: list[ast.Rule | Region]
    references: list[ast.RuleRef]
    """The rule references in the rules read here (checked once every rule name is known)."""
    comments: list[tuple[str, Span]] = field(default_factory=list)
    """The comments in and after the rules read here (text without ``#``, span with it), in
    order, as the lexer gives them."""


def read(text: str, *, lazy_from: str | None = None) -> Reading:
    """Read the plain rules of ``text``; leave the rest as regions.

    With ``lazy_from`` (the root rule), a text of plain rules only (every reference defined,
    no comment) whose first verdict likely reads few of them gives rules whose bodies and
    spans are read when first used, exactly as reading them now would.
    """
    reader = _Reader(text)
    pieces: list[ast.Rule | Region] = []
    if not text:
        return Reading(pieces, reader.references, reader.comments)
    if lazy_from is not None:
        unread = _unread_rules(reader, lazy_from)
        if unread is not None:
            return Reading(unread, [], [])
    start = _RULE_START.match(text)
    begin = 0  # where a region starting here would start: text before the first rule is in it
    while True:
        if start is not None and start["name"] not in _NOT_NAMES:
            try:
                rule, following = reader.rule(start)
            except _NotPlain:
                pass
            else:
                pieces.append(rule)
                if following is None:  # the end of the text
                    break
                start = following
                begin = start.start("name")
                continue
        after = _NEXT_RULE.search(text, begin + 1)  # the next line that starts a rule
        last = pieces[-1] if pieces else None
        if isinstance(last, Region):  # it ends where this one starts: lex both at once
            pieces.pop()
            begin = last.start
        if after is None:
            pieces.append(Region(begin, None))
            break
        pieces.append(Region(begin, after.end()))
        begin = after.start(1)
        start = _RULE_START.match(text, begin)
    return Reading(pieces, reader.references, reader.comments)


class _Reader:
    """Reads plain rules of one text; decoded literals, classes and names are shared by
    spelling."""

    def __init__(self, text: str):
        self.text = text
        self.strings: dict[str, str] = {}
        self.classes: dict[str, CharClassValue | None] = {}
        self.references: list[ast.RuleRef] = []
        self.comments: list[tuple[str, Span]] = []

    def rule(self, start: re.Match[str]) -> tuple[ast.Rule, re.Match[str] | None]:
        """The rule whose name and ``::=`` ``start`` matched (its group ``name``, and the
        ``::=`` at its end), and the match of the next rule's name and ``::=`` if any.

        Raises ``_NotPlain`` when the rule is not plain (its references and comments are not
        kept then).
        """
        references, comments = self.references, self.comments
        kept, kept_comments = len(references), len(comments)
        try:
            rule, kind, m = self._rule(start["name"], *start.span("name"), start.end())
            return rule, self._next_rule(kind, m)
        except _NotPlain:
            del references[kept:]
            del comments[kept_comments:]
            raise

    def _rule(self, name: str, name_start: int, name_end: int, pos: int
              ) -> tuple[ast.Rule, str | None, re.Match[str]]:
        """The rule called ``name`` (at ``[name_start, name_end)``) whose body starts at
        ``pos``, and the kind and match of the token that ended it (the next rule's name and
        ``::=``, or the end of the text)."""
        text, strings, classes, references = self.text, self.strings, self.classes, self.references
        match = _TOKEN.match
        new = _NEW_TUPLE
        # the choices and the sequence being read, and those of the groups around them
        alternatives: list[ast.Expr] = []
        items: list[ast.Expr] = []
        choices_start = sequence_start = item_start = -1
        open_groups: list[tuple[list[ast.Expr], list[ast.Expr], int, int, int]] = []
        body: ast.Expr | None = None  # once a lookahead starts
        quantifiable = False
        high: int | None
        end = pos
        while True:
            m = match(text, pos)
            if m is None:
                raise _NotPlain
            kind = m.lastgroup
            pos = m.end()
            element: ast.Expr
            # the commonest kinds first
            if kind == "string":
                value = m[kind]
                token_start = pos - len(value)
                decoded = strings.get(value)
                if decoded is None:
                    decoded = value[1:-1]
                    if "\\" in decoded:
                        decoded = decode_plain_literal(decoded)
                    strings[value] = decoded
                element = _LITERAL(decoded, new(Span, (token_start, pos)))
            elif kind == "suffix":
                if not quantifiable:
                    raise _NotPlain
                low, high, op = _SUFFIXES[text[pos - 1]]
                items[-1] = _REPEAT(items[-1], low, high, op, new(Span, (item_start, pos)))
                quantifiable = False
                end = pos
                continue
            elif kind == "close":
                if not open_groups:
                    raise _NotPlain
                element_items = items
                if items:
                    element = items[0] if len(items) == 1 else _SEQUENCE(
                        tuple(items), new(Span, (sequence_start, end)))
                    if alternatives:
                        alternatives.append(element)
                        element = _CHOICE(tuple(alternatives), new(Span, (choices_start, end)))
                elif alternatives:
                    raise _NotPlain  # an empty alternative
                else:
                    element = _SEQUENCE((), new(Span, (open_groups[-1][4], pos)))
                alternatives, items, choices_start, sequence_start, token_start = (
                    open_groups.pop())
                if body is not None and not open_groups:  # the end of the lookahead
                    if not element_items:
                        raise _NotPlain  # `(=)`: the parser reports it
                    kind, m = self._after_lookahead(pos)
                    rule = ast.Rule(name, body, element, (), new(Span, (name_start, pos)),
                                    new(Span, (name_start, name_end)))
                    return rule, kind, m
            elif kind == "open":
                if len(open_groups) == MAX_DEPTH:
                    raise _NotPlain
                token_start = pos - 1
                if sequence_start < 0:
                    sequence_start = token_start
                    if choices_start < 0:
                        choices_start = token_start
                open_groups.append(
                    (alternatives, items, choices_start, sequence_start, token_start))
                alternatives, items = [], []
                choices_start = sequence_start = -1
                quantifiable = False
                end = pos
                continue
            elif kind == "name":
                value = m[kind]
                if value in _NOT_NAMES or value in MACRO_NAMES:
                    raise _NotPlain
                token_start = pos - len(value)
                element = _RULE_REF(value, new(Span, (token_start, pos)))
                references.append(element)
            elif kind == "pipe":
                if not items:
                    raise _NotPlain
                alternatives.append(items[0] if len(items) == 1 else _SEQUENCE(
                    tuple(items), new(Span, (sequence_start, end))))
                items = []
                sequence_start = -1
                quantifiable = False
                end = pos
                continue
            elif kind == "char_class":
                value = m[kind]
                if value in classes:
                    char_class = classes[value]
                else:
                    char_class = classes[value] = plain_class_value(value)
                if char_class is None:
                    raise _NotPlain  # a reversed range: the parser reports it
                token_start = pos - len(value)
                element = _CHAR_CLASS(char_class.ranges, char_class.negated, new(Span, (token_start, pos)))
            elif kind == "lookahead":  # `(=`: after the body, a group ending the rule
                if open_groups or not items or body is not None:
                    raise _NotPlain
                body = self._body(items, alternatives, sequence_start, choices_start, end)
                open_groups.append(([], [], -1, -1, pos - 2))
                alternatives, items = [], []
                choices_start = sequence_start = -1
                quantifiable = False
                end = pos
                continue
            elif kind == "comment":  # whitespace to the reader: nothing else changes
                value = m[kind]
                self.comments.append((value[1:], new(Span, (pos - len(value), pos))))
                continue
            elif kind == "braces":
                if not quantifiable:
                    raise _NotPlain
                low = int(m["low"])
                if m["comma"] is None:
                    high = low
                elif m["high"] is not None:
                    high = int(m["high"])
                    if high < low:
                        raise _NotPlain  # reversed bounds: the parser reports them
                else:
                    high = None
                items[-1] = _REPEAT(items[-1], low, high, "{}", new(Span, (item_start, pos)))
                quantifiable = False
                end = pos
                continue
            else:  # the end of the text, or the next rule's name and `::=`
                break
            if sequence_start < 0:
                sequence_start = token_start
                if choices_start < 0:
                    choices_start = token_start
            items.append(element)
            item_start = token_start
            quantifiable = True
            end = pos
        if open_groups or not items:
            raise _NotPlain
        rule = ast.Rule(name, self._body(items, alternatives, sequence_start, choices_start, end),
                        None, (), new(Span, (name_start, end)), new(Span, (name_start, name_end)))
        return rule, kind, m

    @staticmethod
    def _body(items: list[ast.Expr], alternatives: list[ast.Expr], sequence_start: int,
              choices_start: int, end: int) -> ast.Expr:
        """The choices read at the top of a rule (``items``: the last one's)."""
        body = items[0] if len(items) == 1 else _SEQUENCE(tuple(items), Span(sequence_start, end))
        if alternatives:
            alternatives.append(body)
            body = _CHOICE(tuple(alternatives), Span(choices_start, end))
        return body

    def _next_rule(self, kind: str | None, m: re.Match[str]) -> re.Match[str] | None:
        """The match of the next rule's name and ``::=`` that ended a rule (``None`` at the end
        of the text); raises ``_NotPlain`` if that name does not start its line."""
        if kind != "assign":
            return None
        if not _LINE_BREAK.search(self.text, m.start(), m.start("name")):
            raise _NotPlain  # a rule name not starting its line: the lexer reports it
        return m

    def _after_lookahead(self, pos: int) -> tuple[str | None, re.Match[str]]:
        """Read the comments after a rule's lookahead up to the next rule or the end of the
        text (anything else there: ``_NotPlain``); the kind and match of that last token."""
        while True:
            m = _TOKEN.match(self.text, pos)
            if m is None:
                raise _NotPlain
            kind = m.lastgroup
            pos = m.end()
            if kind == "comment":
                value = m[kind]
                self.comments.append((value[1:], Span(pos - len(value), pos)))
            elif kind in ("end", "assign"):
                return kind, m
            else:
                raise _NotPlain


# -- lazy reading ------------------------------------------------------------------------------

_CERTIFIED_DEPTH = 12
"""Group nesting certified by :data:`_SKELETON`; deeper rules are read now."""
_NOT_AFTER_NAME = r"(?<![A-Za-z0-9_.\-])"
"""Before a class: a class straight after a name is that name's attribute block."""
_LINE_RULE = re.compile(rf"^[ \t]*+({_NAME})[ \t]*+::=", re.MULTILINE)
"""A line starting a rule definition (name and ``::=`` on the line)."""
_ATOMS = re.compile(rf"{PLAIN_STRING}|{_NOT_AFTER_NAME}({PLAIN_CLASS})")
"""A literal, or a class (the group)."""
_BRACES = re.compile(
    rf"\{{{_SPACE}({_INTEGER}){_SPACE}"
    rf"(?:,{_SPACE}(?:({_INTEGER})|-1(?![A-Za-z0-9_.\-\[]))?{_SPACE})?\}}")
_NAMES = re.compile(f"({_NAME})")
_LEFT_CORNER = re.compile(rf"[=|(]{_SPACE}({_NAME})")
"""A name starting a rule's body (from its ``::=``), an alternative or a group."""
_SPACES = re.compile(r"[ \t\r\n]++")
_RULE_MARK, _ATOM_MARK = "\0", "\x01"
"""What the skeleton of a text (:func:`_unread_rules`) has for a rule's start and an atom."""


def _skeleton_pattern(depth: int) -> str:
    """The skeleton of a plain rule body: atoms, groups nested up to ``depth - 1`` deep,
    alternatives and one quantifier after an element (braces become ``*``)."""
    starts_item = rf"(?=[{_ATOM_MARK}(])"
    group = r"\(\)"
    body = ""
    for _ in range(depth):
        item = rf"(?:{_ATOM_MARK}|{group})[*+?]?+"
        body = rf"{starts_item}(?:{item}|\|{starts_item})++"
        group = rf"\((?:{body})?\)"
    return body


_SKELETON = re.compile(rf"(?:{_RULE_MARK}{_skeleton_pattern(_CERTIFIED_DEPTH)})++")


def _unread_rules(reader: _Reader, root: str) -> list[ast.Rule | Region] | None:
    """The rules of ``reader``'s text, unread, if each is certified plain: what
    :meth:`_Reader.rule` reads without fail, one after the other, with every reference
    defined and no comment; ``None`` otherwise.

    Certified by passes over the whole text: each line starting with a rule's name and
    ``::=`` becomes a mark, each literal and class another, braces ``*``, names atoms; the
    rest, without whitespace, must be a sequence of rule bodies (:data:`_SKELETON`). The
    classes' ranges, the braces' bounds and the names are checked once per spelling.
    """
    text = reader.text
    if _RULE_MARK in text or _ATOM_MARK in text:
        return None
    starts = list(_LINE_RULE.finditer(text))
    if not starts or not _reaches_few(text, starts, root):
        return None
    # split, not findall and sub: one scan gives both the classes (names) and the skeleton
    pieces = _ATOMS.split(_LINE_RULE.sub(_RULE_MARK, text))
    classes = reader.classes
    for spelling in set(pieces[1::2]):
        if spelling is not None and spelling not in classes:
            classes[spelling] = plain_class_value(spelling)
            if classes[spelling] is None:  # a reversed range
                return None
    skeleton = _ATOM_MARK.join(pieces[::2])
    for low, high in set(_BRACES.findall(skeleton)):
        if high and int(high) < int(low):
            return None
    pieces = _NAMES.split(_BRACES.sub("*", skeleton))
    defined = {start[1] for start in starts}
    names = set(pieces[1::2])
    if (not names <= defined or not names.isdisjoint(_NOT_NAMES | MACRO_NAMES)
            or not defined.isdisjoint(_NOT_NAMES)):
        return None
    skeleton = _SPACES.sub("", _ATOM_MARK.join(pieces[::2]))
    if _SKELETON.fullmatch(skeleton) is None:
        return None
    new: Any = _UnreadRule  # its body: the reader and where the rule's body starts
    span = _NEW_TUPLE
    return [new(start[1], (reader, start.end()), None, (), None, span(Span, start.span(1)))
            for start in starts]


def _reaches_few(text: str, starts: list[re.Match[str]], root: str) -> bool:
    """Whether ``root`` reaches at most a tenth of the rules (or 1,000) through the names
    that start an alternative or a group (what a first prediction reads), roughly: the
    bodies are not parsed, and names inside literals may count."""
    limit = max(1000, len(starts) // 10)
    names = list(map(itemgetter(1), starts))
    first = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))  # first definitions
    body_starts = list(map(methodcaller("end"), starts))  # after each `::=`
    body_ends = [*map(methodcaller("start"), starts[1:]), len(text)]
    seen, todo = {root}, [root]
    while todo:
        rule = first.get(todo.pop())
        if rule is None:
            continue
        for name in _LEFT_CORNER.findall(text, body_starts[rule] - 1, body_ends[rule]):
            if name not in seen:
                seen.add(name)
                todo.append(name)
        if len(seen) > limit:
            return False
    return True


_BODY_SLOT: Any = ast.Rule.__dict__["body"]
_SPAN_SLOT: Any = ast.Rule.__dict__["span"]
"""The slots of :class:`ast.Rule` that an unread rule's properties stand in for."""


def _read_now(rule: ast.Rule) -> ast.Rule:
    """Read an unread rule's body and span into it; it is then an ordinary :class:`ast.Rule`."""
    pending = _BODY_SLOT.__get__(rule)
    if pending.__class__ is tuple:  # (the reader, where the rule's body starts)
        reader, offset = pending
        name_start, name_end = rule.name_span  # type: ignore[misc]
        collecting = gc.isenabled()
        gc.disable()  # as when parsing (paused_gc, inline: it runs once per rule read)
        try:
            read, _, _ = reader._rule(rule.name, name_start, name_end, offset)
        except _NotPlain:
            raise AssertionError(f"rule `{rule.name}` was certified plain but is not") from None
        finally:
            if collecting:
                if not gc.get_freeze_count():  # the new nodes join the oldest generation
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
        reader.references.clear()  # checked when the text was certified
        _BODY_SLOT.__set__(rule, read.body)
        _SPAN_SLOT.__set__(rule, read.span)
    object.__setattr__(rule, "__class__", ast.Rule)
    return rule


class _UnreadRule(ast.Rule):
    """A rule of a certified text whose body (and span, which ends with it) is read from the
    text when first used; reading it makes it an ordinary :class:`ast.Rule`."""

    __slots__ = ()

    @property
    def body(self) -> ast.Expr:
        return _read_now(self).body

    @property
    def span(self) -> Span | None:
        return _read_now(self).span

    def __eq__(self, other: object) -> bool:
        return _read_now(self) == other

    def __hash__(self) -> int:
        return hash(_read_now(self))

    def __repr__(self) -> str:
        return repr(_read_now(self))

    def __reduce_ex__(self, protocol: Any) -> Any:
        return _read_now(self).__reduce_ex__(protocol)
