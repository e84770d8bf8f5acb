"""EBNF text to :class:`~grammarkit.ebnf.ast.GrammarAST`, with every error as a located diagnostic.

Pipeline: :mod:`grammarkit.ebnf.plain_text` reads the plain rules straight from the text; the
rest (regions of rules with comments, macros, lookaheads, attributes or errors; the whole text
when lexing finds a problem) :mod:`grammarkit.ebnf.lexer` scans, and ``syntax.lark`` (an LALR
grammar) parses each of its rule definitions (:mod:`grammarkit.ebnf.descent` reads the plain
ones among them); the reductions build AST nodes, and checks find what the grammar's shape
cannot (repetition bounds, macro arguments, undefined references).

Diagnostics are returned in the order xgrammar 0.2.8 would meet them (lexical errors, then rule
names, then the rules in order; within each, by offset in the text), so the first one is the error xgrammar reports, at the same
line and column.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise
from operator import attrgetter, itemgetter
from typing import Any, ClassVar

from grammarkit._gc import paused_gc
from grammarkit.diagnostics import MAX_DIAGNOSTICS, Diagnostic, Severity, error
from grammarkit.ebnf import ast, descent, lalr, plain_text
from grammarkit.ebnf.ast import RegexMacro
from grammarkit.ebnf.escapes import quote_string
from grammarkit.ebnf.lalr import EndOfInput, SyntaxErrorAt
from grammarkit.ebnf.lexer import CharClassValue, GkToken, LexResult, tokenize
from grammarkit.ebnf.plain_text import Region
from grammarkit.ebnf.suggest import NameSuggester

MAX_NESTING = 1000
"""Groups nested deeper than this are an error, as in xgrammar."""

_TOKEN_NAMES = {
    "RULE_NAME": "a rule name",
    "IDENT": "a rule name",
    "MACRO": "a macro",
    "BOOL": "a boolean",
    "STRING": "a string literal",
    "CLASS": "a character class",
    "INT": "an integer",
    "ASSIGN": "`::=`",
    "LPAR": "`(`",
    "LOOKAHEAD": "`(=`",
    "RPAR": "`)`",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "PIPE": "`|`",
    "COMMA": "`,`",
    "STAR": "`*`",
    "PLUS": "`+`",
    "QMARK": "`?`",
    "EQUAL": "`=`",
    "$END": "the end of the rule",
}

_ELEMENT_START = {"STRING", "CLASS", "IDENT", "MACRO", "LPAR"}


_NAME, _NAME_SPAN, _LOOKAHEAD = attrgetter("name"), attrgetter("name_span"), attrgetter("lookahead")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


@dataclass(frozen=True)
class ParseResult:
    """The rules that parsed (possibly partial when there are errors) and all diagnostics."""

    ast: ast.GrammarAST
    diagnostics: list[Diagnostic]
    regex_macros: tuple[RegexMacro, ...] = ()
    """Every ``Regex(...)`` call in the parsed rules, for checks of the pattern."""

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


class _Problems:
    """Diagnostics with xgrammar's reporting order: (phase, detection token index).

    A hint that is costly to find (a close rule name) is given as a function, called only for
    the diagnostics that are shown.
    """

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int, Diagnostic, Callable[[], str] | None]] = []

    def add(
        self,
        phase: int,
        index: int,
        diagnostic: Diagnostic,
        hint: Callable[[], str] | None = None,
    ) -> None:
        self.items.append((phase, index, len(self.items), diagnostic, hint))

    def sorted(self) -> list[Diagnostic]:
        shown = sorted(self.items, key=lambda item: item[:3])
        ordered = [
            d if hint is None else replace(d, hint=hint())
            for *_, d, hint in shown[:MAX_DIAGNOSTICS]
        ]
        if len(shown) <= MAX_DIAGNOSTICS:
            return ordered
        more = len(shown) - MAX_DIAGNOSTICS
        note = Diagnostic(
            "GK100",
            Severity.NOTE,
            f"{more} more diagnostics not shown",
            None,
            "fix the errors above first; later ones are often consequences",
        )
        return [*ordered, note]


@lru_cache(maxsize=1)
def _parser() -> lalr.Parser:
    return lalr.parser(_RuleBuilder._handlers)


def _span(token: GkToken) -> ast.Span:
    return ast.Span(token.start, max(token.end, token.start + 1))


def parse(text: str, root: str = "root", *, lazy: bool = False) -> ParseResult:
    """Parse dialect ``text``; ``root`` names the rule a derivation starts from.

    With ``lazy``, the rules of a text certified plain (:func:`plain_text.read`), when
    ``root`` likely reaches few of them first, have their bodies read when first used; the
    diagnostics and the tree are the same.
    """
    with paused_gc():
        return _parse(text, root, lazy)


def _parse(text: str, root: str, lazy: bool) -> ParseResult:
    problems = _Problems()
    lexed = _lex(text, root, lazy)
    for d in lexed.diagnostics:
        phase = 1 if d.code == "GK109" else 0
        problems.add(phase, d.span.start if d.span else 0, d)
    rule_pieces: list[ast.Rule | list[tuple[list[GkToken], GkToken]]] = []
    definitions: list[tuple[str, ast.Span]] = []  # each rule name and where it is
    read_rules = _LexedRegion not in map(type, lexed.pieces)
    # every rule read from the text: maps at C speed do what the loops do
    if read_rules:
        rule_pieces = lexed.pieces  # type: ignore[assignment]
        definitions = list(zip(map(_NAME, rule_pieces), map(_NAME_SPAN, rule_pieces)))
    for read in () if read_rules else lexed.pieces:
        if isinstance(read, ast.Rule):
            definitions.append((read.name, read.name_span))  # type: ignore[arg-type]
            rule_pieces.append(read)
            continue
        tokens, positions = read.tokens, read.rule_names
        if read.region.stop is not None:  # the region ends with the next rule's name and `::=`
            tokens = tokens[:-2]  # that name, not `$END`, ends the token list (and follows)
            positions = positions[:-1]
        definitions.extend((tokens[i].payload[0], _span(tokens[i])) for i in positions)
        rule_pieces.append(_split_rules(tokens, problems, positions))

    names = _rule_names(definitions, lexed.first, root, problems)
    suggester = NameSuggester(names)
    for reference in lexed.references:
        if reference.name not in names:
            assert reference.span is not None
            _undefined(problems, suggester, reference.span.start, reference.name, reference.span)
    rules: list[ast.Rule] = rule_pieces if read_rules else []  # type: ignore[assignment]
    regex_macros: list[ast.RegexMacro] = []
    for piece in () if read_rules else rule_pieces:
        if isinstance(piece, ast.Rule):
            rules.append(piece)
            continue
        for chunk, follower in piece:
            builder = _RuleBuilder(chunk, follower, names, suggester, problems)
            built = builder.build()
            if built is not None:
                rules.append(built)
                if builder.macros:
                    macros = builder.macros.values()
                    regex_macros.extend(m for m in macros if isinstance(m, ast.RegexMacro))
    for rule in rules if any(map(_LOOKAHEAD, rules)) else ():
        if rule.lookahead is not None:
            problem = _lookahead_problem(rule.lookahead)
            if problem is not None:
                problems.add(
                    5,
                    0,
                    error(
                        "GK115",
                        problem,
                        rule.lookahead.span,
                        "a lookahead is one sequence of plain elements; "
                        "move alternatives into a helper rule",
                    ),
                )
    comments = tuple(ast.Comment(t, s) for t, s in lexed.comments)
    grammar = ast.GrammarAST(tuple(rules), comments)
    return ParseResult(grammar, problems.sorted(), tuple(regex_macros))


@dataclass
class _LexedRegion:
    """The tokens of a region of the text (offsets into the whole text) and the indexes of
    its ``RULE_NAME`` tokens."""

    region: Region
    tokens: list[GkToken]
    rule_names: list[int]


@dataclass
class _Lexed:
    """A text as rules read straight from the text and regions lexed with care, in order."""

    pieces: list[ast.Rule | _LexedRegion]
    references: list[ast.RuleRef]
    """The references in the rules read straight from the text."""
    first: ast.Span
    """Where the text's first token is."""
    comments: list[tuple[str, ast.Span]]
    diagnostics: list[Diagnostic]


