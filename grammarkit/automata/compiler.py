"""AST to :class:`~grammarkit.automata.compiled.CompiledGrammar`, rule by rule as inputs reach them.

A grammar parsed from text without rule attributes (the parser has already reported an
undefined rule or a bad ``Regex`` pattern anywhere in it) is not walked up front: every rule
is numbered in definition order, and the bodies are walked once, the first time the decoder
asks for their byte facts (a verdict never needs them). Any other grammar gets one lean walk
over the rule bodies reachable from the root, up front: it finds those rules (``GK103`` for an
undefined reference; only they are numbered), checks the patterns of every ``Regex``, and
collects what the decoder's byte facts need (literals, classes, references and token nodes,
:class:`~grammarkit.automata.byte_facts.ReachedBodies`, so no later pass walks the bodies
again); the ``[lazy]`` rules are flattened then. Which rules derive the empty string is decided
per rule when first asked (:class:`Nullability`). Each other rule is compiled the first time
the recognizer or the decoder asks for it (:class:`RuleAutomata`):

1. **Construct** an NFA from the rule body (:mod:`grammarkit.automata.construct`); large
   bounded repetitions become counted loops instead of unrolled copies, literal alternatives
   tries. Alternatives that are bare references are replaced by the alternatives of the rules
   they name (a union: a chain ``ri ::= "w..." | r(i+1)`` becomes one choice), and small rules
   without calls are built in place of their references instead of being built and copied.
2. **Flatten lazy rules** (``name[lazy] ::= ...``, done up front): expand every rule they
   reference (which must not recurse), determinize, then cut the edges leaving final states, so
   the rule ends at the first point where it can (xgrammar 0.2.8's shortest-match semantics).
   A ``max_chars`` rule expanded there has no budget inside the lazy rule, as in xgrammar.
   In a grammar with **budgeted rules** (``name[max_chars=N] ::= ...``) every rule keeps its
   own items, nothing is inlined: the recognizer gives items character deadlines by their rule
   (:mod:`grammarkit.automata.char_deadlines`).
3. **Inline** small rules into their callers (as xgrammar does), a callee's own calls first, to
   a bounded depth: chains of small rules collapse, and asking for one rule of a 250,000-rule
   chain compiles a handful; calls to larger or recursive rules stay call edges, and so do
   calls to rules with ``max_tokens`` (the decoder knows their items by their rule, see
   :mod:`grammarkit.decode.token_budget`) and to *counted callees*, rules that repeat a call
   a bounded number of times or have a counted loop (``json-string.max12 ::= "\\""
   json-char{0,12} "\\""``): a copy per caller would give the decoder the repetition's
   positions once per caller to classify tokens for.
4. **Eliminate tail self-calls**: ``x ::= "a" x | "b"`` becomes a loop, so right-recursive lists
   and string bodies are plain automaton loops instead of ever-deeper calls.

Every numbered rule keeps its number (rules only ever inlined are simply never asked for).
Determinizing happens later still, per rule and per state (see
:class:`~grammarkit.automata.compiled.CompiledGrammar`).

All NFAs of one grammar share a budget of :data:`MAX_STATES` states, a memory ceiling far above
real grammars (``GK121``); only a lazy rule, which must be flattened into one DFA, has a size
limit of its own.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Container, Iterator
from operator import attrgetter
from typing import Any

from grammarkit._gc import paused_gc
from grammarkit.automata.byte_facts import ByteFacts, ReachedBodies
from grammarkit.automata.char_budget import budgeted_rule_names
from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.construct import Deferral, build_expression, surely_exceeds
from grammarkit.automata.determinize import Automaton, determinize, minimize, trim
from grammarkit.automata.nfa import NFA, Budget, BudgetExceeded
from grammarkit.automata.regex_macro import expand_regex
from grammarkit.diagnostics import GrammarError, error
from grammarkit.ebnf import ast

MAX_STATES = 5_000_000
"""How many NFA states one grammar may need: a memory ceiling (about 1.5 GB), not a size limit."""

MAX_LAZY_DFA_STATES = 100_000
"""How many DFA states the flattened automaton of one ``[lazy]`` rule may have."""

INLINE_LIMIT = 64
"""Rules whose automaton has at most this many states are inlined into their callers."""

COUNTED_INLINE_LIMIT = 512
"""Callers with counted repetitions inline rules up to this size (a counted body is never
copied, and an inlined body lets the recognizer scan many iterations at once)."""

INLINE_DEPTH = 8
"""How deep inlining looks into the callees of a callee (bounds the work of one request)."""

DEFER_ABOVE = 2_000
"""A rule's NFA is built in part once it has this many states (from the start if its body
surely needs more): the choices not begun yet, and tries of more bytes than this, are built
as inputs reach them (see :class:`~grammarkit.automata.construct.Deferral`). As large an NFA
is determinized lazily anyway (:data:`~grammarkit.automata.compiled.EAGER_LIMIT`)."""


def compile_grammar(grammar: ast.GrammarAST, root: str = "root", *,
                    references_checked: bool = False) -> CompiledGrammar:
    """Prepare the rules of ``grammar``; each is compiled when first reached.

    Budgeted rules (``max_chars``) are compiled as ordinary rules and their budgets left to the
    recognizer (:mod:`grammarkit.automata.char_deadlines`); such a grammar inlines no rule.

    Parameters
    ----------
    grammar
        The rules.
    root
        The rule a derivation starts from.
    references_checked
        Whether every reference and ``Regex`` pattern of ``grammar`` is known to be valid (the
        parser reports an undefined rule or a bad pattern anywhere in a text). Then a grammar
        without rule attributes numbers every rule in definition order and walks no body up
        front: the rules reachable from ``root`` are not sought, and the bodies are walked
        once, when the decoder first asks for their byte facts. Otherwise only the rules
        reachable from ``root`` are numbered, found by one walk over their bodies.

    Raises
    ------
    GrammarError
        ``GK105`` if ``root`` is not defined, ``GK103`` for an undefined reference, ``GK121``
        for a lazy rule that cannot be flattened, or the error of an invalid ``Regex`` pattern.
        A rule beyond the memory ceiling raises ``GK121`` when it is first reached.
    """
    with paused_gc():  # many small lists, no cycles: collections only slow it down
        return _compile(grammar, root, references_checked)


def _compile(grammar: ast.GrammarAST, root: str, references_checked: bool) -> CompiledGrammar:
    rules = grammar.rule_map()
    if root not in rules:
        raise GrammarError([error("GK105", f"the root rule `{root}` is not defined", None,
                                  f"define `{root} ::= ...`")])
    regex: dict[ast.RegexMacro, ast.Expr] = {}
    reached: ReachedBodies | None = None
    if references_checked and not any(map(attrgetter("attributes"), grammar.rules)):
        nodes = list(rules.values())  # attributes (lazy, budgets) would need the reachable set
    else:
        reached = ReachedBodies()
        nodes = [rules[name] for name in _reachable(rules, root, regex, reached)]
    automata = RuleAutomata(nodes, regex, reached)
    nullable = Nullability(nodes, automata.union_body, automata.rule_ids, regex)
    spans = [rule.name_span or rule.span for rule in nodes]
    return CompiledGrammar(list(automata.rule_ids), automata.rule_ids[root], automata,
                           nullable, spans, char_deadlines=automata.budgeted,
                           token_nodes=lambda: automata.bodies().tokens)


class RuleAutomata:
    """The NFA of each rule (numbered in ``rules`` order), compiled on first request.

    ``automata[r]`` is rule ``r``'s final automaton (inlined, tail calls eliminated); ``len``
    is the number of rules. Lazy rules are flattened when this object is made. ``reached``
    is what a walk over the bodies of ``rules`` collected, or ``None``: the bodies are walked
    when :meth:`bodies` is first called (every reference must then name one of ``rules``).
    """

    def __init__(self, rules: list[ast.Rule], regex: dict[ast.RegexMacro, ast.Expr],
                 reached: ReachedBodies | None):
        self.rules = rules
        self._reached = reached
        self.rule_ids = dict(zip(map(attrgetter("name"), rules), range(len(rules))))
        self.budget = Budget(MAX_STATES)
        self.defer_above = DEFER_ABOVE
        """:data:`DEFER_ABOVE` when the grammar was compiled (tests compare values)."""
        self._regex = regex
        self._nfas: list[NFA | None] = [None] * len(rules)
        self._next = [0] * len(rules)  # the next own state to inline calls from
        self._own = [-1] * len(rules)  # how many states the rule had before inlining
        self._done = [False] * len(rules)
        self._busy: set[int] = set()
        self._leaf_bodies: dict[int, ast.Expr | None] = {}
        self._counted_callees: dict[int, bool] = {}
        self._union_bodies: dict[int, ast.Expr] = {}
        self._union_budget = 2 * len(rules) + 1000
        """How many rule bodies :meth:`union_body` may still pull into others (bounds the
        work of many rules sharing one long chain)."""
        attributed = [(i, rule) for i, rule in enumerate(rules) if rule.attributes]
        self._lazy = {i for i, rule in attributed if _is_lazy(rule)}
        self._lazy_source: dict[int, NFA] = {}
        self._unrolled = (set(_reachable_ids(rules, self.rule_ids, sorted(self._lazy)))
                          if self._lazy else set())
        self.budgeted = {self.rule_ids[name]: n for name, n in
                         budgeted_rule_names([rule for _, rule in attributed]).items()}
        """``{rule: N}`` for the rules with ``max_chars=N``."""
        self._inlines = not self.budgeted  # with deadlines, every rule keeps its own items
        self._kept_calls = set(self.budgeted) | {
            i for i, rule in attributed if _has_token_budget(rule)}
        """Rules never inlined: those with ``max_chars`` or ``max_tokens``."""
        for i in sorted(self._lazy):
            self._base(i)

    def __len__(self) -> int:
        return len(self.rules)

    def __getitem__(self, rule: int) -> NFA:
        if not self._done[rule]:
            collecting = gc.isenabled()
            gc.disable()  # many small lists, no cycles (paused_gc's freeze costs more per rule)
            try:
                self._advance(rule, None, INLINE_DEPTH)
            finally:
                if collecting:
                    gc.enable()
        nfa = self._nfas[rule]
        assert nfa is not None
        return nfa

    def byte_facts(self, nullable: Container[int]) -> ByteFacts:
        """The byte ranges and FOLLOW sets of every rule, read off their bodies."""
        return ByteFacts(self.rules, self.rule_ids, nullable, self.expand, self.bodies())

    def bodies(self) -> ReachedBodies:
        """What a walk over every rule's body collects (walked now if not yet)."""
        if self._reached is None:
            with paused_gc():
                self._reached = _walk_every_body(self.rules, self._regex)
        return self._reached

    def expand(self, node: ast.RegexMacro) -> ast.Expr:
        """The expression of a ``Regex`` macro (cached)."""
        return _expanded(node, self._regex)

    def _base(self, rule: int) -> NFA:
        """``rule``'s NFA as constructed (lazy rules: flattened), before anything is inlined."""
        nfa = self._nfas[rule]
        if nfa is None:
            nfa = self._flattened(rule) if rule in self._lazy else self._construct(rule)
            self._nfas[rule] = nfa
            self._own[rule] = nfa.num_states
        return nfa

    def _source(self, rule: int) -> NFA:
        """``rule``'s NFA as constructed from its body (lazy rules: before flattening)."""
        if rule not in self._lazy:
            return self._base(rule)
        found = self._lazy_source.get(rule)
        if found is None:
            found = self._lazy_source[rule] = self._construct(rule)
        return found

    def _construct(self, rule: int) -> NFA:
        node = self.rules[rule]
        nfa = NFA(self.budget)
        body = self.union_body(rule)
        unroll = rule in self._unrolled  # flattened into a lazy rule: built completely
        defer = None
        if self._inlines and not unroll:  # a body surely larger is deferred at once
            above = self.defer_above
            defer = Deferral(0 if surely_exceeds(body, above) else above,
                             lambda: _too_large(node))
        try:
            nfa.start, end = build_expression(nfa, body, self.rule_ids,
                                              self.expand, unroll=unroll,
                                              inline=self._leaf_body, defer=defer)
        except BudgetExceeded:
            raise _too_large(node) from None
        nfa.finals = {end}
        return nfa

    def union_body(self, rule: int) -> ast.Expr:
        """``rule``'s body with each alternative that is a bare reference replaced by the
        alternatives of the rule it names, transitively (cached).

        ``x ::= "a" | y`` and ``y ::= "b" | z`` make ``x ::= "a" | "b" | z``'s alternatives:
        a union, so a rule met again adds nothing (recursion through bare alternatives
        included), and a chain of 100,000 such rules becomes one choice (its literals one
        trie) instead of 100,000 rules all predicted at the first byte. Lazy rules and rules
        with ``max_chars`` or ``max_tokens`` stay calls; all rules together pull in at most :attr:`_union_budget` bodies.
        Only choices are read so; a body that is one reference is inlined as usual.
        """
        found = self._union_bodies.get(rule)
        if found is None:
            found = self._union_bodies[rule] = self._merged_body(rule)
        return found

    def _merged_body(self, rule: int) -> ast.Expr:
        body = self.rules[rule].body
        if (not isinstance(body, ast.Choice) or self._union_budget <= 0 or not self._inlines
                or not any(type(a) is ast.RuleRef for a in body.alternatives)):
            return body  # a body that is one reference is left to inlining
        seen = {rule}
        called = self._called_within(body)
        kept: list[ast.Expr] = []
        stack = list(reversed(body.alternatives))
        keep, pop, extend = kept.append, stack.pop, stack.extend
        rule_ids, rules, budget = self.rule_ids, self.rules, self._union_budget
        stays = self._lazy | self._kept_calls  # rules that stay calls
        rule_ref, choice = ast.RuleRef, ast.Choice
        while stack:
            node = pop()
            callee = rule_ids.get(node.name) if type(node) is rule_ref else None
            if callee is None:
                keep(node)
            elif callee in seen:
                continue  # already in the union
            elif callee in stays or callee in called or budget <= 0:
                seen.add(callee)
                keep(node)
            else:
                seen.add(callee)
                budget -= 1
                inner = rules[callee].body
                extend(reversed(inner.alternatives) if type(inner) is choice else (inner,))
        self._union_budget = budget
        return kept[0] if len(kept) == 1 else ast.Choice(tuple(kept), body.span)

    def _called_within(self, body: ast.Choice) -> set[int]:
        """The rules that the alternatives of ``body`` call as items of a sequence.

        Such a rule stays a call where it is also a bare alternative: it is built anyway, and
        merging its alternatives would build them twice; along a chain of optional members
        (``after-a ::= "," b after-b | after-b``, an object's properties in schema order)
        each rule's union would hold every later member, quadratic in their number.
        """
        rule_ids, sequence, rule_ref = self.rule_ids, ast.Sequence, ast.RuleRef
        return {rule_ids[item.name] for alternative in body.alternatives
                if type(alternative) is sequence
                for item in alternative.items
                if type(item) is rule_ref and item.name in rule_ids}

    def _is_counted_callee(self, rule: int) -> bool:
        """Whether ``rule`` repeats something a counted number of times: a counted loop, or a
        bounded repetition of a call (``json-string.max12 ::= "\\"" json-char{0,12} "\\""``;
        a small rule built in place is no call), cached.

        Such a rule is never inlined: each copy would give its caller the repetition's
        positions once more, and the decoder classifies the tokens of every position on its
        own, so 50 properties sharing one bounded string would cost 50 times the token
        classes of one (as a call, they share those of the rule's states).
        """
        found = self._counted_callees.get(rule)
        if found is None:
            found = self._counted_callees[rule] = self._base(rule).counted or any(
                type(node) is ast.Repeat and node.max is not None and node.max > 1
                and any(type(inner) is ast.RuleRef and self._leaf_body(inner.name) is None
                        for inner in ast.walk(node.item))
                for node in ast.walk(self.union_body(rule)))
        return found

    def _leaf_body(self, name: str) -> ast.Expr | None:
        """The body of rule ``name`` if it is small and calls nothing (then it is built in
        place of each reference, as inlining would copy it), else ``None``."""
        rule = self.rule_ids.get(name)
        if rule is None:
            return None
        if rule not in self._leaf_bodies:
            body = self.rules[rule].body
            self._leaf_bodies[rule] = (
                body if (self._inlines and rule not in self._lazy
                         and rule not in self._kept_calls
                         and _small_leaf(body, INLINE_LIMIT)) else None)
        return self._leaf_bodies[rule]

    def _flattened(self, rule: int) -> NFA:
        """Lazy ``rule`` as one automaton (lazy rules it calls are flattened first)."""
        node = self.rules[rule]

        def fail(why: str) -> GrammarError:
            return GrammarError([error(
                "GK121", f"lazy rule `{node.name}` cannot be flattened: {why}",
                node.name_span or node.span,
                "a lazy rule must be regular: literals, classes, repetitions and references to "
                "non-recursive rules")])

        _check_acyclic(rule, lambda r: _callees(self._source(r)), fail)
        flat = NFA(self.budget)
        try:
            flat.start, flat.finals = _copy_expanded(self._source(rule), self._base, flat)
        except BudgetExceeded:
            raise fail("it is too large") from None
        if any(flat.token_edges):
            raise fail("it matches vocabulary tokens")
        dfa = determinize(flat, MAX_LAZY_DFA_STATES)
        if dfa is None:
            raise fail("its automaton is too large")
        dfa = minimize(dfa)
        automaton = trim(Automaton(dfa.start, dfa.finals,
                                   [() if s in dfa.finals else edges
                                    for s, edges in enumerate(dfa.byte_edges)],
                                   [() for _ in dfa.call_edges],
                                   [() for _ in dfa.token_edges], True))
        nfa = NFA(self.budget)
        try:
            nfa.start, nfa.finals = automaton.to_nfa(nfa)
        except BudgetExceeded:
            raise _too_large(node) from None
        return nfa

    def _advance(self, rule: int, bound: int | None, depth: int) -> bool:
        """Inline small callees into ``rule`` until done or past ``bound`` states.

        Returns whether ``rule`` is done within ``bound``; an unfinished rule resumes where it
        stopped at the next request. At ``depth`` 0 only a rule without calls can be done. A
        callee being inlined into further up (recursion) is copied as it stands: an NFA in the
        middle of inlining still accepts its rule's language.
        """
        nfa = self._base(rule)
        if self._done[rule]:
            return bound is None or nfa.num_states <= bound
        if bound is not None and nfa.num_states > bound:
            return False
        own = self._own[rule]
        # no calls: nothing to inline; a rule built in part calls its callees (inlining them
        # would build every callee of its first level, reached or not)
        if not self._next[rule] and (nfa.deferred or not any(nfa.call_edges)):
            self._next[rule] = own
            self._done[rule] = True
            return True
        if depth == 0 and any(nfa.call_edges[self._next[rule]:own]):
            return False
        self._busy.add(rule)
        try:
            limit = COUNTED_INLINE_LIMIT if nfa.counted else INLINE_LIMIT
            reserve = self.budget.limit // 4
            p = self._next[rule]
            while p < own:
                if nfa.call_edges[p]:
                    kept = []
                    for callee, q in nfa.call_edges[p]:
                        if (callee == rule or callee in self._kept_calls or not self._inlines
                                or (self._nfas[callee] is None  # not built for a size
                                    and surely_exceeds(self.union_body(callee), limit))
                                or self._base(callee).num_states > limit
                                or self._base(callee).deferred  # large, built in part
                                or self._is_counted_callee(callee)
                                or (callee not in self._busy  # busy: inlined as it stands
                                    and not self._advance(callee, limit, depth - 1))):
                            kept.append((callee, q))
                            continue
                        inner = self._base(callee)
                        if self.budget.remaining - inner.num_states < reserve:
                            kept.append((callee, q))
                            continue
                        shift = nfa.copy_states(inner)
                        nfa.add_epsilon(p, inner.start + shift)
                        for final in inner.finals:
                            nfa.add_epsilon(final + shift, q)
                    nfa.call_edges[p] = kept
                p += 1
                self._next[rule] = p
                if bound is not None and nfa.num_states > bound:
                    return False
        except BudgetExceeded:
            raise _too_large(self.rules[rule]) from None
        finally:
            self._busy.discard(rule)
        if self._inlines:
            _eliminate_tail_calls(nfa, rule)
        self._done[rule] = True
        return True


