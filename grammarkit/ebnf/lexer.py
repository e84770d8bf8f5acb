"""The dialect's scanner: text to tokens, exactly as xgrammar 0.2.8's ``EBNFLexer`` splits it.

Lexing is context sensitive in three places that a plain regular lexer cannot express, so this
scanner is hand-written and feeds :mod:`lark` (see ``syntax.lark``):

* a name directly before ``::=`` becomes ``RULE_NAME`` and must be the first token on its line;
* ``name[max_tokens=3, capture] ::=`` is an attribute block, while ``x [a-z]`` is a class;
* ``-`` starts names (``-x``, and so the upper bound ``-1``), ``+``/digits start integers.

Literals and classes are decoded here, so ``STRING`` and ``CLASS`` tokens carry their value.
Errors become diagnostics and scanning resumes, so one pass reports every lexical error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from grammarkit.diagnostics import Diagnostic, error, warning
from grammarkit.ebnf import escapes
from grammarkit.ebnf.ast import Attribute, Span

MAX_INTEGER = 10**15
MACRO_NAMES = frozenset(
    {"TagDispatch", "Token", "ExcludeToken", "TokenTagDispatch", "Regex", "Substring"}
)

_ATTRIBUTE_KEYS = ("max_tokens", "max_chars", "stop_capture", "capture", "lazy", "temperature")
_MAX_INT32 = 2**31 - 1
_FLOAT_CHARS = re.compile(r"=[ \t]*([0-9.eE+\-]+)")
_STRTOD_PREFIX = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SPACE = re.compile(r"(?:[ \t\r\n]+|#[^\r\n]*)+")
_COMMENT = re.compile(r"#([^\r\n]*)")
_NAME = re.compile(r"[A-Za-z_.\-][A-Za-z0-9_.\-]*")
_PLAIN_STRING_RUN = re.compile(r'[^"\\\r\n\ud800-\udfff]+')
_INVALID_BYTE = re.compile(r"[\ud800-\udfff]")
"""An undecodable byte (``surrogateescape`` maps it to U+DC80..U+DCFF) or a lone surrogate in
``str`` input: neither is UTF-8 text, so both are GK113."""

_STRING_ESCAPES = re.escape("".join(sorted(escapes.SIMPLE_ESCAPES)))
_CLASS_ESCAPES = re.escape("".join(sorted({*escapes.SIMPLE_ESCAPES, *escapes.CLASS_ESCAPES})))
_WIDE_ESCAPE = r"u[0-9a-fA-F]{4}|U00(?:0[0-9a-fA-F]|10)[0-9a-fA-F]{4}"
"""``\\uHHHH`` and ``\\UHHHHHHHH`` up to U+10FFFF: one code point each, never an error."""
PLAIN_STRING = (rf'"[^"\\\r\n\ud800-\udfff]*'
                rf'(?:\\(?:[{_STRING_ESCAPES}]|{_WIDE_ESCAPE})[^"\\\r\n\ud800-\udfff]*)*"')
"""A literal token whose escapes cannot fail (no ``\\x``: it may be too big), as a pattern."""
PLAIN_CLASS = (rf"\[\^?[^\]\\\r\n\ud800-\udfff]*"
               rf"(?:\\(?:[{_CLASS_ESCAPES}]|{_WIDE_ESCAPE})[^\]\\\r\n\ud800-\udfff]*)*\]")
"""A class token whose escapes cannot fail, as a pattern (its ranges may still be reversed)."""
_COMMON = re.compile(
    r"[ \t\r\n]*+"  # the whitespace before the token, in the same step
    r"(?:(?P<name>[A-Za-z_.\-][A-Za-z0-9_.\-]*+)(?!\[)"
    r"|(?P<punctuation>[)|,*+?{}=]|\((?!=))"
    rf"|(?P<string>{PLAIN_STRING})"
    r"|(?P<assign>::=)"
    r"|(?P<integer>[0-9]{1,15})(?![0-9])"
    rf"|(?P<char_class>{PLAIN_CLASS}))"
)
"""The frequent tokens :meth:`Lexer._scan_common` scans in one step."""

_PUNCTUATION = {
    ")": "RPAR",
    "{": "LBRACE",
    "}": "RBRACE",
    "|": "PIPE",
    ",": "COMMA",
    "*": "STAR",
    "+": "PLUS",
    "?": "QMARK",
    "=": "EQUAL",
}


_COMMON_KINDS = {"(": "LPAR", **_PUNCTUATION}
_NAME_KINDS = {"true": "BOOL", "false": "BOOL", **dict.fromkeys(MACRO_NAMES, "MACRO")}
"""Names that are not rule references; every other name is an ``IDENT``."""


class GkToken:
    """A token: its kind, text, character offsets ``[start, end)``, and decoded ``payload``.

    ``payload`` is the value of literals, classes, integers and booleans, and ``(name,
    attributes)`` for names; ``seq`` is the token's position in the stream.
    """

    __slots__ = ("end", "payload", "seq", "start", "type", "value")

    def __init__(
        self, kind: str, value: str, start: int, end: int, payload: Any = None, seq: int = 0
    ):
        self.type = kind
        self.value = value
        self.start = start
        self.end = end
        self.payload = payload
        self.seq = seq

    def __repr__(self) -> str:
        return f"GkToken({self.type}, {self.value!r}, {self.start})"


@dataclass
class CharClassValue:
    """The decoded content of a ``[...]`` token."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool


