"""`TokenMatcher`: the native, xgrammar-compatible token-mask decoder."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from grammarkit._gc import paused_gc
from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.decode.bitmask import FixedBits, Words, bitmask_width
from grammarkit.decode.char_budget import CharBudget
from grammarkit.decode.earley_core import Frame, ParseState
from grammarkit.decode.engine_cache import mask_engine
from grammarkit.decode.mask_engine import Route
from grammarkit.decode.token_budget import TokenBudget
from grammarkit.diagnostics import Diagnostic, GrammarError, error
from grammarkit.ebnf import ast
from grammarkit.grammar import Grammar
from grammarkit.vocab import Vocabulary

MAX_JUMP_FORWARD = 4096
"""Bytes :meth:`TokenMatcher.find_jump_forward_string` looks ahead at most."""

MAX_ROUTE_STEPS = 64
"""Steps a new state's route looks back for a state with a known route (see
:meth:`TokenMatcher._route`)."""


def _check_token_ids(grammar: Grammar, vocab: Vocabulary, compiled: CompiledGrammar) -> None:
    """Raise GK170 for ``Token``/``ExcludeToken``/``TokenTagDispatch`` ids outside ``vocab``.

    ``compiled`` is ``grammar``'s automata or those of an equal grammar (the engine cache's):
    its rules' token nodes come from the compiler's one walk over their bodies, so only
    lookaheads and the rules it did not number (not reached from the root) are walked here;
    the errors are located in ``grammar``'s own text.
    """
    rules = grammar.ast.rules
    bodies = [rule.lookahead for rule in rules if rule.lookahead is not None]
    if len(rules) > compiled.num_rules:  # some rules are not numbered: not reached
        reached = set(compiled.rule_names)
        bodies += [rule.body for rule in rules if rule.name not in reached]
    if not _token_id_errors([*compiled.token_nodes, *_token_nodes(bodies)], vocab):
        return
    own = _token_nodes([body for rule in rules for body in (rule.body, rule.lookahead)
                        if body is not None])
    source = grammar.source
    raise GrammarError([d if source is None else d.with_source(source)
                        for d in _token_id_errors(own, vocab)])


def _token_nodes(bodies: Sequence[ast.Expr]) -> list[ast.TokenSet | ast.TokenTagDispatch]:
    return [node for body in bodies for node in ast.walk(body)
            if isinstance(node, (ast.TokenSet, ast.TokenTagDispatch))]


def _token_id_errors(nodes: Sequence[ast.TokenSet | ast.TokenTagDispatch], vocab: Vocabulary
                     ) -> list[Diagnostic]:
    errors = []
    for node in nodes:
        ids = (node.ids if isinstance(node, ast.TokenSet)
               else tuple(i for i, _ in node.tags) + node.excludes)
        for token_id in ids:
            if not 0 <= token_id < vocab.vocab_size:
                errors.append(error(
                    "GK170", f"token id {token_id} is outside the vocabulary "
                    f"({vocab.vocab_size} tokens, {vocab.source})", node.span,
                    f"token ids go from 0 to {vocab.vocab_size - 1}; is this grammar "
                    "meant for another tokenizer?"))
    return errors


@dataclass(frozen=True)
class _Step:
    state: ParseState
    terminated: bool = False
    data: bytes | None = None
    """The bytes that led here from the previous step (``None``: not by bytes alone)."""


class TokenMatcher:
    """Decodes one sequence under a grammar: which tokens may come next, and accepting them.

    The API mirrors ``xgrammar.GrammarMatcher``. Masks are per token id over ``vocab``; special
    tokens are never allowed unless the grammar names them with ``Token(...)``; stop tokens are
    allowed exactly where the grammar can end. Tokens may split UTF-8 characters.

    Construction compiles the grammar (once per process for the same grammar and vocabulary,
    see :mod:`grammarkit.decode.engine_cache`) and precomputes nothing: mask tables fill in as
    states are first met.

    Parameters
    ----------
    grammar
        The grammar to follow.
    vocab
        The model's vocabulary.
    stop_token_ids
        End-of-sequence ids, replacing ``vocab.stop_ids``.
    max_rollback_tokens
        How many accepted steps :meth:`rollback` can undo (``-1``: all of them).

    Raises
    ------
    ValueError
        If a stop token id is outside the vocabulary.
    GrammarError
        If the grammar cannot be compiled, or names a token id outside the vocabulary (GK170).
    """

    def __init__(self, grammar: Grammar, vocab: Vocabulary, *,
                 stop_token_ids: Sequence[int] | None = None, max_rollback_tokens: int = -1):
        stops = sorted(vocab.stop_ids if stop_token_ids is None else set(stop_token_ids))
        bad = [i for i in stops if not 0 <= i < vocab.vocab_size]
        if bad:
            raise ValueError(f"stop token ids out of range({vocab.vocab_size}): {bad[:5]}")
        self._engine = mask_engine(grammar, vocab)
        _check_token_ids(grammar, vocab, self._engine.core.compiled)
        self._vocab = vocab
        self._stop_ids = frozenset(stops)
        self._stop_array = np.array(stops, dtype=np.int64)
        self.stop_bits = FixedBits(self._stop_array)
        """The stop tokens' bits, set into a row where :meth:`stop_allowed`."""
        self._max_rollback = max_rollback_tokens
        self._history: list[_Step] = []
        self._frame_keys: dict[Frame, int] = {}
        self._budget = TokenBudget.of(self._engine.core, grammar.ast.rules)
        self._chars = CharBudget.of(self._engine.core)
        self.reset()

    @property
    def vocab_size(self) -> int:
        return self._vocab.vocab_size

    @property
    def stop_token_ids(self) -> list[int]:
        return self._stop_array.tolist()

    # -- state ---------------------------------------------------------------------------------
    def reset(self) -> None:
        """Back to the start of the grammar, forgetting the history."""
        self._history = [_Step(self._engine.core.initial(), data=b"")]
        self._rooted = True  # the history still starts at the start state
        self._frame_keys = {}
        if self._budget is not None:
            self._budget.start(self._history[0].state)
        if self._chars is not None:
            self._chars.start(self._history[0].state)

    def is_terminated(self) -> bool:
        """Whether a stop token has been accepted."""
        return self._history[-1].terminated

    def is_completed(self) -> bool:
        """Whether the input so far is a complete sentence (a stop token would be accepted)."""
        step = self._history[-1]
        return step.terminated or self._engine.core.is_accepting(step.state)

    def rollback(self, num_tokens: int = 1) -> None:
        """Undo the last ``num_tokens`` accepted tokens (or strings).

        Raises
        ------
        ValueError
            If fewer steps than that are kept in the history.
        """
        kept = len(self._history) - 1
        if not 0 <= num_tokens <= kept:
            raise ValueError(f"cannot roll back {num_tokens} tokens: {kept} steps are kept")
        del self._history[len(self._history) - num_tokens:]
        if self._budget is not None:
            self._budget.pop(num_tokens)
        if self._chars is not None:
            self._chars.pop(num_tokens)

    # -- accepting -----------------------------------------------------------------------------
    def accept_token(self, token_id: int) -> bool:
        """Accept ``token_id`` if the grammar allows it here; ``False`` (state unchanged) if not.

        A stop token is accepted where the grammar can end, and terminates the matcher.
        """
        step = self._history[-1]
        if step.terminated or not isinstance(token_id, (int, np.integer)):
            return False
        token_id = int(token_id)
        if not 0 <= token_id < self.vocab_size:
            return False
        engine = self._engine
        if token_id in self._stop_ids:
            if not engine.core.is_accepting(step.state):
                return False
            self._push(_Step(step.state, terminated=True), b"")
            return True
        data = self._vocab.tokens[token_id]
        ordinary = engine.index.rank_of[token_id] >= 0
        live = self._live(step)
        by_bytes = self._advance(live, data) if ordinary else None
        by_edge = engine.token_step(live, token_id, ordinary, len(data))
        if by_bytes is None and by_edge is None:
            return False
        if by_bytes is not None and by_edge is not None:
            by_bytes = engine.merge(by_bytes, by_edge)
        state = by_bytes if by_bytes is not None else by_edge
        assert state is not None
        if by_edge is not None and self._chars is not None:
            state = self._chars.settled(self._chars.cursor(live), data, state)
        # a route replays bytes without budgets: states under character budgets have none
        routed = by_edge is None and live is step.state and self._chars is None
        self._push(_Step(state, data=data if routed else None), data)
        return True

    def accept_string(self, text: str | bytes) -> bool:
        """Accept ``text`` (one rollback step) if the grammar allows it here.

        Raises
        ------
        TypeError
            For anything but ``str`` or bytes-like input (``bytes(5)`` would be five NUL bytes).
        """
        if isinstance(text, str):
            data = text.encode("utf-8", "surrogatepass")
        elif isinstance(text, (bytes, bytearray, memoryview)):
            data = bytes(text)
        else:
            raise TypeError(f"expected str or bytes to accept, not {type(text).__name__}")
        step = self._history[-1]
        if step.terminated:
            return False
        # a string is not held to `max_tokens` budgets, as in xgrammar (it still counts)
        state = self._advance(step.state, data)
        if state is None:
            return False
        self._push(_Step(state, data=data if self._chars is None else None), data)
        return True

    def _advance(self, state: ParseState, data: bytes) -> ParseState | None:
        """The state after ``data`` follows ``state`` (the latest step's, or its live state),
        character budgets enforced; ``None`` if the grammar rejects it."""
        if self._chars is None:
            return self._engine.core.advance(state, data)
        after = self._chars.advance(self._chars.cursor(state), data)
        return None if after is None else after.state

    def _push(self, step: _Step, data: bytes) -> None:
        """Record ``step``, reached by ``data`` (a token's text, also for ``Token(...)``)."""
        self._history.append(step)
        if self._budget is not None:
            self._budget.push(step.state)
        if self._chars is not None:
            self._chars.push(step.state, data)
        if 0 <= self._max_rollback < len(self._history) - 1:
            del self._history[: len(self._history) - 1 - self._max_rollback]
            self._rooted = False

    # -- masks ---------------------------------------------------------------------------------
    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32], index: int = 0) -> bool:
        """Write the allowed next tokens into row ``index`` of ``bitmask``.

        After termination no token is allowed.

        Returns
        -------
        bool
            Always ``True`` (the mask must be applied), as xgrammar returns.

        Raises
        ------
        ValueError
            If ``bitmask`` is not an ``int32`` array of shape ``(batch, >= ceil(vocab / 32))``
            or ``index`` is not a row of it.
        """
        check_bitmask(bitmask, self.vocab_size, index)
        width = bitmask_width(self.vocab_size)
        row = bitmask[index]
        if len(row) > width:
            row[width:] = 0
        words = self.next_token_words()
        if words is None:
            row[:width] = 0
            return True
        row[:width] = words
        if self.stop_allowed():
            self.stop_bits.set_in(row)
        return True

    def next_token_words(self) -> Words | None:
        """The allowed ordinary and ``Token(...)`` ids as read-only bitmask words, stop tokens
        excluded (see :meth:`stop_allowed`); ``None`` after termination."""
        step = self._history[-1]
        if step.terminated:
            return None
        if self._engine.revision:
            return self._words(step)
        # the engine's first mask builds the automata its walks reach: many small objects, no
        # cycles; full collections over a large grammar's objects would cost more than it
        # (later masks do not pause: a pause costs more than a cached mask)
        with paused_gc():
            return self._words(step)

    def _words(self, step: _Step) -> Words:
        live = self._live(step)
        if not live.groups:  # a spent budget at the end of the input: only stop tokens
            return np.zeros(bitmask_width(self.vocab_size), dtype=np.int32)
        return self._mask(live, self._route if live is step.state else None)

    def _mask(self, state: ParseState, route: Callable[[], Route | None] | None = None
              ) -> Words:
        """The allowed ordinary and ``Token(...)`` ids after ``state`` (the latest step's, or
        its live state)."""
        engine = self._engine
        key = engine.state_key(state, self._frame_keys)
        words = engine.mask(state, key, route)
        if self._chars is not None:
            by_edges = engine.token_edge_words(state) if engine.has_token_edges(state) else None
            words = self._chars.refined(self._chars.cursor(state), words, engine.index, by_edges,
                                        engine.longest_token(key))
        return words

    def _live(self, step: _Step) -> ParseState:
        """The state the next token continues from: ``step.state`` without derivations whose
        ``max_tokens`` budget is spent, where xgrammar enforces it (see
        :mod:`grammarkit.decode.token_budget`)."""
        if self._budget is None:
            return step.state
        def allows_any(state: ParseState) -> bool:
            return bool(state.groups) and bool(self._mask(state).any())

        return self._budget.live(step.state, allows_any,
                                 self._engine.core.is_accepting(step.state))

    def _route(self) -> Route | None:
        """How the current state is reached from an earlier one whose route the engine knows
        (or from the start), by bytes alone; ``None`` if it is not."""
        engine, history = self._engine, self._history
        parts: list[bytes] = []
        for at in range(len(history) - 1, max(0, len(history) - 1 - MAX_ROUTE_STEPS), -1):
            data = history[at].data
            if data is None:
                return None
            parts.append(data)
            parent = engine.state_key(history[at - 1].state, self._frame_keys)
            if parent in engine.routes:
                return parent, b"".join(reversed(parts))
        rooted = self._rooted and len(history) - 1 <= MAX_ROUTE_STEPS
        return (None, b"".join(reversed(parts))) if rooted else None

    def stop_allowed(self) -> bool:
        """Whether the stop tokens are allowed next."""
        step = self._history[-1]
        return (not step.terminated and len(self._stop_array) > 0
                and self._engine.core.is_accepting(step.state))

    def allowed_token_ids(self) -> npt.NDArray[np.int64]:
        """The ids :meth:`fill_next_token_bitmask` would allow, ascending."""
        bitmask = np.zeros((1, bitmask_width(self.vocab_size)), dtype=np.int32)
        self.fill_next_token_bitmask(bitmask)
        bits = np.unpackbits(bitmask[0].view(np.uint8), bitorder="little")[: self.vocab_size]
        return np.flatnonzero(bits)

    # -- jump forward --------------------------------------------------------------------------
    def find_jump_forward_bytes(self) -> bytes:
        """The bytes every continuation must start with, up to where a choice or the end is."""
        step = self._history[-1]
        if step.terminated:
            return b""
        engine = self._engine
        core = engine.core
        if core.is_accepting(step.state):
            return b""
        state: ParseState | None = self._live(step)
        chars = self._chars
        cursor = None if chars is None or state is None else chars.cursor(state)
        explored: list[Frame] = []
        forced = bytearray()
        while state is not None and len(forced) < MAX_JUMP_FORWARD:
            if core.is_accepting(state) or engine.has_token_edges(state):
                break
            nxt = engine.next_bytes(state)
            if len(nxt) != 1:
                break
            if cursor is not None and chars is not None and chars.stops_jump(cursor, nxt[0]):
                break
            forced.append(nxt[0])
            if chars is None or cursor is None:
                state = core.advance(state, bytes(nxt))
            else:
                cursor = chars.advance(cursor, bytes(nxt), explored, settle=False)
                state = None if cursor is None else cursor.state
        if chars is not None:
            chars.discard(explored)
        return bytes(forced)

    def find_jump_forward_string(self) -> str:
        """The longest forced continuation, up to its last complete character.

        Bytes finishing a character split by earlier tokens come first, as lone surrogates
        (``str.encode("utf-8", "surrogateescape")`` restores them).
        """
        data = self.find_jump_forward_bytes()
        return data[: _complete_prefix(data)].decode("utf-8", "surrogateescape")


def check_bitmask(bitmask: npt.NDArray[np.int32], vocab_size: int, index: int) -> None:
    """Raise ``ValueError`` unless row ``index`` of ``bitmask`` can hold a mask of ``vocab_size``
    tokens."""
    width = bitmask_width(vocab_size)
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32 or bitmask.ndim != 2:
        raise ValueError("bitmask must be a 2-d numpy int32 array (allocate_token_bitmask)")
    if bitmask.shape[1] < width:
        raise ValueError(f"bitmask rows have {bitmask.shape[1]} words, need {width}")
    if not 0 <= index < bitmask.shape[0]:
        raise ValueError(f"index {index} is not a row of a {bitmask.shape[0]}-row bitmask")


def _complete_prefix(data: bytes) -> int:
    """Length of ``data`` without a trailing incomplete UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return len(data)
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return len(data) if back >= need else len(data) - back
    return len(data)