def _small_leaf(body: ast.Expr, limit: int) -> bool:
    """Whether ``body`` references no rule and builds at most about ``limit`` NFA states.

    Only literals, classes, sequences, choices and ``?``/``*``/``+`` qualify (nothing that is
    unrolled, expanded or dispatched).
    """
    size = 0
    stack: list[Any] = [body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Literal:
            size += len(node.value) + 1
        elif kind is ast.CharClass:
            size += 2 + 2 * len(node.ranges) + (4 if node.negated else 0)
        elif kind is ast.Sequence:
            stack.extend(node.items)
        elif kind is ast.Choice:
            size += 2
            stack.extend(node.alternatives)
        elif kind is ast.Repeat and node.min <= 1 and node.max in (1, None):
            size += 2
            stack.append(node.item)
        else:
            return False
        if size > limit:
            return False
    return True


def _is_lazy(rule: ast.Rule) -> bool:
    return any(a.key == "lazy" for a in rule.attributes)


def _has_token_budget(rule: ast.Rule) -> bool:
    return any(a.key == "max_tokens" for a in rule.attributes)


def _too_large(rule: ast.Rule) -> GrammarError:
    return GrammarError([error(
        "GK121", f"grammar too large: it reaches the memory ceiling of {MAX_STATES:,} automaton "
        f"states (in rule `{rule.name}`)", rule.name_span or rule.span,
        "split the grammar, or use a counted repetition instead of written-out copies")])


def _eliminate_tail_calls(nfa: NFA, rule: int) -> None:
    """Turn calls of ``rule`` to itself that end the rule into epsilon edges to its start."""
    for p, edges in enumerate(nfa.call_edges):
        if not edges or not any(r == rule for r, _ in edges):
            continue
        kept = []
        for r, q in edges:
            if r == rule and _ends_rule(nfa, q):
                nfa.add_epsilon(p, nfa.start)
            else:
                kept.append((r, q))
        nfa.call_edges[p] = kept


def _ends_rule(nfa: NFA, state: int) -> bool:
    """Whether every path from ``state`` can only finish the rule, consuming nothing."""
    closure = nfa.epsilon_closure({state})
    return not closure.isdisjoint(nfa.finals) and not any(
        nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s] or s in nfa.deferred
        for s in closure)


