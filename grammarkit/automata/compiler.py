"""AST to :class:`~grammarkit.automata.compiled.CompiledGrammar`.

Pipeline, per rule reachable from the root:

1. **Construct** an NFA from the rule body (:mod:`grammarkit.automata.construct`); large
   bounded repetitions become counted loops instead of unrolled copies.
2. **Flatten lazy rules** (``name[lazy] ::= ...``): expand every rule they reference (which must
   not recurse), determinize, then cut the edges leaving final states, so the rule ends at the
   first point where it can (xgrammar 0.2.8's shortest-match semantics).
3. **Flatten budgeted rules** (``name[max_chars=N] ::= ...``) the same way: their automaton
   counts code points (:mod:`grammarkit.automata.char_budget`), so it must hold the whole
   text of the rule; they are never inlined into their callers.
4. **Inline** small rules into their callers (callees first, so chains of small rules collapse),
   as xgrammar does; calls to larger or self-recursive rules stay call edges.
5. **Eliminate tail self-calls**: ``x ::= "a" x | "b"`` becomes a loop, so right-recursive lists
   and string bodies are plain automaton loops instead of ever-deeper calls.
6. Drop rules no longer called, number them, compute which rules are nullable. Determinizing
   happens later, per rule and per state, as inputs reach them (see
   :class:`~grammarkit.automata.compiled.CompiledGrammar`).

All NFAs of one grammar share a budget of :data:`MAX_STATES` states, a memory ceiling far above
real grammars (``GK121``); only a lazy rule, which must be flattened into one DFA, has a size
limit of its own.
"""

from __future__ import annotations

from collections.abc import Callable

from grammarkit._gc import paused_gc
from grammarkit.automata.char_budget import budgeted_rule_names
from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.automata.construct import build_expression
from grammarkit.automata.determinize import Automaton, determinize, minimize, trim
from grammarkit.automata.lazy_dfa import SubsetBuilder
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


def compile_grammar(grammar: ast.GrammarAST, root: str = "root") -> CompiledGrammar:
    """Compile the rules reachable from ``root`` into byte-level automata.

    Raises
    ------
    GrammarError
        ``GK105`` if ``root`` is not defined, ``GK103`` for an undefined reference, ``GK121``
        for a grammar beyond the memory ceiling or a lazy rule that cannot be flattened,
        ``GK116`` for a ``max_chars`` rule that cannot be flattened, or the error of an invalid
        ``Regex`` pattern.
    """
    with paused_gc():  # millions of small lists, no cycles: collections only slow it down
        return _compile(grammar, root)


def _compile(grammar: ast.GrammarAST, root: str) -> CompiledGrammar:
    rules = grammar.rule_map()
    if root not in rules:
        raise GrammarError([error("GK105", f"the root rule `{root}` is not defined", None,
                                  f"define `{root} ::= ...`")])
    names = _reachable_rules(rules, root)
    rule_ids = {name: i for i, name in enumerate(names)}
    lazy = [name for name in names if _is_lazy(rules[name])]
    unrolled = set(_reachable_rules(rules, lazy)) if lazy else set()
    budget = Budget(MAX_STATES)
    regex_cache: dict[ast.RegexMacro, ast.Expr] = {}

    def expand(node: ast.RegexMacro) -> ast.Expr:
        found = regex_cache.get(node)
        if found is None:
            found = regex_cache[node] = expand_regex(node)
        return found

    nfas: list[NFA] = []
    for name in names:
        rule = rules[name]
        nfa = NFA(budget)
        try:
            nfa.start, end = build_expression(nfa, rule.body, rule_ids, expand,
                                              unroll=name in unrolled)
        except BudgetExceeded:
            raise _too_large(rule) from None
        nfa.finals = {end}
        nfas.append(nfa)

    order = _callees_first(nfas, rule_ids[root])
    budgeted = {rule_ids[name]: n for name, n in
                budgeted_rule_names([rules[name] for name in names]).items()}
    for i in order:
        if budgeted and _is_lazy(rules[names[i]]):
            _check_no_budget_inside_lazy(i, nfas, names, budgeted, rules)
        if _is_lazy(rules[names[i]]):
            automaton = _flatten_lazy(i, nfas, rules[names[i]], budget)
            nfa = NFA(budget)
            try:
                nfa.start, nfa.finals = automaton.to_nfa(nfa)
            except BudgetExceeded:
                raise _too_large(rules[names[i]]) from None
            nfas[i] = nfa
    for i in budgeted:
        nfas[i] = _flatten_budgeted(i, nfas, rules[names[i]], set(budgeted), budget)

    for caller in order:
        _inline_small_calls(nfas, caller, budgeted)
        _eliminate_tail_calls(nfas[caller], caller)
    return _assemble(names, nfas, rule_ids[root], [rules[name] for name in names], budgeted)


