"""Why a JSON text is rejected when only the order of an object's keys is wrong.

Grammars converted from a JSON Schema with ``property_order="schema"`` (the default) want the
declared properties in the schema's order, so a valid instance with its keys in another order is
rejected at the first key that comes too late, with a message about characters. On such a
rejection :func:`key_order_explanation` checks whether the text is JSON and the failure lies in
an object's key (or the separator before it), and whether the grammar reads that member's key
once the member is moved before an earlier member of the same object (nearest first), or the key
of a later member moved before it (a required property that comes too late; the key that
failed must then be read after it): if so, the rejection is caused by key order, and the
explanation says so. Only the key is read: the member's value may hold keys out of order of its
own, which the next run explains in turn. The check uses the grammar alone, so it works as well
for an EBNF file written by ``grammarkit convert json-schema``.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from itertools import pairwise

from grammarkit.automata.earley import Explanation, ParseState, Recognizer
from grammarkit.diagnostics import GrammarError

MAX_CANDIDATES = 1000
"""Places tried for the misplaced member (the nearest earlier members), and later members tried
in its place."""

_CHUNK = 1 << 16  # bytes (or JSON tokens) scanned between two looks at the deadline

CLI_HINT = ("if the grammar was converted from a JSON Schema, `grammarkit convert json-schema "
            "--property-order any` writes one that accepts the properties in any order")
LIBRARY_HINT = ('if the grammar comes from a JSON Schema, `Grammar.from_json_schema(schema, '
                'property_order="any")` accepts the properties in any order')

_TOKEN = re.compile(rb'[ \t\n\r]*(?P<token>(?P<punctuation>[{}\[\],:])'
                    rb'|"[^"\\]*(?:\\.[^"\\]*)*"|[^ \t\n\r{}\[\],:"]+)', re.DOTALL)
"""One JSON token after optional whitespace: punctuation, a string, or a scalar."""


@dataclass(frozen=True)
class KeyOrderExplanation(Explanation):
    """A rejection caused by the order of an object's keys.

    Attributes
    ----------
    key
        The property that comes too late (decoded).
    before
        The property of the same object it must come before.
    hint
        How to accept any order (worded for the library; the CLI words it for itself).
    """

    key: str = ""
    before: str = ""
    hint: str = LIBRARY_HINT

    def __str__(self) -> str:
        return (f"property `{self.key}` comes before `{self.before}` in the schema "
                f"(matching stopped at {self.line}:{self.column})")


@dataclass(frozen=True)
class _Member:
    start: int  # the key's opening quote
    key_end: int  # after the key's closing quote
    end: int  # after the value


def key_order_explanation(recognizer: Recognizer, data: bytes, explanation: Explanation,
                          timeout: float | None = 10.0) -> Explanation:
    """``explanation``, or a :class:`KeyOrderExplanation` when the member at the failure point
    belongs before an earlier member of its object (or a later member belongs before it): the
    grammar reads the moved member's key once it is there.

    Never raises for the text: a text that is not JSON, a check that runs out of ``timeout``
    seconds, or one that reaches the automata's memory ceiling leaves ``explanation`` as it is.
    """
    deadline = None if timeout is None else time.perf_counter() + timeout
    try:
        json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return explanation
    found = _members_at(data, explanation.offset, deadline)
    if found is None:
        return explanation
    try:
        return _moved(recognizer, data, explanation, *found, deadline) or explanation
    except GrammarError:  # GK121: the states the candidates visit are past the memory ceiling
        return explanation


def _moved(recognizer: Recognizer, data: bytes, explanation: Explanation,
           members: list[_Member], index: int, deadline: float | None
           ) -> KeyOrderExplanation | None:
    """The explanation for the first move that lets the grammar read the moved member's key."""
    # states before each member up to the failing one (the text there is a valid prefix)
    states = [_advance(recognizer, recognizer.initial(), data[:members[0].start], deadline)]
    for member, following in pairwise(members[:index + 1]):
        states.append(_advance(recognizer, states[-1], data[member.start:following.start],
                               deadline))
    earlier = [(index, target) for target in range(index - 1, -1, -1)]
    later = [(source, index) for source in range(index + 1, len(members))]
    for source, destination in [*earlier[:MAX_CANDIDATES], *later[:MAX_CANDIDATES]]:
        moved, before = _key(data, members[source]), _key(data, members[destination])
        state = states[destination]
        if moved == before or state is None:
            continue
        # the key decides: its value may hold misplaced keys of its own, found on the next run
        key = data[members[source].start:members[source].key_end]
        if _advance(recognizer, state, key, deadline) is None:
            continue
        if source > destination and not _follows(recognizer, state, data, members[source],
                                                 members[destination],
                                                 members[destination + 1], deadline):
            continue
        return KeyOrderExplanation(explanation.offset, explanation.line, explanation.column,
                                   explanation.expected, explanation.found, moved, before)
    return None