@dataclass
class LexResult:
    """Tokens (ending with an ``$END`` token), diagnostics and comments of one text, and the
    index of each ``RULE_NAME`` token."""

    tokens: list[GkToken]
    diagnostics: list[Diagnostic] = field(default_factory=list)
    comments: list[tuple[str, Span]] = field(default_factory=list)
    rule_names: list[int] = field(default_factory=list)


class Lexer:
    """Scans one text; use :func:`tokenize`."""

    def __init__(self, text: str):
        # xgrammar reads a C string: a NUL byte ends the input.
        nul = text.find("\0")
        self.text = text if nul < 0 else text[:nul]
        self.pos = 0
        self.tokens: list[GkToken] = []
        self.diagnostics: list[Diagnostic] = []
        if nul >= 0:
            self.diagnostics.append(
                warning(
                    "GK213",
                    "a NUL byte ends the grammar: the text after it is ignored",
                    Span(nul, nul + 1),
                    "xgrammar stops reading at a NUL byte too; remove it",
                )
            )
        self.comments: list[tuple[str, Span]] = []
        self.assigns: list[int] = []  # the index of each `::=` token
        # per spelling, what its tokens share: (kind, spelling, payload) of a name,
        # (spelling, value) of a literal, (spelling, payload) of a class or None if it needs care
        self._names: dict[str, tuple[str, str, Any]] = {}
        self._strings: dict[str, tuple[str, str]] = {}
        self._classes: dict[str, tuple[str, tuple[CharClassValue, tuple[()]]] | None] = {}

    # -- helpers ---------------------------------------------------------------------------
    def _error(
        self, code: str, message: str, start: int, end: int | None = None, hint: str | None = None
    ) -> None:
        self.diagnostics.append(error(code, message, Span(start, end if end else start + 1), hint))

    def _emit(self, kind: str, start: int, end: int, payload: Any = None) -> GkToken:
        token = GkToken(kind, self.text[start:end], start, end, payload, len(self.tokens))
        self.tokens.append(token)
        return token

    def _skip_space(self) -> None:
        m = _SPACE.match(self.text, self.pos)
        if m is None:
            return
        if "#" in m.group():
            for c in _COMMENT.finditer(m.group()):
                self.comments.append((c.group(1), Span(self.pos + c.start(), self.pos + c.end())))
        self.pos = m.end()

    # -- token kinds -----------------------------------------------------------------------
    def _string(self) -> None:
        text, start = self.text, self.pos
        i = start + 1
        chars: list[str] = []
        while i < len(text) and text[i] not in '"\r\n':
            m = _PLAIN_STRING_RUN.match(text, i)
            if m:
                chars.append(m.group())
                i = m.end()
                continue
            if text[i] == "\\":
                cp, length = self._escape(i, in_class=False)
                if cp >= 0:
                    chars.append(self._codepoint(cp, i, i + length))
                i += length
            else:  # an undecodable byte
                self._error(
                    "GK113",
                    "invalid UTF-8 (or a lone surrogate) in string literal",
                    i,
                    i + 1,
                    "save the grammar as UTF-8",
                )
                i += 1
        if i >= len(text) or text[i] != '"':
            self._error(
                "GK106",
                "unterminated string literal",
                i,
                i + 1,
                'close the literal with `"` on the same line; write a newline as `\\n`',
            )
            self.pos = i
            self._emit("STRING", start, i, "".join(chars))
            return
        self.pos = i + 1
        self._emit("STRING", start, self.pos, "".join(chars))

    def _escape(self, i: int, in_class: bool) -> tuple[int, int]:
        """Decode the escape at ``text[i]``: ``(code point, length)``, or ``(-1, length to skip)``
        after reporting an invalid one."""
        text = self.text
        decoded = escapes.decode_escape(text, i, in_class=in_class)
        if decoded is not None:
            return decoded
        where = "character class" if in_class else "string literal"
        hint = _escape_hint(text, i, in_class=in_class)
        self._error("GK107", f"invalid escape sequence in {where}", i, i + 2, hint)
        return -1, 2 if i + 1 < len(text) and text[i + 1] not in "\r\n" else 1

    def _codepoint(self, cp: int, start: int, end: int) -> str:
        if cp > escapes.MAX_CODEPOINT:
            self._error(
                "GK114",
                f"escape names U+{cp:X}, beyond the last code point U+10FFFF",
                start,
                end,
                "a \\x escape takes every hex digit that follows it; "
                "write \\u or \\U with a fixed number of digits instead",
            )
            return "\ufffd"
        return chr(cp)

    def _char_class(self) -> None:
        text, start = self.text, self.pos
        i = start + 1
        negated = i < len(text) and text[i] == "^"
        if negated:
            i += 1
        # items: (codepoint, start, end, kind) with kind "char" | "dash" | "special"
        items: list[tuple[int, int, int, str]] = []
        while i < len(text) and text[i] != "]":
            c = text[i]
            if c in "\r\n":
                self._error(
                    "GK108",
                    "character class contains a line break",
                    i,
                    i + 1,
                    "write a newline inside a class as `\\n`",
                )
                i += 1
                continue
            if c == "-":
                items.append((ord("-"), i, i + 1, "dash"))
                i += 1
            elif c == "\\" and i + 1 < len(text) and text[i + 1] in escapes.CLASS_SPECIAL_ESCAPES:
                items.append((0, i, i + 2, "special"))
                i += 2
            elif c == "\\":
                cp, length = self._escape(i, in_class=True)
                if cp >= 0:
                    items.append((ord(self._codepoint(cp, i, i + length)), i, i + length, "char"))
                i += length
            elif _INVALID_BYTE.match(c):
                self._error(
                    "GK113",
                    "invalid UTF-8 (or a lone surrogate) in character class",
                    i,
                    i + 1,
                    "save the grammar as UTF-8",
                )
                i += 1
            else:
                items.append((ord(c), i, i + 1, "char"))
                i += 1
        if i >= len(text):
            self._error(
                "GK108",
                "unterminated character class",
                i,
                i + 1,
                "close the class with `]` (write a literal `]` as `\\]`)",
            )
            self.pos = i
            self._emit("CLASS", start, i, self._class_ranges(items, negated, start))
            return
        self.pos = i + 1
        token = self._emit("CLASS", start, self.pos, None)
        token.payload = self._class_ranges(items, negated, start)

    def _class_ranges(
        self, items: list[tuple[int, int, int, str]], negated: bool, start: int
    ) -> tuple[CharClassValue, list[Diagnostic]]:
        """Pair up ``a-b`` ranges as xgrammar's parser does; errors here are parse-phase."""
        ranges: list[tuple[int, int]] = []
        problems: list[Diagnostic] = []
        k = 0
        while k < len(items):
            cp, s, e, kind = items[k]
            if kind == "special":
                problems.append(
                    error(
                        "GK108",
                        f"`{self.text[s:e]}` is not supported in an EBNF character class",
                        Span(s, e),
                        "list the characters instead, e.g. `[0-9]` for `\\d`, "
                        "`[ \\t\\n\\r]` for `\\s`, `[a-zA-Z0-9_]` for `\\w`",
                    )
                )
                k += 1
                continue
            if (
                k + 2 < len(items)
                and items[k + 1][3] == "dash"
                and items[k + 2][3] in ("char", "dash")
            ):
                hi = items[k + 2][0]
                if cp > hi:
                    problems.append(
                        error(
                            "GK108",
                            "character range is reversed: lower bound "
                            f"{escapes.class_char(cp)!r} is above upper bound "
                            f"{escapes.class_char(hi)!r}",
                            Span(s, items[k + 2][2]),
                            f"write `{escapes.class_char(hi)}-{escapes.class_char(cp)}`",
                        )
                    )
                else:
                    ranges.append((cp, hi))
                k += 3
                continue
            if k + 2 < len(items) and items[k + 1][3] == "dash" and items[k + 2][3] == "special":
                # xgrammar reports the special escape first, at its own position.
                ranges.append((cp, cp))
                k += 1
                continue
            ranges.append((cp, cp))
            k += 1
        return CharClassValue(tuple(ranges), negated), problems

    def _name(self) -> None:
        start = self.pos
        m = _NAME.match(self.text, start)
        assert m is not None
        name = m.group()
        self.pos = m.end()
        if name in ("true", "false"):
            self._emit("BOOL", start, self.pos, name == "true")
            return
        if self.pos < len(self.text) and self.text[self.pos] == "[":
            attributes = self._attribute_block(name)
            if attributes is not None:
                self._emit("IDENT", start, self.pos, (name, attributes))
                return
        kind = "MACRO" if name in MACRO_NAMES else "IDENT"
        self._emit(kind, start, self.pos, (name, ()))

    def _attribute_block(self, name: str) -> tuple[Attribute, ...] | None:
        """Scan ``[max_tokens=N, capture="x", lazy, ...]`` before ``::=``; ``None`` if not one.

        Mirrors xgrammar 0.2.8: each attribute at most once, separated by commas, spaces and
        tabs allowed; anything else means the bracket is an ordinary character class.
        """
        text, name_start = self.text, self.pos - len(name)
        i = self.pos + 1
        attributes: list[Attribute] = []

        def skip(j: int) -> int:
            while j < len(text) and text[j] in " \t":
                j += 1
            return j

        while True:
            i = skip(i)
            key = next(
                (
                    k
                    for k in _ATTRIBUTE_KEYS
                    if text.startswith(k, i) and all(a.key != k for a in attributes)
                ),
                None,
            )
            if key is None:
                return None
            start = i
            i = skip(i + len(key))
            value: int | float | str | None = None
            if key in ("max_tokens", "max_chars"):
                m = re.compile(r"=[ \t]*([0-9]{1,10})(?![0-9])").match(text, i)
                if m is None:
                    return None
                value, i = int(m.group(1)), m.end()
            elif key == "temperature":
                m = _FLOAT_CHARS.match(text, i)
                number = _STRTOD_PREFIX.match(m.group(1)) if m else None
                if m is None or number is None:
                    return None
                value, i = float(number.group()), m.end()  # 1e999 is inf, as in C
            elif key in ("capture", "stop_capture"):
                m = re.compile(r'=[ \t]*"([^"\\\r\n\0]*)"').match(text, i)
                if m is not None:
                    value, i = m.group(1), m.end()
                elif key == "capture":
                    value = name
                else:
                    return None
            attributes.append(Attribute(key, value, Span(start, i)))
            i = skip(i)
            if i < len(text) and text[i] == ",":
                i += 1
                continue
            break
        if i >= len(text) or text[i] != "]" or not text.startswith("::=", skip(i + 1)):
            return None
        for attribute in attributes:
            problem = _attribute_problem(attribute)
            if problem is not None:
                self._error("GK112", problem[0], name_start, self.pos, problem[1])
        self.pos = i + 1
        return tuple(attributes)

    def _integer(self) -> None:
        start = self.pos
        i = start
        value = 0
        while i < len(self.text) and self.text[i] in "0123456789":
            value = value * 10 + ord(self.text[i]) - 48
            i += 1
            if value > MAX_INTEGER:
                # xgrammar blames the character after the digit that overflowed
                self._error(
                    "GK110",
                    f"integer `{self.text[start:i]}...` is larger than 10^15",
                    i,
                    i + 1,
                    "repetition bounds and token ids must be at most 10^15",
                )
                while i < len(self.text) and self.text[i] in "0123456789":
                    i += 1
                value = MAX_INTEGER
                break
        self.pos = i
        self._emit("INT", start, i, value)

    # -- driver ----------------------------------------------------------------------------
    def _scan_common(self) -> None:
        """Scan the most frequent tokens with one regular expression, until a token needs care.

        Names not followed by ``[``, literals whose escapes cannot fail, punctuation, short
        integers and whitespace without comments; the token-by-token methods handle the rest.
        Tokens of one spelling share their text and decoded value (decoded once).
        """
        text, pos, tokens = self.text, self.pos, self.tokens
        append, match = tokens.append, _COMMON.match
        names, strings, classes = self._names, self._strings, self._classes
        seq = len(tokens)
        while True:
            m = match(text, pos)
            if m is None:
                break
            kind = m.lastgroup
            value = m[kind]  # type: ignore[index]
            end = m.end()
            pos = end - len(value)
            if kind == "name":
                name = names.get(value)
                if name is None:
                    name = names[value] = _name_entry(value)
                append(GkToken(name[0], name[1], pos, end, name[2], seq))
            elif kind == "punctuation":
                append(GkToken(_COMMON_KINDS[value], value, pos, end, None, seq))
            elif kind == "string":
                string = strings.get(value)
                if string is None:
                    string = strings[value] = (value, decode_plain_literal(value[1:-1]))
                append(GkToken("STRING", string[0], pos, end, string[1], seq))
            elif kind == "assign":
                self.assigns.append(seq)
                append(GkToken("ASSIGN", value, pos, end, None, seq))
            elif kind == "integer":
                append(GkToken("INT", value, pos, end, int(value), seq))
            else:
                if value in classes:
                    char_class = classes[value]
                else:
                    plain = plain_class_value(value)
                    char_class = classes[value] = None if plain is None else (value, (plain, ()))
                if char_class is None:
                    break  # a reversed range: the careful scanner reports it (from `pos`)
                append(GkToken("CLASS", char_class[0], pos, end, char_class[1], seq))
            seq += 1
            pos = end
        self.pos = pos

    def run(self) -> LexResult:
        text = self.text
        while True:
            self._scan_common()
            self._skip_space()
            if self.pos >= len(text):
                break
            c = text[self.pos]
            start = self.pos
            if c == "(":
                if text.startswith("(=", start):
                    self.pos += 2
                    self._emit("LOOKAHEAD", start, self.pos)
                else:
                    self.pos += 1
                    self._emit("LPAR", start, self.pos)
            elif c in _PUNCTUATION:
                self.pos += 1
                self._emit(_PUNCTUATION[c], start, self.pos)
            elif c == ":":
                if text.startswith("::=", start):
                    self.pos += 3
                    self.assigns.append(len(self.tokens))
                    self._emit("ASSIGN", start, self.pos)
                else:
                    self._error(
                        "GK102",
                        "unexpected character `:`",
                        start,
                        start + 1,
                        "a rule is defined with `::=`",
                    )
                    self.pos += 1
            elif c == '"':
                self._string()
            elif c == "[":
                self._char_class()
            elif _NAME.match(c):
                self._name()
            elif c in "0123456789":
                self._integer()
            else:
                shown = c if c.isprintable() and not _INVALID_BYTE.match(c) else repr(c)[1:-1]
                hint = (
                    "literals use double quotes"
                    if c == "'"
                    else "save the grammar as UTF-8"
                    if _INVALID_BYTE.match(c)
                    else "only rules, literals, classes, groups and operators may appear here"
                )
                self._error("GK102", f"unexpected character `{shown}`", start, start + 1, hint)
                self.pos += 1
        self._emit("$END", len(text), len(text))
        rule_names = self._mark_rule_names()
        return LexResult(self.tokens, self.diagnostics, self.comments, rule_names)

    def _mark_rule_names(self) -> list[int]:
        """A name right before ``::=`` is a rule name and must start its line (xgrammar rules).

        Returns the index of each rule name token.
        """
        tokens, text = self.tokens, self.text
        rule_names = []
        for i in self.assigns:
            token = tokens[i]
            if i == 0:
                self._error(
                    "GK109",
                    "`::=` without a rule name before it",
                    token.start,
                    token.end,
                    "write `name ::= ...`",
                )
                continue
            prev = tokens[i - 1]
            if prev.type not in ("IDENT", "MACRO"):
                # xgrammar points at the last token before `::=`; a class ends with its `]`.
                at = prev.end - 1 if prev.type == "CLASS" else prev.start
                self._error(
                    "GK109",
                    f"`::=` must follow a rule name, not `{prev.value}`",
                    at,
                    prev.end,
                    "rule names are made of letters, digits, `_`, `-` and `.`; "
                    "attributes are `name[max_tokens=N, capture]`",
                )
                continue
            if i >= 2 and not _LINE_BREAK.search(text, tokens[i - 2].start, prev.start):
                self._error(
                    "GK109",
                    f"rule name `{prev.payload[0]}` must be the first token on its line",
                    prev.start,
                    prev.end,
                    "start the new rule on a line of its own",
                )
            prev.type = "RULE_NAME"
            rule_names.append(i - 1)
        return rule_names


