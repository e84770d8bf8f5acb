"""The canonical printer: an AST back to dialect text, as ``grammarkit fmt`` writes it.

Layout
------
* one definition per rule, ``name[attributes] ::= body (= lookahead)``;
* redundant grouping is dropped: nested sequences and alternations are flattened, one-element
  groups unwrapped, and parentheses appear only where precedence needs them
  (alternation < sequence < postfix);
* quantifiers are spelled from their bounds: ``?``, ``*``, ``+``, ``{m}``, ``{m,}``, ``{m,n}``;
* literals and classes are re-escaped canonically (:mod:`grammarkit.ebnf.escapes`);
* a rule longer than :data:`LINE_LENGTH` whose body is an alternation puts each alternative on
  its own line, continuation lines starting with an indented ``|``;
* comments are kept: a comment on the line where a rule ends trails it, any other comment is
  printed on its own line before the next rule, and comments from inside a rule body move just
  above that rule. Blank lines between rules and comment groups are kept (several become one).

The output parses back to :func:`canonical_expr` of every rule, so printing is idempotent and
preserves the language.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from grammarkit._gc import paused_gc
from grammarkit.ebnf.ast import (
    Attribute,
    CharClass,
    Choice,
    Comment,
    Expr,
    GrammarAST,
    Literal,
    RegexMacro,
    Repeat,
    Rule,
    RuleRef,
    Sequence,
    Substring,
    TagDispatch,
    TokenSet,
    TokenTagDispatch,
    children,
)
from grammarkit.ebnf.escapes import class_char, quote_string

LINE_LENGTH = 100
"""Rules longer than this are wrapped at their top-level ``|``."""

CONTINUATION_INDENT = "    "
"""What precedes the ``|`` of a wrapped rule's continuation lines."""

# Binding strength: an operand weaker than its context needs parentheses.
_CHOICE, _SEQUENCE, _POSTFIX, _ATOM = range(4)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def print_grammar(grammar: GrammarAST, source: str | None = None) -> str:
    """The canonical text of ``grammar``, ending with a newline.

    Parameters
    ----------
    grammar
        The rules and comments to print.
    source
        The text ``grammar`` was parsed from. With it, comments that end a rule's line stay on
        that line and blank lines between rules survive; without it every comment gets a line
        of its own and rules follow each other directly.
    """
    with paused_gc():  # printing builds no cycles: spare collections over a fresh, big AST
        blocks = _layout(grammar, source)
        lines: list[str] = []
        previous_end: int | None = None
        for block in blocks:
            if lines and _has_blank_line(source, previous_end, block.start):
                lines.append("")
            lines.extend(block.lines)
            previous_end = block.end
        return "".join(line + "\n" for line in lines)


def print_rule(rule: Rule) -> str:
    """The canonical text of one rule, without comments or a final newline."""
    head = f"{rule.name}{_attributes(rule)} ::= " if rule.attributes else f"{rule.name} ::= "
    tail = "" if rule.lookahead is None else f" (= {print_expr(rule.lookahead)})"
    body = rule.body
    try:  # most parsed rules are canonical already: print them as they are, in one walk
        if type(body) is Choice and len(body.alternatives) > 1:
            alternatives = [_spell_alternative(alternative) for alternative in body.alternatives]
        else:
            return head + _spell(body, _CHOICE) + tail
    except (_NotCanonical, RecursionError):
        body = canonical_expr(body)
        if not isinstance(body, Choice):
            return head + _print(body, _CHOICE) + tail
        alternatives = [_print(alternative, _CHOICE) for alternative in body.alternatives]
    one_line = head + " | ".join(alternatives) + tail
    if len(one_line) <= LINE_LENGTH:
        return one_line
    return head + f"\n{CONTINUATION_INDENT}| ".join(alternatives) + tail


def print_expr(expr: Expr) -> str:
    """The canonical text of an expression, as it would appear as a whole rule body."""
    try:
        return _spell(expr, _CHOICE)
    except (_NotCanonical, RecursionError):
        return _print(canonical_expr(expr), _CHOICE)