def _callees(nfa: NFA) -> set[int]:
    return {r for edges in nfa.call_edges for r, _ in edges}


def _check_acyclic(rule: int, callees: Callable[[int], set[int]],
                   fail: Callable[[str], GrammarError]) -> None:
    """Raise ``fail(...)`` if the rules reachable from ``rule`` include a cycle."""
    state: dict[int, int] = {rule: 1}  # 1: on the current path, 2: done
    stack: list[tuple[int, list[int]]] = [(rule, sorted(callees(rule)))]
    while stack:
        current, pending = stack[-1]
        if not pending:
            state[current] = 2
            stack.pop()
            continue
        nxt = pending.pop()
        mark = state.get(nxt)
        if mark == 1:
            raise fail("it is recursive")
        if mark is None:
            state[nxt] = 1
            stack.append((nxt, sorted(callees(nxt))))


def _copy_expanded(source: NFA, callee_nfa: Callable[[int], NFA], target: NFA
                   ) -> tuple[int, set[int]]:
    """Copy ``source`` into ``target`` with every call replaced by a copy of the callee."""
    shift = target.copy_states(source)
    start, finals = source.start + shift, {f + shift for f in source.finals}
    p = 0
    while p < target.num_states:
        calls = target.call_edges[p]
        target.call_edges[p] = []
        for callee, q in calls:
            nfa = callee_nfa(callee)
            inner = target.copy_states(nfa)
            target.add_epsilon(p, nfa.start + inner)
            for final in nfa.finals:
                target.add_epsilon(final + inner, q)
        p += 1
    return start, finals