def _follows(recognizer: Recognizer, state: ParseState, data: bytes, moved: _Member,
             failing: _Member, after_failing: _Member, deadline: float | None) -> bool:
    """Whether the failing member's key can come after the member moved before it.

    A later member moved forward explains the rejection only if the key that failed is then
    read: an undeclared key stays wrong wherever it goes. When the moved member's own value is
    rejected (it has misplaced keys of its own), that is left to the next run and the move
    stands.
    """
    past_moved = _advance(recognizer, state, data[moved.start:moved.end], deadline)
    if past_moved is None:
        return True
    separator = data[failing.end:after_failing.start]
    return _advance(recognizer, past_moved, separator + data[failing.start:failing.key_end],
                    deadline) is not None


def _advance(recognizer: Recognizer, state: ParseState | None, data: bytes,
             deadline: float | None) -> ParseState | None:
    """The state after ``data``, in chunks; ``None`` if rejected or once past ``deadline``."""
    for start in range(0, len(data), _CHUNK):
        if state is None or (deadline is not None and time.perf_counter() > deadline):
            return None
        state = recognizer.advance(state, data[start:start + _CHUNK])
    return state


class _Open:
    """An open array or object while scanning: an object's members so far, the key waiting for
    its value, and where the region of the next key starts (the end of the previous value)."""

    def __init__(self, is_object: bool, region: int):
        self.is_object = is_object
        self.members: list[_Member] = []
        self.key: tuple[int, int] | None = None
        self.region = region

    def value_ends(self, end: int) -> None:
        if self.is_object and self.key is not None:
            self.members.append(_Member(self.key[0], self.key[1], end))
            self.key = None
            self.region = end


def _members_at(data: bytes, offset: int, deadline: float | None
                ) -> tuple[list[_Member], int] | None:
    """The members of the object whose key (or the space and comma before it) holds
    ``offset``, and that member's index; ``None`` when the offset is elsewhere, or once past
    ``deadline``."""
    stack: list[_Open] = []
    found: tuple[_Open, int] | None = None  # the object holding the offset, the member's index
    for tokens, match in enumerate(_TOKEN.finditer(data), 1):  # valid JSON: no gaps
        if tokens % _CHUNK == 0 and deadline is not None and time.perf_counter() > deadline:
            return None
        start = match.start("token")
        position = match.end()
        punctuation = match.group("punctuation")
        top = stack[-1] if stack else None
        if punctuation in (b"{", b"["):
            stack.append(_Open(punctuation == b"{", position))
        elif punctuation in (b"}", b"]"):
            closed = stack.pop()
            if found is not None and found[0] is closed:
                return closed.members, found[1]
            if stack:
                stack[-1].value_ends(position)
        elif punctuation is not None or top is None:
            continue
        elif top.is_object and top.key is None:  # a key
            top.key = (start, position)
            if found is None and top.region <= offset < position:
                found = (top, len(top.members))
        else:  # a string or scalar value
            top.value_ends(position)
    return None


def _key(data: bytes, member: _Member) -> str:
    return str(json.loads(data[member.start:member.key_end]))