def _lex(text: str, root: str, lazy: bool) -> _Lexed:
    """Read the plain rules of ``text`` without tokens (:mod:`~grammarkit.ebnf.plain_text`)
    and lex the rest, region by region; the whole text at once if lexing finds a problem, so
    that lexical diagnostics and where rules start are exactly the whole text's."""
    if "\0" not in text:  # a NUL byte ends the text: the lexer knows what that means
        pieces: list[ast.Rule | _LexedRegion] = []
        reading = plain_text.read(text, lazy_from=root if lazy else None)
        comments = list(reading.comments)
        if reading.pieces and Region not in map(type, reading.pieces):  # no region: as read
            rules: list[Any] = reading.pieces
            return _Lexed(rules, reading.references, rules[0].name_span, comments, [])
        for piece in reading.pieces:
            if isinstance(piece, ast.Rule):
                pieces.append(piece)
                continue
            lexed = _lex_region(text, piece)
            if lexed is None:
                break
            pieces.append(_LexedRegion(piece, lexed.tokens, lexed.rule_names))
            comments.extend(lexed.comments)
        else:
            if reading.comments and len(comments) > len(reading.comments):
                comments.sort(key=lambda comment: comment[1].start)  # the regions' in between
            first = pieces[0] if pieces else None
            if isinstance(first, ast.Rule):
                span: ast.Span = first.name_span  # type: ignore[assignment]
            else:
                span = _span(first.tokens[0]) if first else ast.Span(0, 1)
            return _Lexed(pieces, reading.references, span, comments, [])
    lexed = tokenize(text)
    region = _LexedRegion(Region(0, None), lexed.tokens, lexed.rule_names)
    return _Lexed([region], [], _span(lexed.tokens[0]), lexed.comments, lexed.diagnostics)