_LINE_BREAK = re.compile(r"[\r\n]")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)")
_CLASS_ITEM = re.compile(
    r"(\\u....|\\U........|\\.|[^\\])-(\\u....|\\U........|\\.|[^\\])"
    r"|(\\u....|\\U........|\\.|[^\\])",
    re.DOTALL,
)


def _name_entry(name: str) -> tuple[str, str, Any]:
    """``(kind, name, payload)`` of a name token not followed by ``[``."""
    kind = _NAME_KINDS.get(name, "IDENT")
    return kind, name, name == "true" if kind == "BOOL" else (name, ())


def _escaped(match: re.Match[str]) -> str:
    return chr(escapes.decode_escape(match.group(), 0)[0])  # type: ignore[index]


def decode_plain_literal(body: str) -> str:
    """The value of a literal's body whose escapes :data:`_COMMON` accepted."""
    return _ESCAPE.sub(_escaped, body) if "\\" in body else body


def _class_item(item: str) -> int:
    """The code point of one class item: a character, or an escape that cannot fail."""
    if len(item) == 1:
        return ord(item)
    return escapes.decode_escape(item, 0, in_class=True)[0]  # type: ignore[index]


_SMALL_CLASS = 256
"""Classes up to this many characters are paired up directly."""


def plain_class_value(token: str) -> CharClassValue | None:
    """The value of a class token with one-character escapes at most (``None`` if a range is
    reversed), paired up as :meth:`Lexer._class_ranges` pairs them."""
    negated = token.startswith("[^")
    content = token[2 if negated else 1 : -1]
    if "-" not in content and "\\" not in content:
        if len(content) <= _SMALL_CLASS:
            codes = [ord(c) for c in content]
            return CharClassValue(tuple(zip(codes, codes)), negated)
        # a huge class repeats characters: one range object per distinct character (the
        # code points decoded at C speed; a plain class has no surrogates to encode)
        points = memoryview(content.encode("utf-32-le")).cast("I")
        single = {code: (code, code) for code in set(points)}
        return CharClassValue(tuple(map(single.__getitem__, points)), negated)
    ranges = []
    for low_item, high_item, single in _CLASS_ITEM.findall(content):
        if single:
            code = _class_item(single)
            ranges.append((code, code))
            continue
        low, high = _class_item(low_item), _class_item(high_item)
        if low > high:
            return None
        ranges.append((low, high))
    return CharClassValue(tuple(ranges), negated)