def _reachable_ids(rules: list[ast.Rule], rule_ids: dict[str, int], roots: list[int]) -> list[int]:
    """Numbers of the rules reachable from ``roots`` (``roots`` included)."""
    seen = set(roots)
    stack = list(roots)
    while stack:
        for name, _ in ast.referenced_rules(rules[stack.pop()].body):
            callee = rule_ids[name]
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return sorted(seen)


def _expanded(node: ast.RegexMacro, cache: dict[ast.RegexMacro, ast.Expr]) -> ast.Expr:
    found = cache.get(node)
    if found is None:
        found = cache[node] = expand_regex(node)
    return found


Formula = bool | tuple[frozenset[str], ...] | None
"""When an expression derives the empty string: always, never, when every rule of one of the
sets does (a disjunction of conjunctions), or ``None``: decided on the expression itself (the
disjunction would grow past :data:`_MAX_TERMS`)."""

_MAX_TERMS = 16


def _reachable(rules: dict[str, ast.Rule], root: str, regex: dict[ast.RegexMacro, ast.Expr],
               reached: ReachedBodies) -> list[str]:
    """The rules reachable from ``root``, in definition order, their bodies walked once
    (:func:`_walk_bodies`)."""
    seen = {root}
    _walk_bodies(rules, [root], seen, regex, reached)
    return [name for name in rules if name in seen]