def _is_lazy(rule: ast.Rule) -> bool:
    return any(a.key == "lazy" for a in rule.attributes)


def _too_large(rule: ast.Rule) -> GrammarError:
    return GrammarError([error(
        "GK121", f"grammar too large: it reaches the memory ceiling of {MAX_STATES:,} automaton "
        f"states (in rule `{rule.name}`)", rule.name_span or rule.span,
        "split the grammar, or use a counted repetition instead of written-out copies")])


def _reachable_rules(rules: dict[str, ast.Rule], roots: str | list[str]) -> list[str]:
    """Names of the rules reachable from ``roots``, in definition order."""
    seen = {roots} if isinstance(roots, str) else set(roots)
    stack = list(seen)
    while stack:
        for name, span in ast.referenced_rules(rules[stack.pop()].body):
            if name not in rules:
                raise GrammarError([error("GK103", f"rule `{name}` is not defined", span,
                                          f"define it with `{name} ::= ...`")])
            if name not in seen:
                seen.add(name)
                stack.append(name)
    return [name for name in rules if name in seen]


def _callees(nfa: NFA) -> set[int]:
    return {r for edges in nfa.call_edges for r, _ in edges}


def _callees_first(nfas: list[NFA], root: int) -> list[int]:
    """Rules in depth-first post-order of the call graph: callees before callers."""
    order: list[int] = []
    seen = {root}
    stack: list[tuple[int, list[int]]] = [(root, sorted(_callees(nfas[root])))]
    while stack:
        rule, pending = stack[-1]
        if pending:
            nxt = pending.pop()
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, sorted(_callees(nfas[nxt]))))
            continue
        stack.pop()
        order.append(rule)
    order.extend(i for i in range(len(nfas)) if i not in seen)
    return order


def _inline_small_calls(nfas: list[NFA], caller: int, budgeted: dict[int, int]) -> None:
    """Replace ``caller``'s calls to small other rules by copies of their automata.

    Inlining is an optimization: it stops while a quarter of the state budget is left. Rules
    in ``budgeted`` are never inlined (their budget counts their own text).
    """
    nfa = nfas[caller]
    reserve = nfa.budget.limit // 4
    limit = COUNTED_INLINE_LIMIT if nfa.counted else INLINE_LIMIT
    for p in range(nfa.num_states):
        if not nfa.call_edges[p]:
            continue
        kept = []
        for rule, q in nfa.call_edges[p]:
            callee = nfas[rule]
            if (rule == caller or callee.num_states > limit or rule in budgeted
                    or nfa.budget.remaining - callee.num_states < reserve):
                kept.append((rule, q))
                continue
            shift = nfa.copy_states(callee)
            nfa.add_epsilon(p, callee.start + shift)
            for final in callee.finals:
                nfa.add_epsilon(final + shift, q)
        nfa.call_edges[p] = kept


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
        nfa.byte_edges[s] or nfa.call_edges[s] or nfa.token_edges[s] for s in closure)


def _flatten_lazy(rule: int, nfas: list[NFA], node: ast.Rule, budget: Budget) -> Automaton:
    """The automaton of lazy ``rule``: references expanded, determinized, cut after finals."""

    def fail(why: str) -> GrammarError:
        return GrammarError([error(
            "GK121", f"lazy rule `{node.name}` cannot be flattened: {why}",
            node.name_span or node.span,
            "a lazy rule must be regular: literals, classes, repetitions and references to "
            "non-recursive rules")])

    _check_acyclic(rule, nfas, fail)
    flat = NFA(budget)
    try:
        flat.start, flat.finals = _copy_expanded(nfas, rule, flat)
    except BudgetExceeded:
        raise fail("it is too large") from None
    if any(flat.token_edges):
        raise fail("it matches vocabulary tokens")
    dfa = determinize(flat, MAX_LAZY_DFA_STATES)
    if dfa is None:
        raise fail("its automaton is too large")
    dfa = minimize(dfa)
    return trim(Automaton(dfa.start, dfa.finals,
                          [() if s in dfa.finals else edges
                           for s, edges in enumerate(dfa.byte_edges)],
                          [() for _ in dfa.call_edges], [() for _ in dfa.token_edges], True))


def _budget_error(node: ast.Rule, why: str, hint: str) -> GrammarError:
    return GrammarError([error(
        "GK116", f"`{node.name}[max_chars=...]` is not enforced: {why}",
        node.name_span or node.span, hint)])


def _check_no_budget_inside_lazy(rule: int, nfas: list[NFA], names: list[str],
                                 budgeted: dict[int, int], rules: dict[str, ast.Rule]) -> None:
    """Raise GK116 if lazy ``rule`` reaches a budgeted rule (flattening would drop the budget)."""
    inside = sorted(_reachable(rule, nfas) & set(budgeted))
    if inside:
        raise _budget_error(rules[names[inside[0]]], f"lazy rule `{names[rule]}` uses it",
                            "a budget inside a lazy rule is not supported; move `max_chars` "
                            f"to `{names[rule]}` or drop `lazy`")