def _attribute_problem(attribute: Attribute) -> tuple[str, str] | None:
    """What xgrammar 0.2.8 rejects in a well-formed attribute: ``(message, hint)``."""
    key, value = attribute.key, attribute.value
    if value == "" and key in ("capture", "stop_capture"):
        what = "capture" if key == "capture" else "stop capture"
        return f"the {what} name must not be empty", f'write `{key}="name"`'
    if key == "max_chars" and isinstance(value, int) and value > _MAX_INT32:
        return f"max_chars={value} is too large", f"the limit is {_MAX_INT32}"
    finite = isinstance(value, float) and math.isfinite(value) and 0 <= value <= _MAX_FLOAT32
    if key == "temperature" and not finite:
        return "the temperature must be a finite non-negative number", "write `temperature=0.7`"
    return None


_MAX_FLOAT32 = 3.4028234663852886e38


def _escape_hint(text: str, i: int, in_class: bool) -> str:
    c = text[i + 1] if i + 1 < len(text) else ""
    if c in "dDsSwW" and not in_class:
        return "`\\d`-style escapes are regex syntax; use a class such as `[0-9]`"
    if c == "x":
        return "`\\x` needs at least one hex digit"
    if c in "uU":
        return f"`\\{c}` needs exactly {4 if c == 'u' else 8} hex digits"
    allowed = "\\\" \\' \\? \\\\ \\/ \\a \\b \\e \\f \\n \\r \\t \\v \\0 \\xH.. \\uHHHH \\UHHHHHHHH"
    if in_class:
        allowed += " and \\^ \\$ \\. \\* \\+ \\? \\( \\) \\[ \\] \\{ \\} \\| \\/ \\-"
    return f"valid escapes are {allowed}"


def tokenize(text: str) -> LexResult:
    """Scan ``text`` into tokens, collecting lexical diagnostics instead of stopping."""
    return Lexer(text).run()