def _walk_bodies(rules: dict[str, ast.Rule], pending: list[str], seen: set[str],
                 regex: dict[ast.RegexMacro, ast.Expr], reached: ReachedBodies) -> None:
    """Walk the bodies of the rules ``pending`` and of the rules they reach not in ``seen``.

    One walk over each body finds its references (``GK103`` for an undefined one; each rule
    reached is added to ``seen``), expands its ``Regex`` macros (raising their errors) and
    fills ``reached`` (what the byte facts need: the decoder's first mask then walks no body
    again).
    """

    def reach(callee: str, span: ast.Span | None) -> None:
        if callee not in rules:
            raise GrammarError([error("GK103", f"rule `{callee}` is not defined", span,
                                      f"define it with `{callee} ::= ...`")])
        seen.add(callee)
        pending.append(callee)

    literal, char_class, rule_ref = ast.Literal, ast.CharClass, ast.RuleRef
    sequence, choice, repeat = ast.Sequence, ast.Choice, ast.Repeat
    add_literal, add_class = reached.literals.append, reached.classes.append
    references = reached.references
    while pending:
        caller = pending.pop()
        stack: list[Any] = [rules[caller].body]
        pop, extend = stack.pop, stack.extend
        called: list[str] = []
        add_reference = called.append
        while stack:
            node = pop()
            kind = type(node)
            if kind is literal:
                add_literal(node.value)
            elif kind is rule_ref:
                name = node.name
                add_reference(name)
                if name not in seen:
                    if name not in rules:
                        reach(name, node.span)
                    seen.add(name)
                    pending.append(name)
            elif kind is sequence:
                extend(node.items)
            elif kind is choice:
                extend(node.alternatives)
            elif kind is char_class:
                add_class(node)
            elif kind is repeat:
                stack.append(node.item)
            else:  # Regex, dispatches, Substring, tokens: their byte ranges are built alone
                _collect_leaf(node, reached, regex)
                if kind is ast.TagDispatch or kind is ast.TokenTagDispatch:
                    for _, callee in node.tags:
                        if callee not in seen:
                            reach(callee, node.span)
        if called:
            references.append((caller, called))