def _lex_region(text: str, region: Region) -> LexResult | None:
    """The tokens of a region, or ``None`` if lexing it alone finds a problem (whether or not
    the whole text has it: the region may end inside an unterminated class, say)."""
    base, stop = region.start, region.stop
    lexed = tokenize(text[base:stop])
    if lexed.diagnostics:
        return None
    tokens = lexed.tokens
    if stop is not None and (
            len(tokens) < 3 or tokens[-3].type != "RULE_NAME" or tokens[-2].type != "ASSIGN"):
        return None
    for token in tokens:
        token.start += base
        token.end += base
        payload = token.payload
        if token.type == "CLASS" and payload[1]:  # the parser's diagnostics of the class
            token.payload = (payload[0], [replace(d, span=_moved(d.span, base))
                                          for d in payload[1]])
        elif token.type in ("IDENT", "RULE_NAME") and payload[1]:  # attributes
            attributes = tuple(replace(a, span=_moved(a.span, base)) for a in payload[1])
            token.payload = (payload[0], attributes)
    if lexed.comments:
        lexed.comments = [(comment, ast.Span(span.start + base, span.end + base))
                          for comment, span in lexed.comments]
    return lexed


def _moved(span: ast.Span | None, offset: int) -> ast.Span | None:
    return None if span is None else ast.Span(span.start + offset, span.end + offset)


def _rule_names(
    definitions: list[tuple[str, ast.Span]], first: ast.Span, root: str, problems: _Problems
) -> dict[str, int]:
    """Where each rule name is first defined, of ``definitions`` (every rule name and its
    span, in order); ``first``: where the text's first token is."""
    # without duplicates, one C-speed pass; with them, each later definition is reported
    names = dict(zip(map(_FIRST, definitions), map(_FIRST, map(_SECOND, definitions))))
    duplicated = len(names) < len(definitions)
    if duplicated:
        names = {}
    for name, span in definitions if duplicated else ():
        if name in names:
            problems.add(
                2,
                span.start,
                error(
                    "GK104",
                    f"rule `{name}` is defined more than once",
                    span,
                    f"the first definition is at offset {names[name]}; rename or merge them "
                    "into one rule with `|`",
                ),
            )
        else:
            names[name] = span.start
    if root not in names:
        hint = NameSuggester(names).hint(root) or (
            f"define `{root} ::= ...`" if names else f"a grammar needs at least `{root} ::= ...`"
        )
        problems.add(3, 0, error("GK105", f"the root rule `{root}` is not defined", first, hint))
    return names


def _undefined(problems: _Problems, suggester: NameSuggester, index: int, name: str,
               span: ast.Span) -> None:
    """GK103 for a reference to rule ``name``, which is not defined."""

    def hint() -> str:
        return suggester.hint(name) or f"define it with `{name} ::= ...`"

    problems.add(4, index, error("GK103", f"rule `{name}` is not defined", span), hint)


def _lookahead_problem(expr: ast.Expr) -> str | None:
    """What xgrammar 0.2.8 rejects in a lookahead after parsing (it names no position)."""
    if isinstance(expr, ast.Choice):
        return "alternatives `|` directly inside a lookahead are not supported"
    if (isinstance(expr, ast.Literal) and not expr.value) or expr == ast.Sequence(()):
        return "a lookahead must not be the empty string"
    kinds = {ast.TagDispatch: "TagDispatch", ast.RegexMacro: "Regex", ast.Substring: "Substring"}
    for kind, name in kinds.items():
        if isinstance(expr, kind):
            return f"{name} cannot stand alone in a lookahead"
    return None


