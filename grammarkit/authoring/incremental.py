"""Parsing a document again after an edit, reparsing only the rules whose text changed.

The text is cut into chunks at the lines that start a rule (``name ::=`` or ``name[...] ::=``
first on the line). Each chunk is parsed once per text with the public :func:`~grammarkit.ebnf.
parser.parse`, in a small synthetic text that gives it what a rule needs from the rest of the
grammar: after the chunk, the first line of the next rule (a syntax error at the end of a rule
is reported at the next rule's name) and an empty definition of each rule it references that
is defined elsewhere (so references resolve as in the whole text). The chunks' rules,
comments and diagnostics are then moved to where the chunk stands and put together as the
parser would: diagnostics in its reporting order, the grammar-wide ones (duplicated rules, a
missing root) and the "did you mean" hints computed over the whole text. Rules are moved only
when asked for (:class:`IncrementalParse`): a version with errors often lasts one keystroke.

A chunk boundary counts only where scanning the whole text would be at the same place: the
chunk before it ends with no token running into the boundary (a character class is the only
token that may span lines) and the chunk after it starts with the rule's name. Otherwise the
two chunks are one. The result is exactly :func:`~grammarkit.ebnf.parser.parse`'s (a property
test compares them over random edits); a text with a NUL byte is parsed whole.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property

from grammarkit.diagnostics import MAX_DIAGNOSTICS, Diagnostic, Severity, error
from grammarkit.ebnf import ast
from grammarkit.ebnf.ast import Span
from grammarkit.ebnf.lexer import GkToken, tokenize
from grammarkit.ebnf.parser import ParseResult, parse
from grammarkit.ebnf.suggest import NameSuggester

_NAME_CHARS = r"[A-Za-z0-9_.\-]"
_RULE_START = re.compile(
    rf"[ \t]*(?!(?:true|false)(?!{_NAME_CHARS}))[A-Za-z_.\-]{_NAME_CHARS}*"
    r"(?:\[[^\]\r\n]*\])?[ \t]*::="
)
"""The start of a line that starts a rule: its name (not a boolean), maybe attributes, ``::=``."""

_LINE_BREAK_RULE_START = re.compile(r"(?:\r\n?|\n)(?=" + _RULE_START.pattern + ")")
"""A line break (the lexer's: CR LF, CR or LF) before a line that starts a rule."""

_UNDEFINED = re.compile(r"rule `(.*)` is not defined")


@dataclass(frozen=True)
class Chunk:
    """A run of whole lines that the parser reads apart from the rest: one or more rules."""

    start: int
    """Where it starts in the text."""
    text: str
    rules: tuple[ast.Rule, ...]
    """The rules that parse in it, with spans into the whole text."""


@dataclass(frozen=True)
class _Lexed:
    """What the splitting and the grammar-wide checks need from one chunk's tokens."""

    starts_with_rule: bool
    """Its first token is a rule name (so a rule starts where the chunk does)."""
    runs_to_end: bool
    """A token reaches the chunk's end (a character class left open runs on to a later line)."""
    first_token: ast.Span | None
    """The span the parser gives its first token, if it has one."""
    rule_names: tuple[tuple[str, ast.Span], ...]
    """Each rule name it defines, with the span the parser gives it."""
    references: frozenset[str]
    """Every name it uses as a rule reference (macro arguments included)."""
    diagnostics: tuple[tuple[int, Diagnostic], ...]
    """Its lexical diagnostics with their phase (a rule name's place: 1; the rest: 0), in the
    parser's order."""


@dataclass(frozen=True)
class _ChunkParse:
    """A chunk's share of the parse, with spans for the chunk at some start (kept beside it)."""

    rules: tuple[ast.Rule, ...]
    comments: tuple[ast.Comment, ...]
    regex_macros: tuple[ast.RegexMacro, ...]
    diagnostics: tuple[tuple[int, Diagnostic], ...]
    """``(phase, diagnostic)`` in the parser's order, without the grammar-wide ones."""


class IncrementalParser:
    """Parses successive versions of one document, reusing each rule's parse while its text lasts.

    Parameters
    ----------
    root
        The root rule's name.
    cold_chunks
        When more chunks than this are new (a document opened, replaced or reformatted), the
        text is parsed whole and the chunks' shares are taken from that parse, which is faster
        than parsing them one by one.
    """

    def __init__(self, root: str = "root", cold_chunks: int = 50):
        self.root = root
        self.cold_chunks = cold_chunks
        self._lexed: dict[str, _Lexed] = {}
        self._parsed: dict[_Key, tuple[int, _ChunkParse]] = {}
        self.reparsed = 0
        """How many chunks the last :meth:`update` parsed (the others were reused)."""

    def parse(self, text: str) -> ParseResult:
        """What :func:`~grammarkit.ebnf.parser.parse` returns for ``text`` and the root."""
        return self.update(text).result

    def update(self, text: str) -> IncrementalParse:
        """The parse of ``text``, the next version of the document."""
        self.reparsed = 0
        if "\0" in text:
            return self._whole(text)
        lexed: dict[str, _Lexed] = {}
        bounds = self._chunks(text, lexed)
        self._lexed = lexed
        if len(bounds) > 1:
            try:
                return self._parse_chunks(text, bounds)
            except _TooMany:
                pass
        return self._whole(text)

    def _whole(self, text: str) -> IncrementalParse:
        result = parse(text, self.root)
        self.reparsed = 1
        return IncrementalParse.ready(result, [Chunk(0, text, result.ast.rules)])

    def _parse_chunks(self, text: str, bounds: list[tuple[int, int]]) -> IncrementalParse:
        chunks = [text[start:end] for start, end in bounds]
        infos = [self._lexed[chunk] for chunk in chunks]
        names = dict.fromkeys(name for info in infos for name, _ in info.rule_names)
        defined = frozenset(names)
        last = len(chunks) - 1
        keys = [(chunk, None if k == last else _first_line(chunks[k + 1]),
                 info.references & defined)
                for k, (chunk, info) in enumerate(zip(chunks, infos))]
        known = self._parsed
        missing = sum(key not in known for key in keys)
        if missing > self.cold_chunks:
            whole = self._split_whole(text, bounds, infos, keys)
            if whole is not None:
                return whole
        parsed: dict[_Key, tuple[int, _ChunkParse]] = {}
        placed: list[tuple[_Key, int]] = []
        for key, (start, _) in zip(keys, bounds):
            if key not in parsed:
                entry = known.get(key)
                if entry is None:
                    entry = (start, self._parse_chunk(key, start))
                    self.reparsed += 1
                parsed[key] = entry
            placed.append((key, start))
        self._parsed = parsed
        diagnostics = self._assemble(text, bounds, infos, names, [
            [(phase, _shift_diagnostic(d, start - parsed[key][0]))
             for phase, d in parsed[key][1].diagnostics] for key, start in placed])
        macros = tuple(_shift_expr(macro, start - parsed[key][0], {}) for key, start in placed
                       for macro in parsed[key][1].regex_macros)
        return IncrementalParse(diagnostics, macros,  # type: ignore[arg-type]
                                lambda: _place(placed, parsed, diagnostics))

    # -- chunks ------------------------------------------------------------------------------
    def _lex(self, chunk: str, lexed: dict[str, _Lexed]) -> _Lexed:
        info = lexed.get(chunk) or self._lexed.get(chunk)
        if info is None:
            info = _lex(chunk)
        lexed[chunk] = info
        return info

    def _chunks(self, text: str, lexed: dict[str, _Lexed]) -> list[tuple[int, int]]:
        """``(start, end)`` of each chunk: cut at rule starts where the scanner state allows."""
        cuts = [m.end() for m in _LINE_BREAK_RULE_START.finditer(text)]
        cuts.append(len(text))
        bounds: list[tuple[int, int]] = []
        start = 0
        for k, cut in enumerate(cuts[:-1]):
            before = self._lex(text[start:cut], lexed)
            if before.runs_to_end:
                continue
            after = self._lex(text[cut:cuts[k + 1]], lexed)
            if not after.starts_with_rule:
                continue
            bounds.append((start, cut))
            start = cut
        self._lex(text[start:], lexed)
        bounds.append((start, len(text)))
        return bounds

    def _parse_chunk(self, key: _Key, start: int) -> _ChunkParse:
        """Parse one chunk in its synthetic context, for the chunk at ``start``."""
        chunk, follow, needed = key
        stub = "".join(f'{name} ::= ""\n' for name in sorted(needed))
        if follow is None:  # the last chunk runs to the end of the text: definitions go first
            offset, synthetic = len(stub), stub + chunk
        else:
            offset, synthetic = 0, chunk + follow + ' ""\n' + stub
        result = parse(synthetic, self.root)
        end = offset + len(chunk)
        lexical = self._lexed[chunk].diagnostics
        unmatched = [_shift_diagnostic(d, offset) for _, d in lexical]
        found: list[tuple[int, Diagnostic]] = []
        for d in result.diagnostics:
            if d.code == "GK100":  # too many to see them all here: the caller parses whole
                raise _TooMany
            if d.code in ("GK104", "GK105") or d.span is None:
                continue
            if d in unmatched:
                unmatched.remove(d)
            elif offset <= d.span.start < end or (d.code == "GK101" and d.span.start >= end):
                found.append((5 if d.code == "GK115" else 4, d))
        piece = _ChunkParse(
            tuple(r for r in result.ast.rules if _inside(r.span, offset, end)),
            tuple(c for c in result.ast.comments if _inside(c.span, offset, end)),
            tuple(m for m in result.regex_macros if _inside(m.span, offset, end)),
            (*((phase, _shift_diagnostic(d, offset)) for phase, d in lexical), *found),
        )
        return _shifted(piece, start - offset)

    def _split_whole(self, text: str, bounds: list[tuple[int, int]], infos: list[_Lexed],
                     keys: list[_Key]) -> IncrementalParse | None:
        """Parse the whole text and keep each chunk's share (when most chunks are new)."""
        result = parse(text, self.root)
        if any(d.code == "GK100" for d in result.diagnostics):
            return None  # the diagnostics not shown would be missing from the chunks
        starts = [start for start, _ in bounds]
        owners: dict[int, int] = {}  # a rule's first token: the chunk before reports there
        for k, (info, start) in enumerate(zip(infos, starts)):
            if k > 0 and info.first_token is not None:
                owners[start + info.first_token.start] = k - 1
        rules: list[list[ast.Rule]] = [[] for _ in bounds]
        comments: list[list[ast.Comment]] = [[] for _ in bounds]
        macros: list[list[ast.RegexMacro]] = [[] for _ in bounds]
        for rule in result.ast.rules:
            rules[_owner(starts, rule.span)].append(rule)
        for comment in result.ast.comments:
            comments[_owner(starts, comment.span)].append(comment)
        for macro in result.regex_macros:
            macros[_owner(starts, macro.span)].append(macro)
        lexical = [[_shift_diagnostic(d, start) for _, d in info.diagnostics]
                   for info, start in zip(infos, starts)]
        found: list[list[tuple[int, Diagnostic]]] = [[] for _ in bounds]
        for d in result.diagnostics:
            if d.code in ("GK104", "GK105") or d.span is None:
                continue
            k = _owner(starts, d.span)
            if d in lexical[k]:
                lexical[k].remove(d)
                continue
            if d.code == "GK101":
                k = owners.get(d.span.start, k)
            found[k].append((5 if d.code == "GK115" else 4, d))
        parsed: dict[_Key, tuple[int, _ChunkParse]] = {}
        for k, (key, info, start) in enumerate(zip(keys, infos, starts)):
            parsed[key] = (start, _ChunkParse(
                tuple(rules[k]), tuple(comments[k]), tuple(macros[k]),
                (*((phase, _shift_diagnostic(d, start)) for phase, d in info.diagnostics),
                 *found[k])))
        self._parsed = parsed
        self.reparsed = len(bounds)
        return IncrementalParse.ready(result, [Chunk(start, key[0], tuple(rules[k]))
                                               for k, (key, start) in enumerate(zip(keys, starts))])

    # -- the whole -----------------------------------------------------------------------------
    def _assemble(self, text: str, bounds: list[tuple[int, int]], infos: list[_Lexed],
                  names: dict[str, None], found: list[list[tuple[int, Diagnostic]]]
                  ) -> list[Diagnostic]:
        """The parser's diagnostics: each chunk's, the grammar-wide ones, in its order."""
        by_phase: list[list[Diagnostic]] = [[] for _ in range(6)]
        for phased in found:
            for phase, d in phased:
                by_phase[phase].append(d)
        seen: dict[str, ast.Span] = {}
        for info, (start, _) in zip(infos, bounds):
            for name, span in info.rule_names:
                span = ast.Span(span.start + start, span.end + start)
                first = seen.setdefault(name, span)
                if first is not span:
                    by_phase[2].append(error(
                        "GK104", f"rule `{name}` is defined more than once", span,
                        f"the first definition is at offset {first.start}; rename or merge them "
                        "into one rule with `|`"))
        if self.root not in names:
            first_token = next(
                (ast.Span(info.first_token.start + start, info.first_token.end + start)
                 for info, (start, _) in zip(infos, bounds) if info.first_token is not None),
                ast.Span(len(text), len(text) + 1))
            hint = NameSuggester(names).hint(self.root) or (
                f"define `{self.root} ::= ...`" if names
                else f"a grammar needs at least `{self.root} ::= ...`")
            by_phase[3].append(error(
                "GK105", f"the root rule `{self.root}` is not defined", first_token, hint))
        ordered = [d for phase in by_phase for d in phase]
        suggester = NameSuggester(names)
        shown = [_rehint(d, suggester) for d in ordered[:MAX_DIAGNOSTICS]]
        if len(ordered) > MAX_DIAGNOSTICS:
            shown.append(Diagnostic(
                "GK100", Severity.NOTE, f"{len(ordered) - MAX_DIAGNOSTICS} more diagnostics not "
                "shown", None, "fix the errors above first; later ones are often consequences"))
        return shown


class IncrementalParse:
    """One version's parse: its diagnostics at once, its rules when first asked for.

    A version with errors is often only a step of typing; leaving its rules where they were
    parsed until something asks for them (the lint rules, an editor's request) spares moving
    them twice when the next edit puts them back.
    """

    def __init__(self, diagnostics: list[Diagnostic], regex_macros: tuple[ast.RegexMacro, ...],
                 place: Callable[[], tuple[ParseResult, list[Chunk]]]):
        self.diagnostics = diagnostics
        """What :attr:`~grammarkit.ebnf.parser.ParseResult.diagnostics` holds."""
        self.regex_macros = regex_macros
        """Every ``Regex(...)`` call, at its place (to check the patterns)."""
        self._place = place

    @classmethod
    def ready(cls, result: ParseResult, chunks: list[Chunk]) -> IncrementalParse:
        """A parse computed whole."""
        return cls(result.diagnostics, result.regex_macros, lambda: (result, chunks))

    @cached_property
    def _placed(self) -> tuple[ParseResult, list[Chunk]]:
        return self._place()

    @property
    def result(self) -> ParseResult:
        """Exactly what :func:`~grammarkit.ebnf.parser.parse` returns."""
        return self._placed[0]

    @property
    def chunks(self) -> list[Chunk]:
        """The chunks of the text, in order, with their rules in place."""
        return self._placed[1]


def _place(placed: list[tuple[_Key, int]], parsed: dict[_Key, tuple[int, _ChunkParse]],
           diagnostics: list[Diagnostic]) -> tuple[ParseResult, list[Chunk]]:
    """Move each chunk's parse to where the chunk stands, and put the grammar together.

    Moved parses replace the kept ones in ``parsed`` (the next version starts from them).
    """
    pieces = []
    for key, start in placed:
        base, piece = parsed[key]
        if base != start:
            piece = _shifted(piece, start - base)
            parsed[key] = (start, piece)
        pieces.append(piece)
    grammar = ast.GrammarAST(
        tuple(rule for piece in pieces for rule in piece.rules),
        tuple(comment for piece in pieces for comment in piece.comments))
    macros = tuple(macro for piece in pieces for macro in piece.regex_macros)
    chunks = [Chunk(start, key[0], piece.rules) for (key, start), piece in zip(placed, pieces)]
    return ParseResult(grammar, diagnostics, macros), chunks


_Key = tuple[str, str | None, frozenset[str]]
"""A chunk's parse depends on its text, the first line of the next rule (``None`` for the last
chunk) and which of the names it uses are defined elsewhere."""

def _inside(span: ast.Span | None, start: int, end: int) -> bool:
    return span is not None and start <= span.start < end


def _owner(starts: list[int], span: ast.Span | None) -> int:
    """The chunk where ``span`` starts (the last one for the end of the text)."""
    return max(bisect_right(starts, span.start if span is not None else 0) - 1, 0)


class _TooMany(Exception):
    """A chunk has more diagnostics than the parser shows."""


def _rehint(d: Diagnostic, suggester: NameSuggester) -> Diagnostic:
    """An undefined reference's hint, from the names of the whole text."""
    if d.code != "GK103":
        return d
    match = _UNDEFINED.fullmatch(d.message)
    if match is None:
        return d
    name = match[1]
    return replace(d, hint=suggester.hint(name) or f"define it with `{name} ::= ...`")


def _first_line(chunk: str) -> str:
    """The start of a chunk up to the ``::=`` of its rule (what the previous chunk sees next)."""
    match = _RULE_START.match(chunk)
    assert match is not None
    return match.group()


def _token_span(token: GkToken) -> ast.Span:
    return ast.Span(token.start, max(token.end, token.start + 1))


def _lex(chunk: str) -> _Lexed:
    lexed = tokenize(chunk)
    tokens = lexed.tokens[:-1]  # without $END
    phased = [(1 if d.code == "GK109" else 0, d) for d in lexed.diagnostics]
    phased.sort(key=lambda item: (item[0], item[1].span.start if item[1].span else 0))
    return _Lexed(
        starts_with_rule=bool(tokens) and tokens[0].type == "RULE_NAME",
        runs_to_end=any(token.end >= len(chunk) for token in tokens[-1:]),
        first_token=_token_span(tokens[0]) if tokens else None,
        rule_names=tuple((t.payload[0], _token_span(t)) for t in tokens if t.type == "RULE_NAME"),
        references=frozenset(t.payload[0] for t in tokens if t.type == "IDENT"),
        diagnostics=tuple(phased),
    )


# -- shifting a chunk's parse to where the chunk stands -------------------------------------------
def _shifted(piece: _ChunkParse, delta: int) -> _ChunkParse:
    if delta == 0:
        return piece
    memo: dict[int, ast.Expr] = {}
    rules = tuple(_shift_rule(rule, delta, memo) for rule in piece.rules)
    return _ChunkParse(
        rules,
        tuple(_shift_comment(c, delta) for c in piece.comments),
        tuple(memo[id(m)] for m in piece.regex_macros),  # type: ignore[misc]
        tuple((phase, _shift_diagnostic(d, delta)) for phase, d in piece.diagnostics),
    )


def _shift_span(span: ast.Span | None, delta: int) -> ast.Span | None:
    return None if span is None else ast.Span(span.start + delta, span.end + delta)


def _shift_diagnostic(d: Diagnostic, delta: int) -> Diagnostic:
    return d if d.span is None or delta == 0 else replace(d, span=_shift_span(d.span, delta))


def _shift_comment(comment: ast.Comment, delta: int) -> ast.Comment:
    return ast.Comment(comment.text, ast.Span(comment.span.start + delta,
                                              comment.span.end + delta))


def _shift_rule(rule: ast.Rule, delta: int, memo: dict[int, ast.Expr]) -> ast.Rule:
    return ast.Rule(
        rule.name,
        _shift_expr(rule.body, delta, memo),
        None if rule.lookahead is None else _shift_expr(rule.lookahead, delta, memo),
        tuple(ast.Attribute(a.key, a.value, _shift_span(a.span, delta)) for a in rule.attributes),
        _shift_span(rule.span, delta),
        _shift_span(rule.name_span, delta),
    )


def _shift_expr(expr: ast.Expr, delta: int, memo: dict[int, ast.Expr]) -> ast.Expr:
    """``expr`` with every span moved by ``delta``; macros are remembered in ``memo`` by id."""
    kind = type(expr)
    old = expr.span
    span = None if old is None else Span(old.start + delta, old.end + delta)
    if kind is ast.Sequence:
        return ast.Sequence(tuple([_shift_expr(item, delta, memo)
                                   for item in expr.items]), span)  # type: ignore[union-attr]
    if kind is ast.Choice:
        return ast.Choice(tuple([_shift_expr(item, delta, memo)
                                 for item in expr.alternatives]), span)  # type: ignore[union-attr]
    if kind is ast.Repeat:
        return ast.Repeat(_shift_expr(expr.item, delta, memo),  # type: ignore[union-attr]
                          expr.min, expr.max, expr.op, span)  # type: ignore[union-attr]
    if kind is ast.Literal:
        return ast.Literal(expr.value, span)  # type: ignore[union-attr]
    if kind is ast.RuleRef:
        return ast.RuleRef(expr.name, span)  # type: ignore[union-attr]
    if kind is ast.CharClass:
        return ast.CharClass(expr.ranges, expr.negated, span)  # type: ignore[union-attr]
    moved = replace(expr, span=span)
    memo[id(expr)] = moved
    return moved