def _walk_every_body(rules: list[ast.Rule], regex: dict[ast.RegexMacro, ast.Expr]
                     ) -> ReachedBodies:
    """What :func:`_walk_bodies` collects from every rule of ``rules``, whose references are
    known to be defined (the walk of a parsed grammar: the cheapest loop per node, a first
    mask of a 250,000-rule grammar waits for it)."""
    reached = ReachedBodies()
    literal, char_class, rule_ref = ast.Literal, ast.CharClass, ast.RuleRef
    sequence, choice, repeat = ast.Sequence, ast.Choice, ast.Repeat
    add_literal, add_class = reached.literals.append, reached.classes.append
    add_references = reached.references.append
    for rule in rules:
        stack: list[Any] = [rule.body]
        pop, extend, push = stack.pop, stack.extend, stack.append
        called: list[str] = []
        while stack:
            node = pop()
            kind = type(node)
            if kind is literal:
                add_literal(node.value)
            elif kind is sequence:
                extend(node.items)
            elif kind is rule_ref:
                called.append(node.name)
            elif kind is choice:
                extend(node.alternatives)
            elif kind is char_class:
                add_class(node)
            elif kind is repeat:
                push(node.item)
            else:  # Regex, dispatches, Substring, tokens: their byte ranges are built alone
                _collect_leaf(node, reached, regex)
        if called:
            add_references((rule.name, called))
    return reached


def _collect_leaf(node: Any, reached: ReachedBodies,
                  regex: dict[ast.RegexMacro, ast.Expr]) -> None:
    """Record a node whose byte ranges are built alone (a ``Regex``, a dispatch, a
    ``Substring``, tokens) in ``reached``: for both body walks, off their hot paths."""
    reached.leaves.add(node)
    kind = type(node)
    if kind is ast.RegexMacro:
        _expanded(node, regex)
    elif kind is ast.TokenSet:
        reached.tokens.append(node)
    elif kind is ast.TagDispatch or kind is ast.TokenTagDispatch:
        if kind is ast.TokenTagDispatch:
            reached.tokens.append(node)
        reached.dispatched.update(callee for _, callee in node.tags)