def _split_rules(
    tokens: list[GkToken], problems: _Problems, positions: list[int] | None = None
) -> list[tuple[list[GkToken], GkToken]]:
    """Split the token stream into rule definitions, each with the token that follows it.

    The last token is ``$END``, or the name of the rule after these (not split off).
    ``positions``: the indexes of the other ``RULE_NAME`` tokens, if known.
    """
    if positions is not None and positions and positions[0] == 0:
        bounds = [*positions, len(tokens) - 1]
        return [(tokens[a:b], tokens[b]) for a, b in pairwise(bounds)]
    chunks: list[tuple[list[GkToken], GkToken]] = []
    current: list[GkToken] | None = None
    for token in tokens:
        if token.type in ("RULE_NAME", "$END"):
            if current:
                chunks.append((current, token))
            if token.type == "$END":
                break
            current = [token]
        elif current is None:
            problems.add(
                4,
                token.start,
                error(
                    "GK101",
                    f"expected a rule definition, found `{token.value}`",
                    _span(token),
                    "every definition starts a line with `name ::=`",
                ),
            )
            current = []  # the rest up to the next rule name is part of this error
        else:
            current.append(token)
    return chunks


class _RuleBuilder:
    """Parses one rule definition and builds its AST node."""

    def __init__(
        self,
        tokens: list[GkToken],
        follower: GkToken,
        names: dict[str, int],
        suggester: NameSuggester,
        problems: _Problems,
    ):
        self.tokens = tokens
        self.follower = follower
        self.names = names
        self.suggester = suggester
        self.problems = problems
        self.macros: dict[int, ast.Expr] = {}
        # what the descent reader saw, checked when it reads the whole rule
        self.references: list[GkToken] = []
        self.bounds: list[tuple[GkToken, GkToken]] = []
        self.class_problems: list[GkToken] = []

    def _add(
        self, index: int, code: str, message: str, span: ast.Span, hint: str | None = None
    ) -> None:
        self.problems.add(4, index, error(code, message, span, hint))

    def build(self) -> ast.Rule | None:
        rule: ast.Rule | None = descent.read_rule(self.tokens, self)
        if rule is not None:
            self._check_plain()
            return rule
        # not a plain rule: the LALR tables decide, and explain errors
        end = len(self.tokens)
        kinds = [token.type for token in self.tokens]
        if kinds.count("LPAR") > MAX_NESTING and not self._check_nesting():
            return None
        macro_error = self._parse_macros() if "MACRO" in kinds else None
        try:
            rule = _parser().parse(self.tokens, "rule", self)
        except SyntaxErrorAt as exc:
            if macro_error is None or self._error_seq(exc) < macro_error:
                self._syntax_error(exc)
        self._check_tokens()
        for token in self.tokens[:end]:
            if token.type == "CLASS" and token.payload[1]:
                for d in token.payload[1]:
                    self.problems.add(4, token.start, d)
        return rule

    def _check_plain(self) -> None:
        """What :meth:`_check_tokens` and the class checks find, for a rule the descent reader
        read: only references, ``{m,n}`` bounds and classes can be wrong in it."""
        names = self.names
        for token in self.references:
            if token.payload[0] not in names:
                self._undefined(token.start, token.payload[0], _span(token))
        for low, bound in self.bounds:
            self._check_bound(low, bound)
        for token in self.class_problems:
            for d in token.payload[1]:
                self.problems.add(4, token.start, d)

    def _check_bound(self, low: GkToken, bound: GkToken) -> None:
        """The upper bound of ``{low,bound}``: an integer not below ``low``, or ``-1``."""
        if bound.type == "INT":
            if bound.payload < low.payload:
                self._add(
                    bound.start,
                    "GK110",
                    f"repetition bounds are reversed: {low.payload} > {bound.payload}",
                    _span(bound),
                    f"write `{{{bound.payload},{low.payload}}}`",
                )
        elif bound.type == "IDENT" and bound.value != "-1":
            self._add(
                bound.start,
                "GK101",
                f"expected an integer upper bound, found `{bound.value}`",
                _span(bound),
                "write `{m,n}`, or `{m,}` for no upper bound",
            )

    def _parse_macros(self) -> int | None:
        """Parse and check each macro call on its own, as xgrammar does before reading on.

        Returns the token index of the first syntax error inside a macro call, if any.
        """
        tokens = self.tokens
        k = 0
        while k < len(tokens):
            if tokens[k].type != "MACRO" or k + 1 == len(tokens) or tokens[k + 1].type != "LPAR":
                k += 1
                continue
            depth = 0
            stop = len(tokens)
            for j in range(k + 1, len(tokens)):
                if tokens[j].type in ("LPAR", "LOOKAHEAD"):
                    depth += 1
                elif tokens[j].type == "RPAR":
                    depth -= 1
                    if depth == 0:
                        stop = j + 1
                        break
            try:
                call = _parser().parse(tokens[k:stop], "macro_call", self)
            except SyntaxErrorAt as exc:
                if exc.token.type == "$END" and stop < len(tokens):
                    exc.token = tokens[stop]  # the call ended early: blame what follows
                self._syntax_error(exc)
                return self._error_seq(exc)
            self.macros[tokens[k].seq] = call
            k = stop
        return None

    # -- checks on the token stream --------------------------------------------------------
    def _check_nesting(self) -> bool:
        """Groups and argument tuples share xgrammar's limit of 1000 open parentheses."""
        depth = 0
        counted: list[bool] = []  # per open parenthesis: does it count towards the limit?
        for k, token in enumerate(self.tokens):
            if token.type == "LPAR":
                is_call = k > 0 and self.tokens[k - 1].type == "MACRO"
                counted.append(not is_call)
                if not is_call:
                    depth += 1
                    if depth > MAX_NESTING:
                        self._add(
                            token.start,
                            "GK111",
                            f"parentheses are nested more than {MAX_NESTING} levels deep",
                            _span(self.tokens[k - 1]),
                            "flatten the expression into named rules",
                        )
                        return False
            elif token.type == "LOOKAHEAD":
                counted.append(False)
            elif token.type == "RPAR" and counted:
                depth -= counted.pop()
        return True

    def _check_tokens(self) -> None:
        """Undefined rule references and non-integer bounds, found on the token stream.

        Checked here rather than on the tree so they are found even in a rule with a syntax
        error further on, as xgrammar (which reads left to right) finds them. Rule names in
        macro arguments are checked with the macro.
        """
        tokens = self.tokens
        macro_depth = 0
        in_braces = False
        for k, token in enumerate(tokens):
            kind = token.type
            if kind == "LPAR" and (macro_depth or (k > 0 and tokens[k - 1].type == "MACRO")):
                macro_depth += 1
            elif kind == "RPAR" and macro_depth:
                macro_depth -= 1
            elif kind == "LBRACE":
                in_braces = True
            elif kind == "RBRACE":
                in_braces = False
            elif kind == "INT" and in_braces and k >= 3 and tokens[k - 1].type == "COMMA":
                if tokens[k - 2].type == "INT":
                    self._check_bound(tokens[k - 2], token)
            elif kind == "IDENT" and not macro_depth and in_braces:
                if k >= 3 and tokens[k - 1].type == "COMMA":
                    self._check_bound(tokens[k - 2], token)
            elif kind == "IDENT" and not macro_depth:
                name = token.payload[0]
                if name not in self.names:
                    self._undefined(token.start, name, _span(token))

    def _undefined(self, index: int, name: str, span: ast.Span) -> None:
        _undefined(self.problems, self.suggester, index, name, span)

    def _error_seq(self, exc: SyntaxErrorAt) -> int:
        token = exc.token
        return self.follower.seq if isinstance(token, EndOfInput) else token.seq

    def _syntax_error(self, exc: SyntaxErrorAt) -> int:
        token = exc.token
        if token.type == "$END":
            # xgrammar reports the position of whatever follows the rule: the next rule's name
            # or the end of the text.
            follower = self.follower
            index = follower.start
            span = _span(follower)
            found = (
                f"the next rule `{follower.value}`"
                if follower.type == "RULE_NAME"
                else "the end of the grammar"
            )
            end = len(self.tokens)
        else:
            index = token.start
            span = _span(token)
            found = f"`{token.value}`" if token.value else _TOKEN_NAMES.get(token.type, token.type)
            end = token.seq - self.tokens[0].seq
        expected = sorted({_TOKEN_NAMES.get(e, e) for e in exc.expected})
        message, hint = _explain_syntax(found, expected, exc, self.tokens, end)
        self._add(index, "GK101", message, span, hint)
        return end

    # -- reductions to AST nodes -----------------------------------------------------------
    def _rule(self, values: list[Any], start: int, end: int) -> ast.Rule:
        name_token: GkToken = values[0]
        lookahead = values[3] if len(values) > 3 else None
        name, attributes = name_token.payload
        span = ast.Span(start, end)
        return ast.Rule(name, values[2], lookahead, attributes, span, _span(name_token))

    def _lookahead(self, values: list[Any], start: int, end: int) -> ast.Expr:
        return values[1]

    def _choices(self, values: list[Any], start: int, end: int) -> ast.Expr:
        alternatives = tuple(v for v in values if not isinstance(v, GkToken))
        if len(alternatives) == 1:
            return alternatives[0]
        return ast.Choice(alternatives, ast.Span(start, end))

    def _sequence(self, values: list[Any], start: int, end: int) -> ast.Expr:
        if len(values) == 1:
            return values[0]
        return ast.Sequence(tuple(values), ast.Span(start, end))

    def _item(self, values: list[Any], start: int, end: int) -> ast.Expr:
        if len(values) == 1:
            return values[0]
        element, (low, high, op) = values
        return ast.Repeat(element, low, high, op, ast.Span(start, end))

    def _star(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        return 0, None, "*"

    def _plus(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        return 1, None, "+"

    def _optional(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        return 0, 1, "?"

    def _exactly(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        return values[1].payload, values[1].payload, "{}"

    def _at_least(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        return values[1].payload, None, "{}"

    def _between(self, values: list[Any], start: int, end: int) -> tuple[int, int | None, str]:
        low: int = values[1].payload
        bound: GkToken = values[3]
        if bound.type == "IDENT":  # `-1`, or a name already reported by _check_tokens
            return low, None, "{}"
        high: int = bound.payload  # reversed bounds are reported by _check_tokens
        return min(low, high), max(low, high), "{}"

    def _bound(self, values: list[Any], start: int, end: int) -> GkToken:
        return values[0]

    def _empty_group(self, values: list[Any], start: int, end: int) -> ast.Expr:
        return ast.Sequence((), ast.Span(start, end))

    def _group(self, values: list[Any], start: int, end: int) -> ast.Expr:
        return values[1]

    def _string(self, values: list[Any], start: int, end: int) -> ast.Expr:
        token: GkToken = values[0]
        return ast.Literal(token.payload, ast.Span(token.start, token.end))  # never empty

    def _char_class(self, values: list[Any], start: int, end: int) -> ast.Expr:
        token: GkToken = values[0]
        value: CharClassValue = token.payload[0]
        return ast.CharClass(value.ranges, value.negated, ast.Span(token.start, token.end))

    def _rule_ref(self, values: list[Any], start: int, end: int) -> ast.Expr:
        token: GkToken = values[0]
        return ast.RuleRef(token.payload[0], ast.Span(token.start, token.end))

    # -- macros ------------------------------------------------------------------------------
    def _value(self, values: list[Any], start: int, end: int) -> Any:
        value = values[0]
        if isinstance(value, (_Tuple, _Scalar)):
            return value
        return _Scalar(value.type, value.payload, value)

    def _name(self, values: list[Any], start: int, end: int) -> Any:
        token: GkToken = values[0]
        return _Scalar("IDENT", token.payload[0], token)

    def _tuple(self, values: list[Any], start: int, end: int) -> Any:
        return _Tuple([v for v in values if isinstance(v, (_Scalar, _Tuple))])

    def _named_arg(self, values: list[Any], start: int, end: int) -> Any:
        return (values[0].value, values[2])

    def _positional_arg(self, values: list[Any], start: int, end: int) -> Any:
        return (None, values[0])

    def _macro_args(self, values: list[Any], start: int, end: int) -> Any:
        return [v for v in values if isinstance(v, tuple)]

    def _macro(self, values: list[Any], start: int, end: int) -> ast.Expr:
        return values[0]

    def _macro_call(self, values: list[Any], start: int, end: int) -> ast.Expr:
        name_token: GkToken = values[0]
        if name_token.seq in self.macros:
            return self.macros[name_token.seq]
        lpar: GkToken = values[1]
        rpar: GkToken = values[-1]
        args = values[2] if len(values) == 4 else []
        positional = [v for k, v in args if k is None]
        named: dict[str, Any] = {}
        for k, v in args:
            if k is not None:
                named[k] = v
        span = ast.Span(start, end)
        macro = _Macro(self, name_token.payload[0], positional, named, _span(lpar), rpar.start, span)
        return macro.build()

    _handlers: ClassVar[dict[str, Callable[[_RuleBuilder, list[Any], int, int], Any]]] = {}


@dataclass
class _Scalar:
    kind: str  # STRING | INT | BOOL | IDENT
    value: Any
    token: GkToken


@dataclass
class _Tuple:
    items: list[Any]


class _MacroError(Exception):
    pass


class _Macro:
    """Checks one macro call's arguments with xgrammar's rules and messages."""

    def __init__(
        self,
        builder: _RuleBuilder,
        name: str,
        positional: list[Any],
        named: dict[str, Any],
        at: ast.Span,
        index: int,
        span: ast.Span,
    ):
        self.builder = builder
        self.name = name
        self.positional = positional
        self.named = named
        self.at = at
        self.seq = index
        self.span = span

    def fail(self, message: str, hint: str | None = None) -> _MacroError:
        self.builder._add(self.seq, "GK112", message, self.at, hint)
        return _MacroError(message)

    def build(self) -> ast.Expr:
        try:
            return getattr(self, "_" + self.name.lower())()
        except _MacroError:
            return ast.Sequence((), self.span)

    def _only_named(self, allowed: set[str]) -> None:
        for key in self.named:
            if key not in allowed:
                options = ", ".join(sorted(allowed)) or "none"
                raise self.fail(
                    f"unknown named argument `{key}` for {self.name}",
                    f"{self.name} accepts: {options}",
                )

    def _rule_name(self, value: Any) -> str:
        if not (isinstance(value, _Scalar) and value.kind == "IDENT"):
            raise self.fail("rule reference must be a rule name", 'write `("tag", rule_name)`')
        name: str = value.value
        if name not in self.builder.names:
            # xgrammar reports a macro's errors at its `(`; the span runs on to the name.
            self.builder._undefined(self.seq, name, ast.Span(self.at.start, value.token.end))
            raise _MacroError(name)
        return name

    def _bool(self, key: str, default: bool) -> bool:
        value = self.named.get(key)
        if value is None:
            return default
        if not (isinstance(value, _Scalar) and value.kind == "BOOL"):
            raise self.fail(f"`{key}` must be `true` or `false`")
        return bool(value.value)

    def _ids(self, what: str) -> tuple[int, ...]:
        if self.named:
            raise self.fail(f"{what}() does not accept named arguments")
        if not self.positional:
            raise self.fail(f"{what}() requires at least one token id", f"write `{what}(42)`")
        ids = []
        for value in self.positional:
            if not (isinstance(value, _Scalar) and value.kind == "INT"):
                raise self.fail(f"{what}() arguments must be non-negative integer token ids")
            ids.append(value.value)
        return tuple(sorted(set(ids)))

    def _token(self) -> ast.Expr:
        return ast.TokenSet(self._ids("Token"), False, self.span)

    def _excludetoken(self) -> ast.Expr:
        return ast.TokenSet(self._ids("ExcludeToken"), True, self.span)

    def _tagdispatch(self) -> ast.Expr:
        self._only_named({"loop_after_dispatch", "excludes"})
        tags = []
        for value in self.positional:
            if not isinstance(value, _Tuple):
                raise self.fail(
                    "each TagDispatch argument must be a (tag, rule) pair",
                    'write `("<tag>", rule_name)`',
                )
            if len(value.items) != 2:
                raise self.fail("each TagDispatch argument must be a pair (tag, rule)")
            tag = value.items[0]
            if not (isinstance(tag, _Scalar) and tag.kind == "STRING" and tag.value):
                raise self.fail("a tag must be a non-empty string literal")
            tags.append((tag.value, self._rule_name(value.items[1])))
        loop = self._bool("loop_after_dispatch", True)
        excludes: list[str] = []
        if "excludes" in self.named:
            value = self.named["excludes"]
            if not isinstance(value, _Tuple):
                raise self.fail("`excludes` must be a tuple of strings", 'write `excludes=("s",)`')
            for item in value.items:
                if not (isinstance(item, _Scalar) and item.kind == "STRING" and item.value):
                    raise self.fail("each exclude must be a non-empty string literal")
                excludes.append(item.value)
        for exclude in excludes:
            for tag, _ in tags:
                if tag.startswith(exclude):
                    raise self.fail(
                        f"exclude {quote_string(exclude)} is a prefix of tag {quote_string(tag)}",
                        "the tag could never be matched",
                    )
        return ast.TagDispatch(tuple(tags), loop, tuple(excludes), self.span)

    def _tokentagdispatch(self) -> ast.Expr:
        self._only_named({"loop_after_dispatch", "excludes"})
        tags = []
        for value in self.positional:
            if not (isinstance(value, _Tuple) and len(value.items) == 2):
                raise self.fail("each TokenTagDispatch argument must be a pair (token_id, rule)")
            trigger = value.items[0]
            if not (isinstance(trigger, _Scalar) and trigger.kind == "INT"):
                raise self.fail("a trigger token id must be a non-negative integer")
            tags.append((int(trigger.value), self._rule_name(value.items[1])))
        loop = self._bool("loop_after_dispatch", True)
        excludes: list[int] = []
        if "excludes" in self.named:
            value = self.named["excludes"]
            if not isinstance(value, _Tuple):
                raise self.fail("`excludes` must be a tuple of token ids")
            for item in value.items:
                if not (isinstance(item, _Scalar) and item.kind == "INT"):
                    raise self.fail("an exclude token id must be a non-negative integer")
                excludes.append(int(item.value))
        for exclude in excludes:
            if any(tid == exclude for tid, _ in tags):
                raise self.fail(f"token id {exclude} is both a trigger and excluded")
        return ast.TokenTagDispatch(tuple(tags), loop, tuple(excludes), self.span)

    def _regex(self) -> ast.Expr:
        if len(self.positional) != 1:
            raise self.fail("Regex() takes exactly one pattern string", 'write `Regex("[a-z]+")`')
        pattern = self.positional[0]
        if not (isinstance(pattern, _Scalar) and pattern.kind == "STRING"):
            raise self.fail("the Regex() pattern must be a string literal")
        self._only_named({"json_string", "flags"})
        json_string = self._bool("json_string", False)
        flags: str | None = None
        if "flags" in self.named:
            value = self.named["flags"]
            if not (isinstance(value, _Scalar) and value.kind == "STRING"):
                raise self.fail("`flags` must be a string literal")
            flags = value.value
        return ast.RegexMacro(pattern.value, json_string, flags, self.span)

    def _substring(self) -> ast.Expr:
        if self.named:
            raise self.fail("Substring() does not accept named arguments")
        strings = []
        for value in self.positional:
            if not (isinstance(value, _Scalar) and value.kind == "STRING"):
                raise self.fail("Substring() arguments must be strings")
            strings.append(value.value)
        return ast.Substring(tuple(strings), self.span)


_RuleBuilder._handlers = {
    "rule": _RuleBuilder._rule,
    "lookahead": _RuleBuilder._lookahead,
    "choices": _RuleBuilder._choices,
    "sequence": _RuleBuilder._sequence,
    "item": _RuleBuilder._item,
    "star": _RuleBuilder._star,
    "plus": _RuleBuilder._plus,
    "optional": _RuleBuilder._optional,
    "exactly": _RuleBuilder._exactly,
    "at_least": _RuleBuilder._at_least,
    "between": _RuleBuilder._between,
    "bound": _RuleBuilder._bound,
    "empty_group": _RuleBuilder._empty_group,
    "group": _RuleBuilder._group,
    "string": _RuleBuilder._string,
    "char_class": _RuleBuilder._char_class,
    "rule_ref": _RuleBuilder._rule_ref,
    "macro": _RuleBuilder._macro,
    "macro_call": _RuleBuilder._macro_call,
    "macro_args": _RuleBuilder._macro_args,
    "named_arg": _RuleBuilder._named_arg,
    "positional_arg": _RuleBuilder._positional_arg,
    "value": _RuleBuilder._value,
    "name": _RuleBuilder._name,
    "tuple": _RuleBuilder._tuple,
}


def _explain_syntax(
    found: str, expected: list[str], exc: SyntaxErrorAt, tokens: list[GkToken], end: int
) -> tuple[str, str | None]:
    prev = tokens[end - 1] if end > 0 else None
    token = exc.token
    if (
        prev is not None
        and prev.type in ("STAR", "PLUS", "QMARK", "RBRACE")
        and token.type in ("STAR", "PLUS", "QMARK", "LBRACE")
    ):
        return (
            f"a second quantifier {found} follows `{prev.value}`",
            "only one postfix operator per element; group it: `(x+)?`",
        )
    if token.type == "LOOKAHEAD" or (prev is not None and _ends_lookahead(tokens, end)):
        return (
            f"unexpected {found} after the lookahead",
            "a lookahead `(= ...)` may appear once, at the very end of a rule body",
        )
    if token.type == "LOOKAHEAD":
        return ("a lookahead `(= ...)` must end the rule body", None)
    if (
        prev is not None
        and prev.type in ("ASSIGN", "PIPE")
        and token.type in ("$END", "PIPE", "RPAR", "LOOKAHEAD")
    ):
        what = "an empty rule body" if prev.type == "ASSIGN" else "an empty alternative"
        return (
            f"expected an element, found {found}",
            f'{what} is not allowed; write `""` to match the empty string',
        )
    if token.type == "BOOL":
        return (
            f"expected an element, found {found}",
            "`true` and `false` are reserved words; rename the rule",
        )
    shown = ", ".join(expected[:8])
    return (f"unexpected {found}; expected {'one of ' if len(expected) > 1 else ''}{shown}", None)


def _ends_lookahead(tokens: list[GkToken], end: int) -> bool:
    depth = 0
    for k in range(end - 1, -1, -1):
        kind = tokens[k].type
        if kind == "RPAR":
            depth += 1
        elif kind in ("LPAR", "LOOKAHEAD"):
            depth -= 1
            if depth == 0:
                return kind == "LOOKAHEAD" and tokens[end - 1].type == "RPAR"
        if depth <= 0:
            return False
    return False
