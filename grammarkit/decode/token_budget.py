"""``name[max_tokens=N]``: a rule's token budget in the decoder, as xgrammar 0.2.8 enforces it.

xgrammar gives every occurrence of a budgeted rule a *deadline* when it is predicted: the index
of the token being accepted then (``-1`` before the first token) plus ``N``, capped by the
deadline of the occurrence it is nested in. Everything derived inside the occurrence inherits
it. So the token that enters the rule does not count; the ``N`` tokens that start inside it
do; a token may straddle the rule's end while the budget lasts; a nested occurrence ends no
later than its parent; a tail-recursive one keeps its first deadline. Quirk kept: a deadline
of ``-1`` (``max_tokens=0`` before the first token) means no deadline at all.

At a token boundary after ``t`` tokens, a derivation whose deadline is below ``t`` is
*expired*. If some are, and the others allow a token or the input is complete, the mask is
that of the others and the next token continues only them (*enforced*); otherwise the budget is
relaxed for one token (xgrammar warns once) and nothing is dropped. Text matching
(``Grammar.matches``) ignores budgets, as xgrammar does on strings.

Here derivations are Earley items grouped by origin frame (:mod:`grammarkit.automata.earley`).
All items of one rule started at one frame share their callers, so one *alive-until* value per
``(frame, rule)`` says when all of their derivations have expired: the latest deadline over
their callers (the parents' items and the frame's own predicted items that call the rule),
capped by the rule's own budget. Dropping expired derivations removes those items from the
groups, and the expired callers from the frames' parent entries and predicted
configurations, so that the surviving items of a rule return only into surviving callers. The
result is an ordinary :class:`ParseState`: its masks are keyed and cached by its own canonical
key, never as if it were the unbudgeted state. Budgeted rules are kept as calls (the compiler
never inlines them), so their items are known by their rule.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass

from grammarkit.automata.earley import parents_first
from grammarkit.decode.earley_core import EarleyCore, Frame, ParseState
from grammarkit.ebnf import ast

UNLIMITED = 1 << 62
"""Alive-until of derivations no budget applies to."""

_BUDGETS: weakref.WeakKeyDictionary[EarleyCore, dict[int, int]] = weakref.WeakKeyDictionary()
"""``{rule number: N}`` per compiled grammar (its matchers share it; most are empty)."""


def token_budgets(rules: tuple[ast.Rule, ...] | list[ast.Rule]) -> dict[str, int]:
    """``{name: N}`` for every rule with ``max_tokens=N``."""
    found = {}
    for rule in rules:
        for attribute in rule.attributes:
            if attribute.key == "max_tokens" and isinstance(attribute.value, int):
                found[rule.name] = attribute.value
    return found


@dataclass(frozen=True)
class _FrameInfo:
    """What the budget needs of one frame: alive-until per rule started there, the lowest
    alive-until there or in any frame below (nothing of the frame expires before it), and the
    token during which it was made (``-1``: before the first)."""

    alive: dict[int, int]
    lowest: int
    token: int


class TokenBudget:
    """The token budgets of one matcher's history.

    Parameters
    ----------
    core
        The Earley adapter of the compiled grammar.
    budgets
        ``{rule number: N}`` for the rules with ``max_tokens=N``.
    """

    def __init__(self, core: EarleyCore, budgets: dict[int, int]):
        self._core = core
        self._budgets = budgets
        self._compiled = core.compiled
        self._empty = frozenset(rule for rule, n in budgets.items() if n == 0)
        """Rules with ``max_tokens=0``: predicted after a token, they expire at the next."""
        self._frames: dict[Frame, _FrameInfo] = {}
        self._added: list[list[Frame]] = []
        self._pruned: tuple[ParseState, int, ParseState] | None = None
        self._decided: tuple[ParseState, int, ParseState] | None = None
        self.tokens = 0
        """Tokens (and strings) accepted so far: xgrammar's current token index."""

    @classmethod
    def of(cls, core: EarleyCore, rules: tuple[ast.Rule, ...] | list[ast.Rule]
           ) -> TokenBudget | None:
        """The budget of a grammar, or ``None`` if no reachable rule has ``max_tokens``.

        ``rules`` are the grammar's (read once per ``core``: its matchers share the result).
        """
        budgets = _BUDGETS.get(core)
        if budgets is None:
            by_name = token_budgets(rules)
            names = core.compiled.rule_names
            budgets = {i: by_name[name] for i, name in enumerate(names) if name in by_name}
            _BUDGETS[core] = budgets
        return cls(core, budgets) if budgets else None

    # -- history ---------------------------------------------------------------------------------
    def start(self, state: ParseState) -> None:
        """Forget everything; ``state`` is the state before any token."""
        self._frames = {}
        self._added = []
        self._pruned = self._decided = None
        self.tokens = 0
        self._register(state, -1)

    def push(self, state: ParseState) -> None:
        """One more token (or string, or stop token) was accepted and led to ``state``."""
        self._added.append(self._register(state, self.tokens))
        self.tokens += 1

    def pop(self, count: int) -> None:
        """The last ``count`` tokens were rolled back."""
        for _ in range(count):
            for frame in self._added.pop():
                self._frames.pop(frame, None)
            self.tokens -= 1

    def _register(self, state: ParseState, token: int) -> list[Frame]:
        """Give the frames of ``state`` not seen yet their alive-until values (they were made
        while accepting token number ``token``)."""
        frames = self._frames
        added: list[Frame] = []
        for frame in parents_first((frame for frame, _ in state.groups), frames):
            frames[frame] = self._info(frame, token)
            added.append(frame)
        return added

    def _info(self, frame: Frame, token: int) -> _FrameInfo:
        """Alive-until per rule predicted at ``frame``: the latest over its callers, capped by
        its own deadline."""
        core, rule_of, calls = self._core, self._compiled.state_rule, self._compiled.call_edges
        alive: dict[int, int] = {}
        lowest = UNLIMITED
        if not frame.parents:
            alive[self._compiled.num_rules] = UNLIMITED  # the pseudo-rule calling the root
        pending: list[int] = []

        def offer(rule: int, caller: int) -> None:
            budget = self._budgets.get(rule)
            if budget is not None:
                deadline = token + budget
                # xgrammar: -1 means "no deadline"; a parent's deadline caps a child's
                value = UNLIMITED if deadline == -1 else min(deadline, caller)
            else:
                value = caller
            if value > alive.get(rule, -1):
                alive[rule] = value
                pending.append(rule)

        for parent, config in frame.parents:
            info = self._frames[parent]
            lowest = min(lowest, info.lowest)
            for s in core.states(config):
                caller = info.alive.get(rule_of[s], UNLIMITED)
                for rule, _ in calls[s]:
                    offer(rule, caller)
        own = core.states(frame.own)
        by_rule: dict[int, list[int]] = {}
        for s in own:
            by_rule.setdefault(rule_of[s], []).append(s)
        pending.extend(alive)
        while pending:
            rule = pending.pop()
            caller = alive[rule]
            for s in by_rule.get(rule, ()):
                for callee, _ in calls[s]:
                    offer(callee, caller)
        if alive:
            lowest = min(lowest, min(alive.values()))
        return _FrameInfo(alive, lowest, token)

    # -- enforcement -----------------------------------------------------------------------------
    def live(self, state: ParseState, allows_any: Callable[[ParseState], bool],
             accepting: bool) -> ParseState:
        """The state the next token continues: ``state`` without its expired derivations when
        xgrammar enforces the budget here, else ``state`` itself.

        ``allows_any`` tells whether a state's mask allows some token; ``accepting`` whether
        the input so far is complete (then a spent budget is enforced even if nothing else
        is allowed: only the stop tokens are).
        """
        decided = self._decided
        if decided is not None and decided[0] is state and decided[1] == self.tokens:
            return decided[2]
        pruned = self.pruned(state)
        if pruned is not state and not (accepting or allows_any(pruned)):
            pruned = state  # the budget is relaxed for one token
        self._decided = (state, self.tokens, pruned)
        return pruned

    def pruned(self, state: ParseState) -> ParseState:
        """``state`` without the derivations whose deadline has passed (``state`` itself if
        there are none)."""
        memo = self._pruned
        if memo is not None and memo[0] is state and memo[1] == self.tokens:
            return memo[2]
        now = self.tokens
        frames = self._frames
        if all(frames[frame].lowest >= now for frame, _ in state.groups):
            result = state
        else:
            rebuilt: dict[Frame, Frame] = {}
            groups = []
            changed = False
            for frame, config in state.groups:
                kept = self._kept(frame, config, now, False)
                if kept is not None and self._empty and now:
                    kept = self._without_empty_calls(kept, self._frames[frame].token == -1)
                if kept is None:
                    changed = True
                    continue
                new = self._frame(frame, now, rebuilt)
                changed = changed or kept != config or new is not frame
                groups.append((new, kept))
            result = ParseState(state.position, tuple(groups)) if changed else state
        self._pruned = (state, now, result)
        return result

    def _kept(self, frame: Frame, config: int, now: int, unlimited_calls: bool) -> int | None:
        """``config`` (items started at ``frame``) without its expired items; ``None`` if
        none is left.

        With ``unlimited_calls`` (``config`` waits for rules predicted before the first token),
        items calling a ``max_tokens=0`` rule are kept: such a rule has no deadline (xgrammar's
        ``-1``), so it may complete into an expired caller (whose continuation then expires).
        """
        info = self._frames[frame]
        if info.lowest >= now:
            return config
        alive, rule_of, calls = info.alive, self._compiled.state_rule, self._compiled.call_edges
        empty = self._empty if unlimited_calls else frozenset()
        states = self._core.states(config)
        kept = [s for s in states if alive.get(rule_of[s], UNLIMITED) >= now
                or empty and any(r in empty for r, _ in calls[s])]
        if len(kept) == len(states):
            return config
        return self._core.config(kept) if kept else None

    def _without_empty_calls(self, config: int, first: bool) -> int | None:
        """``config`` without the items that only call ``max_tokens=0`` rules here, and, in a
        frame made before the first token (``first``), without finished items.

        Rules called here were predicted while the last token was accepted, so with
        ``max_tokens=0`` they have expired; the mask engine would predict them again from
        their callers. A finished item has completed into its callers already; in a first
        frame, the callers of a ``max_tokens=0`` rule are kept even if expired (see
        :meth:`_kept`), and the mask engine would complete into them again.
        """
        g = self._compiled
        states = self._core.states(config)
        kept = [s for s in states
                if g.byte_edges[s] or g.token_edges[s]
                or g.call_edges[s] and not all(r in self._empty for r, _ in g.call_edges[s])
                or not g.call_edges[s] and not first]
        if len(kept) == len(states):
            return config
        return self._core.config(kept) if kept else None

    def _frame(self, frame: Frame, now: int, rebuilt: dict[Frame, Frame]) -> Frame:
        """``frame`` without expired parent entries and predicted items (itself if none)."""
        info = self._frames[frame]
        if info.lowest >= now:
            return frame
        found = rebuilt.get(frame)
        if found is not None:
            return found
        parents = []
        first = info.token == -1
        for parent, config in frame.parents:
            kept = self._kept(parent, config, now, first)
            if kept is not None:
                parents.append((self._frame(parent, now, rebuilt), kept))
        own = self._kept(frame, frame.own, now, first)
        if own == frame.own and len(parents) == len(frame.parents) and all(
                new_parent is parent and kept == config for (new_parent, kept), (parent, config)
                in zip(parents, frame.parents, strict=True)):
            rebuilt[frame] = frame  # nothing spent here or below (spent ones are gone)
            return frame
        new = Frame(frame.position, tuple(parents),
                    self._core.empty_config if own is None else own)
        rebuilt[frame] = new
        self._frames[new] = info
        if self._added:
            self._added[-1].append(new)
        return new