_VISIT, _COMBINE, _ALWAYS = 0, 1, 2


def _summary(expr: ast.Expr, regex: dict[ast.RegexMacro, ast.Expr],
             reference: Callable[[str, ast.Span | None], Formula]) -> Formula:
    """The nullability formula of ``expr``, with ``reference(name, span)`` the formula of each
    rule it references (called for the rules ``TagDispatch`` calls too, their value unused)."""
    results: list[Formula] = []
    stack: list[tuple[Any, int]] = [(expr, _VISIT)]
    while stack:
        node, step = stack.pop()
        kind = type(node)
        if step == _ALWAYS:  # a repetition that may run zero times
            results[-1] = True
        elif kind is ast.Literal:
            results.append(not node.value)
        elif kind is ast.CharClass or kind is ast.TokenSet:
            results.append(False)
        elif kind is ast.RuleRef:
            results.append(reference(node.name, node.span))
        elif kind is ast.Sequence or kind is ast.Choice:
            kids = node.items if kind is ast.Sequence else node.alternatives
            if step == _VISIT and kind is ast.Sequence and any(
                    _surely_solid(kid, reference) for kid in kids):
                results.append(False)  # its other items need no walk
            elif step == _VISIT:
                stack.append((node, _COMBINE))
                stack.extend((kid, _VISIT) for kid in kids)
            elif not kids:
                results.append(True)  # an empty group
            else:
                parts = results[len(results) - len(kids):]
                del results[len(results) - len(kids):]
                results.append(_all(parts) if kind is ast.Sequence else _any(parts))
        elif kind is ast.Repeat:
            if node.min == 0 or node.max == 0:
                stack.append((node, _ALWAYS))
            stack.append((node.item, _VISIT))
        elif kind is ast.RegexMacro:
            stack.append((_expanded(node, regex), _VISIT))
        else:  # TagDispatch, TokenTagDispatch, Substring: their calls follow bytes or tokens
            if isinstance(node, (ast.TagDispatch, ast.TokenTagDispatch)):
                for _, name in node.tags:
                    reference(name, node.span)
            results.append(_leaf_derives_empty(node))
    return results[0]


def _surely_solid(node: ast.Expr,
                  reference: Callable[[str, ast.Span | None], Formula]) -> bool:
    """Whether ``node`` surely consumes a character: a non-empty literal, a class, a token set
    or a rule ``reference`` says is not nullable."""
    if isinstance(node, ast.Literal):
        return bool(node.value)
    if isinstance(node, (ast.CharClass, ast.TokenSet)):
        return True
    return isinstance(node, ast.RuleRef) and reference(node.name, node.span) is False


def _all(parts: list[Formula]) -> Formula:
    if any(p is False for p in parts):
        return False
    terms: tuple[frozenset[str], ...] = (frozenset(),)
    for part in parts:
        if part is True:
            continue
        if part is None:
            return None
        assert isinstance(part, tuple)
        terms = tuple(a | b for a in terms for b in part)
        if len(terms) > _MAX_TERMS:
            return None
    return True if any(not t for t in terms) else terms


def _any(parts: list[Formula]) -> Formula:
    if any(p is True for p in parts):
        return True
    terms: list[frozenset[str]] = []
    for part in parts:
        if part is None:
            return None
        if part is not False:
            assert isinstance(part, tuple)
            terms += part
    if len(terms) > _MAX_TERMS:
        return None
    return tuple(terms) if terms else False