def _reachable(rule: int, nfas: list[NFA]) -> set[int]:
    """The rules ``rule`` calls, directly or not (``rule`` itself only through recursion)."""
    seen: set[int] = set()
    stack = [rule]
    while stack:
        for callee in _callees(nfas[stack.pop()]):
            if callee not in seen:
                seen.add(callee)
                stack.append(callee)
    return seen


def _flatten_budgeted(rule: int, nfas: list[NFA], node: ast.Rule, budgeted: set[int],
                      budget: Budget) -> NFA:
    """The automaton of budgeted ``rule`` with every rule it references expanded.

    Raises GK116 when that is not possible or would not keep xgrammar's semantics: the rule
    is recursive, uses another budgeted rule, or matches vocabulary tokens.
    """

    def fail(why: str) -> GrammarError:
        return _budget_error(node, why, "a budgeted rule must be regular (literals, classes, "
                             "repetitions and references to non-recursive rules without "
                             "`max_chars`); remove `max_chars` to match without the budget")

    _check_acyclic(rule, nfas, fail)
    inner = _reachable(rule, nfas) & budgeted
    if inner:
        raise fail("it uses another rule with `max_chars` (nested budgets)")
    flat = NFA(budget)
    try:
        flat.start, flat.finals = _copy_expanded(nfas, rule, flat)
    except BudgetExceeded:
        raise _too_large(node) from None
    if any(flat.token_edges):
        raise fail("it matches vocabulary tokens")
    return flat


def _check_acyclic(rule: int, nfas: list[NFA], fail: Callable[[str], GrammarError]) -> None:
    """Raise ``fail(...)`` if the rules reachable from ``rule`` include a cycle."""
    state: dict[int, int] = {rule: 1}  # 1: on the current path, 2: done
    stack: list[tuple[int, list[int]]] = [(rule, sorted(_callees(nfas[rule])))]
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
            stack.append((nxt, sorted(_callees(nfas[nxt]))))


def _copy_expanded(nfas: list[NFA], rule: int, target: NFA) -> tuple[int, set[int]]:
    """Copy ``rule`` into ``target`` with every call replaced by a copy of the callee."""
    shift = target.copy_states(nfas[rule])
    start, finals = nfas[rule].start + shift, {f + shift for f in nfas[rule].finals}
    p = 0
    while p < target.num_states:
        calls = target.call_edges[p]
        target.call_edges[p] = []
        for callee, q in calls:
            inner = target.copy_states(nfas[callee])
            target.add_epsilon(p, nfas[callee].start + inner)
            for final in nfas[callee].finals:
                target.add_epsilon(final + inner, q)
        p += 1
    return start, finals


def _assemble(names: list[str], nfas: list[NFA], root: int, rules: list[ast.Rule],
              budgeted: dict[int, int]) -> CompiledGrammar:
    """Renumber the rules still called from the root and wrap them for lazy determinization."""
    kept = _live_rules(nfas, root)
    number = {old: new for new, old in enumerate(kept)}
    for old in kept:
        nfa = nfas[old]
        nfa.call_edges = [[(number[r], t) for r, t in edges] if edges else edges
                          for edges in nfa.call_edges]
    kept_nfas = [nfas[old] for old in kept]
    return CompiledGrammar(
        [names[old] for old in kept], number[root], kept_nfas, _nullable_rules(kept_nfas),
        [rules[old].name_span or rules[old].span for old in kept],
        {number[old]: n for old, n in budgeted.items() if old in number})


def _live_rules(nfas: list[NFA], root: int) -> list[int]:
    seen = {root}
    stack = [root]
    while stack:
        for r in _callees(nfas[stack.pop()]):
            if r not in seen:
                seen.add(r)
                stack.append(r)
    return sorted(seen)


def _nullable_rules(nfas: list[NFA]) -> frozenset[int]:
    """Rules that derive the empty string (a worklist over calls of nullable rules)."""
    callers: list[set[int]] = [set() for _ in nfas]
    for caller, nfa in enumerate(nfas):
        for callee in _callees(nfa):
            callers[callee].add(caller)
    nullable: set[int] = set()
    pending = set(range(len(nfas)))
    while pending:
        rule = pending.pop()
        if rule in nullable:
            continue
        nfa = nfas[rule]
        builder = SubsetBuilder.for_nfa(nfa)
        reach = builder.closure([builder.start_position()], nullable)
        if builder.is_final(reach):
            nullable.add(rule)
            pending |= callers[rule] - nullable
    return frozenset(nullable)