def canonical_expr(expr: Expr) -> Expr:
    """``expr`` with its grouping made canonical, the form the printed text parses back to.

    Sequences in sequences and alternations in alternations are spliced into their parent,
    one-element groups are replaced by their element, an alternation of nothing becomes the
    empty class ``[]`` and each repetition's spelling follows from its bounds. The language
    is unchanged.
    """
    done: dict[int, Expr] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        key = id(node)
        if key in done:
            continue
        kind = type(node)
        if kind is Repeat:
            item = node.item  # type: ignore[union-attr]
            if not expanded:
                stack.append((node, True))
                stack.append((item, False))
                continue
            canonical_item = done[id(item)]
            op = _repeat_op(node.min, node.max)  # type: ignore[union-attr]
            if canonical_item is item and op == node.op:  # type: ignore[union-attr]
                done[key] = node
            else:
                done[key] = Repeat(canonical_item, node.min, node.max,  # type: ignore[union-attr]
                                   op, node.span)
        elif kind is Sequence or kind is Choice:
            kids = children(node)
            if not expanded:
                stack.append((node, True))
                stack.extend((child, False) for child in kids)
                continue
            members = [done[id(child)] for child in kids]
            if len(members) > 1 and all(
                    member is child and type(member) is not kind
                    for member, child in zip(members, kids)):
                done[key] = node  # canonical already
            else:
                done[key] = _splice(node, members)  # type: ignore[arg-type]
        else:
            done[key] = node
    return done[id(expr)]


# -- expressions -------------------------------------------------------------------------------
def _splice(node: Sequence | Choice, members: list[Expr]) -> Expr:
    kind = type(node)
    flat: list[Expr] = []
    for member in members:
        flat.extend(children(member) if isinstance(member, kind) else (member,))
    if len(flat) == 1:
        return flat[0]
    if isinstance(node, Sequence):
        return Sequence(tuple(flat), node.span)
    if not flat:
        return CharClass((), False, node.span)
    return Choice(tuple(flat), node.span)


_REPEAT_OPS = {(0, 1): "?", (0, None): "*", (1, None): "+"}


def _repeat_op(low: int, high: int | None) -> str:
    return _REPEAT_OPS.get((low, high), "{}")


def _quantifier(repeat: Repeat) -> str:
    if repeat.op != "{}":
        return repeat.op
    return _bounds(repeat.min, repeat.max)


def _bounds(low: int, high: int | None) -> str:
    if high is None:
        return f"{{{low},}}"
    if high == low:
        return f"{{{low}}}"
    return f"{{{low},{high}}}"


def _strength(expr: Expr) -> int:
    kind = type(expr)
    if kind is Choice:
        return _CHOICE
    if kind is Sequence:
        return _SEQUENCE if expr.items else _ATOM  # type: ignore[union-attr]
    if kind is Repeat:
        return _POSTFIX
    return _ATOM


class _NotCanonical(Exception):
    """:func:`_spell` met a node that :func:`canonical_expr` would rewrite."""


def _spell(expr: Expr, context: int) -> str:
    """What ``_print(canonical_expr(expr), context)`` returns, when ``canonical_expr(expr)`` is
    ``expr`` itself (as for most parsed grammars); else raises :class:`_NotCanonical`.

    One recursive walk that checks each node as it prints it: no group of one member or of
    none, no sequence in a sequence or choice in a choice, every quantifier spelled from its
    bounds. Raises ``RecursionError`` for nesting deeper than the stack.
    """
    kind = type(expr)
    if kind is Literal:
        value = expr.value  # type: ignore[union-attr]
        return _cached_literal(value) if len(value) <= _SHORT_LITERAL else _literal(value)
    if kind is RuleRef:
        return expr.name  # type: ignore[union-attr]
    if kind is CharClass:
        return _char_class(expr.ranges, expr.negated)  # type: ignore[union-attr]
    if kind is Sequence:
        items = expr.items  # type: ignore[union-attr]
        if len(items) < 2:
            if items:
                raise _NotCanonical
            return "()"
        parts = []
        for item in items:
            if type(item) is Sequence:
                raise _NotCanonical
            parts.append(_spell(item, _SEQUENCE))
        text = " ".join(parts)
        return f"({text})" if context > _SEQUENCE else text
    if kind is Choice:
        alternatives = expr.alternatives  # type: ignore[union-attr]
        if len(alternatives) < 2:
            raise _NotCanonical
        text = " | ".join([_spell_alternative(alternative) for alternative in alternatives])
        return f"({text})" if context > _CHOICE else text
    if kind is Repeat:
        low, high, op = expr.min, expr.max, expr.op  # type: ignore[union-attr]
        if op != _REPEAT_OPS.get((low, high), "{}"):
            raise _NotCanonical
        item = _spell(expr.item, _ATOM)  # type: ignore[union-attr]
        text = item + (op if op != "{}" else _bounds(low, high))
        return f"({text})" if context > _POSTFIX else text
    return _atom(expr)