class Nullability:
    """The rules that derive the empty string, a container of rule numbers decided lazily.

    A rule is decided the first time it is asked for: its body's :data:`Formula`, and those of
    the undecided rules the formula depends on (transitively), solved together as Horn
    clauses. Most rules decide on their own body (a literal first), so a grammar costs the
    rules inputs reach, not a walk over all of them. A body whose formula depends on other
    rules is read as its union body (``union_body``: bare-reference alternatives replaced by
    the alternatives they name, which the rule's automaton is built from anyway), so a chain
    ``ri ::= "w..." | r(i+1)`` is decided by one look at its union, not rule by rule.
    """

    def __init__(self, rules: list[ast.Rule], union_body: Callable[[int], ast.Expr],
                 rule_ids: dict[str, int], regex: dict[ast.RegexMacro, ast.Expr]):
        self._rules = rules
        self._union_body = union_body
        self._bodies: dict[int, ast.Expr] = {}
        """The body each rule's formula was read from."""
        self._ids = rule_ids
        self._regex = regex
        self._known: list[bool | None] = [None] * len(rules)
        self._formulas: dict[int, Formula] = {}
        self._solid: dict[int, bool] = {}
        """Rules a reference to which surely consumes a character (see :meth:`_reference`)."""

    def __contains__(self, rule: object) -> bool:
        if not isinstance(rule, int) or not 0 <= rule < len(self._known):
            return False
        known = self._known[rule]
        if known is None:
            self._solve(rule)
            known = self._known[rule]
            assert known is not None
        return known

    def __iter__(self) -> Iterator[int]:
        return (rule for rule in range(len(self._known)) if rule in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def _formula(self, rule: int) -> Formula:
        if rule in self._formulas:
            return self._formulas[rule]
        body = self._rules[rule].body
        plain, found = _plain_formula(body)
        if not (plain and isinstance(found, bool)):  # it depends on other rules
            union = self._union_body(rule)
            if union is not body:
                body = union
                plain, found = _plain_formula(body)
        self._bodies[rule] = body
        if not plain:
            found = _summary(body, self._regex, self._reference)
        self._formulas[rule] = found
        return found

    def _reference(self, name: str, _span: ast.Span | None) -> Formula:
        """The formula of a reference to ``name``: ``False`` for a rule already decided not
        nullable or whose alternatives each plainly start with a character, else its name."""
        rule = self._ids[name]
        solid = self._solid.get(rule)
        if solid is None:
            solid = (self._known[rule] is False
                     or _plain_formula(self._rules[rule].body) == (True, False))
            self._solid[rule] = solid
        return False if solid else (frozenset((name,)),)

    def _depends(self, rule: int, formula: Formula) -> set[int]:
        if formula is None:
            return {self._ids[n] for n, _ in ast.referenced_rules(self._bodies[rule])}
        assert isinstance(formula, tuple)
        return {self._ids[name] for term in formula for name in term}

    def _solve(self, first: int) -> None:
        """Decide ``first`` and the undecided rules it depends on."""
        known, ids = self._known, self._ids
        group = []
        inside = {first}
        stack = [first]
        while stack:
            rule = stack.pop()
            group.append(rule)
            formula = self._formula(rule)
            if formula is True or formula is False:
                continue
            for used in self._depends(rule, formula):
                if known[used] is None and used not in inside:
                    inside.add(used)
                    stack.append(used)
        nullable = dict.fromkeys(group, False)
        waiting: dict[int, list[tuple[int, int]]] = {rule: [] for rule in group}
        missing: dict[int, list[int]] = {rule: [] for rule in group}
        opaque_users: dict[int, list[int]] = {rule: [] for rule in group}
        pending: list[int] = []
        recheck: set[int] = set()
        for rule in group:
            formula = self._formula(rule)
            if formula is True:
                pending.append(rule)
            elif formula is None:
                recheck.add(rule)
                for used in self._depends(rule, formula) & inside:
                    opaque_users[used].append(rule)
            elif formula:
                assert isinstance(formula, tuple)
                for term, needed in enumerate(formula):
                    count = 0
                    for used in {ids[name] for name in needed}:
                        if used in inside:
                            count += 1
                            waiting[used].append((rule, term))
                        elif not known[used]:
                            count = len(group) + 1  # a rule decided not nullable: never
                    missing[rule].append(count)
                    if not count:
                        pending.append(rule)

        def value(name: str) -> bool:
            used = ids[name]
            return nullable[used] if used in inside else bool(known[used])

        while pending or recheck:
            while pending:
                rule = pending.pop()
                if nullable[rule]:
                    continue
                nullable[rule] = True
                for caller, term in waiting[rule]:
                    missing[caller][term] -= 1
                    if not missing[caller][term]:
                        pending.append(caller)
                recheck.update(r for r in opaque_users[rule] if not nullable[r])
            if recheck:
                rule = recheck.pop()
                if not nullable[rule] and _derives_empty(self._bodies[rule], value,
                                                         self._regex):
                    pending.append(rule)
        for rule, yes in nullable.items():
            known[rule] = yes


def _plain_formula(body: ast.Expr) -> tuple[bool, Formula]:
    """``(True, formula)`` for a body whose alternatives each start with a character or are a
    bare reference (most rules), read off directly; ``(False, None)`` for any other body."""
    terms = []
    for alternative in body.alternatives if isinstance(body, ast.Choice) else (body,):
        first = (alternative.items[0] if isinstance(alternative, ast.Sequence)
                 and alternative.items else alternative)
        if isinstance(first, ast.RuleRef):
            if first is not alternative:
                return False, None
            terms.append(frozenset((first.name,)))
        elif not ((isinstance(first, ast.Literal) and first.value)
                  or isinstance(first, ast.CharClass)):
            return False, None
    if not terms:
        return True, False
    return True, tuple(terms) if len(terms) <= _MAX_TERMS else None


def _derives_empty(expr: ast.Expr, nullable: Callable[[str], bool],
                   regex: dict[ast.RegexMacro, ast.Expr]) -> bool:
    """Whether ``expr`` matches the empty string, given which rules are ``nullable``."""
    return _summary(expr, regex, lambda name, _span: nullable(name)) is True


def _leaf_derives_empty(node: ast.Expr) -> bool:
    """Whether a ``TagDispatch``, ``TokenTagDispatch`` or ``Substring`` matches the empty string."""
    names = {name: 0 for _, name in getattr(node, "tags", ())}
    nfa = NFA(Budget(MAX_STATES))
    start, end = build_expression(nfa, node, names, expand_regex)
    return end in nfa.epsilon_closure((start,))