def _spell_alternative(alternative: Expr) -> str:
    """:func:`_spell` of an alternative of a choice (which must not be a choice itself)."""
    if type(alternative) is Choice:
        raise _NotCanonical
    return _spell(alternative, _CHOICE)


_Pending = str | tuple[Expr, int]


def _print(expr: Expr, context: int) -> str:
    """Print a canonical expression that appears where binding ``context`` is required.

    Iterative: the stack holds finished text and (expression, context) pairs still to print.
    """
    out: list[str] = []
    stack: list[_Pending] = [(expr, context)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, needed = item
        if type(node) is Literal:
            out.append(_literal(node.value))
        elif type(node) is RuleRef:
            out.append(node.name)
        elif type(node) is CharClass:
            out.append(_char_class(node.ranges, node.negated))
        elif _strength(node) < needed:
            stack.extend((")", (node, _CHOICE), "("))
        elif type(node) is Choice:
            stack.extend(_joined(node.alternatives, " | ", _CHOICE))
        elif type(node) is Sequence and node.items:
            stack.extend(_joined(node.items, " ", _SEQUENCE))
        elif type(node) is Repeat:
            stack.append(_quantifier(node))
            stack.append((node.item, _ATOM))
        else:
            out.append(_atom(node))
    return "".join(out)


def _joined(operands: tuple[Expr, ...], separator: str, context: int) -> list[_Pending]:
    """Stack entries printing ``operands`` with ``separator`` between them (reversed)."""
    entries: list[_Pending] = []
    for operand in reversed(operands):
        entries.append(separator)
        entries.append((operand, context))
    entries[0:1] = []
    return entries


_PLAIN = re.compile(r"[ !#-\[\]-~]*")
"""Printable ASCII but ``"`` and ``\\``: a literal of these is printed as it is."""


def _literal(value: str) -> str:
    return f'"{value}"' if _PLAIN.fullmatch(value) else quote_string(value)


_SHORT_LITERAL = 64
_cached_literal = lru_cache(maxsize=8192)(_literal)
"""Grammars repeat short literals (converters spell each key character twice); long ones stay
uncached, so the cache never holds a huge literal alive."""


def _atom(expr: Expr) -> str:
    if isinstance(expr, Literal):
        return _literal(expr.value)
    if isinstance(expr, CharClass):
        return _char_class(expr.ranges, expr.negated)
    if isinstance(expr, RuleRef):
        return expr.name
    if isinstance(expr, Sequence):
        return "()"
    if isinstance(expr, TagDispatch):
        tags = [f"({quote_string(tag)}, {rule})" for tag, rule in expr.tags]
        excludes = ", ".join(quote_string(s) for s in expr.excludes)
        return _macro("TagDispatch", tags, expr.loop_after_dispatch, excludes, len(expr.excludes))
    if isinstance(expr, TokenTagDispatch):
        tags = [f"({token}, {rule})" for token, rule in expr.tags]
        excludes = ", ".join(str(token) for token in expr.excludes)
        return _macro("TokenTagDispatch", tags, expr.loop_after_dispatch, excludes,
                      len(expr.excludes))
    if isinstance(expr, TokenSet):
        name = "ExcludeToken" if expr.exclude else "Token"
        return f"{name}({', '.join(str(token) for token in expr.ids)})"
    if isinstance(expr, RegexMacro):
        arguments = [quote_string(expr.pattern)]
        if expr.json_string:
            arguments.append("json_string=true")
        if expr.flags is not None:
            arguments.append(f"flags={quote_string(expr.flags)}")
        return f"Regex({', '.join(arguments)})"
    if isinstance(expr, Substring):
        return f"Substring({', '.join(quote_string(s) for s in expr.strings)})"
    raise TypeError(f"cannot print {type(expr).__name__} as an atom")


def _macro(name: str, tags: list[str], loop: bool, excludes: str, exclude_count: int) -> str:
    arguments = list(tags)
    if not loop:
        arguments.append("loop_after_dispatch=false")
    if exclude_count:
        arguments.append(f"excludes=({excludes}{',' if exclude_count == 1 else ''})")
    return f"{name}({', '.join(arguments)})"


def _char_class(ranges: tuple[tuple[int, int], ...], negated: bool) -> str:
    if len(ranges) <= _SMALL_CLASS:  # grammars repeat small classes; huge ones stay uncached
        return _cached_char_class(ranges, negated)
    return _spell_char_class(ranges, negated)


_SMALL_CLASS = 64


def _spell_char_class(ranges: tuple[tuple[int, int], ...], negated: bool) -> str:
    parts = []
    for low, high in ranges:
        parts.append(class_char(low) if low == high else f"{class_char(low)}-{class_char(high)}")
    return f"[{'^' if negated else ''}{''.join(parts)}]"


_cached_char_class = lru_cache(maxsize=4096)(_spell_char_class)


def _attributes(rule: Rule) -> str:
    if not rule.attributes:
        return ""
    return f"[{', '.join(_attribute(a, rule.name) for a in rule.attributes)}]"


def _attribute(attribute: Attribute, rule_name: str) -> str:
    value = attribute.value
    if value is None or (attribute.key == "capture" and value == rule_name):
        return attribute.key
    if isinstance(value, bool):
        return f"{attribute.key}={'true' if value else 'false'}"
    if isinstance(value, (int, float)):
        return f"{attribute.key}={value!r}"
    return f"{attribute.key}={quote_string(value)}"


# -- layout ------------------------------------------------------------------------------------
@dataclass
class _Block:
    """Consecutive output lines, with the source range they came from (if known)."""

    lines: list[str]
    start: int | None
    end: int | None


def _layout(grammar: GrammarAST, source: str | None) -> list[_Block]:
    comments = sorted(grammar.comments, key=lambda comment: comment.span.start)
    blocks: list[_Block] = []
    k = 0
    for rule in grammar.rules:
        if rule.span is None:
            blocks.append(_Block(print_rule(rule).split("\n"), None, None))
            continue
        while k < len(comments) and comments[k].span.start < rule.span.start:
            blocks.append(_comment_block(comments[k]))
            k += 1
        lines: list[str] = []
        while k < len(comments) and comments[k].span.start < rule.span.end:
            lines.append(_comment_text(comments[k]))
            k += 1
        lines.extend(print_rule(rule).split("\n"))
        end = rule.span.end
        if k < len(comments) and _on_same_line(source, end, comments[k].span.start):
            lines[-1] += "  " + _comment_text(comments[k])
            end = comments[k].span.end
            k += 1
        blocks.append(_Block(lines, rule.span.start, end))
    blocks.extend(_comment_block(comment) for comment in comments[k:])
    return blocks


def _comment_block(comment: Comment) -> _Block:
    return _Block([_comment_text(comment)], comment.span.start, comment.span.end)


def _comment_text(comment: Comment) -> str:
    return "#" + _LINE_BREAK.sub(" ", comment.text).rstrip()


def _on_same_line(source: str | None, start: int, end: int) -> bool:
    if source is None or end < start:
        return False
    return _LINE_BREAK.search(source, start, end) is None


def _has_blank_line(source: str | None, start: int | None, end: int | None) -> bool:
    if source is None or start is None or end is None:
        return False
    return len(_LINE_BREAK.findall(source, start, end)) >= 2
