"""``CompiledGrammar``: every rule as a byte-level automaton, built lazily, state by state.

This is the form both the exact recognizer (:mod:`grammarkit.automata.earley`) and the token-mask
decoder work on: a *recursive transition network*.

States
    Ints numbered in the order they are first met, so a state is a small hashable value and
    sets of states are ``frozenset[int]``. ``state_rule[s]`` is the rule owning ``s``. A rule's
    automaton is built when its start is first asked for (``rule_start[r]``): small rules are
    determinized and minimized at once; medium ones are built lazily (an object's many key
    rules are predicted together, one is entered: :data:`DEFER_ABOVE`) and completed once the
    decoder has built a few of their states (a verdict leaves them lazy); large ones and those with counted repetitions are
    determinized lazily (:mod:`grammarkit.automata.lazy_dfa`): a state's edges are computed the
    first time one of ``byte_edges[s]``, ``call_edges[s]``, ``token_edges[s]`` is read, so a
    grammar costs what inputs visit, not the size of its automata. Lazy rules without counters
    hold their position sets as rank intervals (:mod:`grammarkit.automata.interval_subsets`),
    so a long chain of optional items costs a few ints per state, not its length.
Rules
    Ints ``0..num_rules-1`` (``rule_names`` in grammar order: every rule of a parsed grammar
    without rule attributes, else only the rules reachable from the root). A derivation of
    ``r`` begins in ``rule_start[r]`` and ends in any state of ``finals`` owned by ``r``.
    ``nullable`` holds the rules that derive the empty string.
Edges, per state
    ``byte_edges[s]``: ``(lo, hi, target)`` sorted by ``lo``, for one byte in ``lo..hi``
    (never overlapping: every rule automaton is deterministic). ``call_edges[s]``: ``(rule,
    target)``, taken after a complete derivation of ``rule``. ``token_edges[s]``: ``(TokenEdge,
    target)`` for ``Token``/``ExcludeToken``; they only match vocabulary tokens, never bytes.
Entry
    A pseudo-rule ``<start> ::= root`` numbered ``num_rules``: ``entry_state`` (0) has one call
    edge to the root rule leading to ``accept_state`` (1), which is final. A parse begins with
    ``entry_state`` and has recognised its input when ``accept_state`` is reached.
Memory ceiling
    Lazily built states hold at most :data:`MAX_POSITIONS` NFA positions in all; past that,
    reading an edge raises ``GrammarError`` ``GK121`` (no real grammar comes near it).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Container, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from grammarkit._gc import paused_gc
from grammarkit.automata.byte_facts import ByteFacts
from grammarkit.automata.determinize import Automaton, determinize, minimal_dfa, minimize
from grammarkit.automata.interval_subsets import Fragmented, IntervalSubsets
from grammarkit.automata.lazy_dfa import PlainSubsets, Positions, SubsetBuilder, clamped
from grammarkit.automata.nfa import NFA, TokenEdge
from grammarkit.diagnostics import GrammarError, error

if TYPE_CHECKING:
    import numpy as np

    from grammarkit.ebnf.ast import Span, TokenSet, TokenTagDispatch

ByteEdges = tuple[tuple[int, int, int], ...]
CallEdges = tuple[tuple[int, int], ...]
TokenEdges = tuple[tuple[TokenEdge, int], ...]
Content = Positions | tuple[int, ...]
"""What a lazily built state stands for: a position set, or rank intervals (interval_subsets)."""

MAX_POSITIONS = 4_000_000
"""How many NFA positions the lazily built states of one grammar may hold (about 400 MB)."""

EAGER_LIMIT = 2_000
"""Rules whose NFA (without counters) has at most this many states are determinized and
minimized completely: at once, or (rules without calls past :data:`DEFER_ABOVE` states)
once entered."""

DEFER_ABOVE = 64
"""Rules whose NFA has more states than this (up to :data:`EAGER_LIMIT`) are built lazily, not
determinized at once. A schema's key rules (a few hundred states each, escapes spelled out)
are all predicted wherever a key may come and the recognizer's rows read a few bytes into each;
an object's rule (with calls) has states for every property's key and value, and a small
instance reads a few; built completely they cost tsconfig's first verdict more than half of
its time. Verdicts leave them lazy. Once the decoder uses the grammar
(:meth:`CompiledGrammar.prefer_minimal`), which computes token masks per state, each is
determinized and minimized completely when :data:`DEFERRED_STATES` of its states have been
expanded, and rules with calls are built completely at once (their unminimized states would
cost the decoder's p99 more mask computations)."""

DEFERRED_STATES = 24
"""How many states of a deferred rule the decoder may expand before it is built completely
(verdicts read that deep into every predicted key; at 4 or 8 most keys complete)."""

_DFA_GROWTH = 4
"""An eager determinization gives up (the rule goes lazy) past this many times the NFA size."""

_INTERVALS_AFTER = 4
"""A lazy rule without counters switches to rank intervals once its states hold this many
times its NFA's size in positions (large sets that keep coming: a chain of optional items;
an alternation's sets shrink as bytes are read and never get there)."""

E = TypeVar("E")


class RuleSource(Protocol):
    """Each rule's automaton by number, possibly compiled when first read."""

    def __getitem__(self, rule: int, /) -> NFA | Automaton: ...

    def __len__(self) -> int: ...

    def byte_facts(self, nullable: Container[int], /) -> ByteFacts:
        """The byte ranges and FOLLOW sets of every rule, given the nullable ones."""
        ...


class LazyEdges(Generic[E]):
    """One edge kind of every state, computed on first read (``edges[state]``)."""

    __slots__ = ("_data", "_expand")

    def __init__(self, data: list[E | None], expand: Callable[[int], None]):
        self._data = data
        self._expand = expand

    def __getitem__(self, state: int) -> E:
        found = self._data[state]
        if found is None:
            self._expand(state)
            found = self._data[state]
            assert found is not None
        return found

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> None:
        raise TypeError("lazy edges cannot be iterated; read them state by state")


class _RuleStarts:
    __slots__ = ("_grammar",)

    def __init__(self, grammar: CompiledGrammar):
        self._grammar = grammar

    def __getitem__(self, rule: int) -> int:
        return self._grammar.start_of(rule)

    def __len__(self) -> int:
        return self._grammar.num_rules


class CompiledGrammar:
    """Byte-level automata for every rule of a grammar (see the module docstring).

    Parameters
    ----------
    rule_names
        Names of the rules, numbered in this order.
    root
        The root rule's number.
    rules
        Per rule, its NFA (determinized on demand) or an already deterministic automaton;
        ``rules[r]`` is read when rule ``r`` is first reached (it may compile the rule then).
    nullable
        The rules that derive the empty string (possibly decided as they are asked for).
    spans
        Where each rule is defined (for the memory-ceiling diagnostic).
    char_deadlines
        ``{rule: N}`` for rules with ``max_chars=N``, whose budgets the recognizer and the
        decoder enforce (:mod:`grammarkit.automata.char_deadlines`).
    token_nodes
        Gives the ``Token``/``ExcludeToken``/``TokenTagDispatch`` nodes of the rules' bodies
        (read as :attr:`token_nodes` by the decoder's check of their ids against a vocabulary).
    """

    def __init__(self, rule_names: Sequence[str], root: int, rules: RuleSource,
                 nullable: Collection[int], spans: Sequence[Span | None],
                 char_deadlines: dict[int, int] | None = None,
                 token_nodes: Callable[[], Sequence[TokenSet | TokenTagDispatch]] = tuple):
        self.rule_names = tuple(rule_names)
        self._token_nodes = token_nodes
        self.root = root
        self.nullable = nullable
        self._rules = rules
        self._spans = list(spans)
        self._starts = [-1] * len(self._rules)
        self._builders: list[SubsetBuilder | IntervalSubsets | None] = [None] * len(self._rules)
        self.char_deadlines = char_deadlines or {}
        self._facts: ByteFacts | None = None
        self._index: dict[tuple[int, Content], int] = {}
        self._content: list[Content | None] = []
        self._bytes: list[ByteEdges | None] = []
        self._calls: list[CallEdges | None] = []
        self._tokens: list[TokenEdges | None] = []
        self._canonical: dict[tuple[int, int], int] = {}
        self._positions = 0
        self._rule_positions = [0] * len(self._rules)
        self._no_intervals: set[int] = set()  # rules whose sets do not compress
        self._deferred: dict[int, int] = {}  # rules built lazily so far: their states expanded
        self._minimal = False  # whether deferred rules are minimized (prefer_minimal)
        self.state_rule: list[int] = []
        self.finals: set[int] = set()
        self.byte_edges: LazyEdges[ByteEdges] = LazyEdges(self._bytes, self._expand)
        self.call_edges: LazyEdges[CallEdges] = LazyEdges(self._calls, self._expand)
        self.token_edges: LazyEdges[TokenEdges] = LazyEdges(self._tokens, self._expand)
        self.rule_start = _RuleStarts(self)
        self.counted = False
        """Whether some rule built so far has counted repetitions (then :meth:`canonical_state`
        matters)."""
        self.entry_state = self._new_state(self.num_rules, None, ((root, 1),))
        self.accept_state = self._new_state(self.num_rules, None, ())
        self.finals.add(self.accept_state)

    @property
    def token_nodes(self) -> tuple[TokenSet | TokenTagDispatch, ...]:
        """The ``Token``/``ExcludeToken``/``TokenTagDispatch`` nodes of the rules' bodies."""
        return tuple(self._token_nodes())

    # -- sizes -------------------------------------------------------------------------------------
    @property
    def num_states(self) -> int:
        """States built so far."""
        return len(self.state_rule)

    @property
    def num_rules(self) -> int:
        return len(self.rule_names)

    # -- building ----------------------------------------------------------------------------------
    def start_of(self, rule: int) -> int:
        """The start state of ``rule`` (building its automaton on first use)."""
        start = self._starts[rule]
        if start < 0:
            start = self._starts[rule] = self._build(rule)
        return start

    def _build(self, rule: int) -> int:
        source = self._rules[rule]
        if isinstance(source, NFA) and (source.counted or source.deferred):
            self.counted = True  # a part built later may hold counted repetitions
        deferred = False
        if (isinstance(source, NFA) and not source.counted and not source.deferred
                and source.num_states <= EAGER_LIMIT):
            calls = any(source.call_edges)
            if source.num_states > DEFER_ABOVE and not (calls and self._minimal):
                deferred = True
            else:
                dfa = determinize(source, max(_DFA_GROWTH * source.num_states, 256))
                if dfa is not None:
                    source = minimize(dfa)
        if isinstance(source, Automaton):
            return self._add_automaton(rule, source)
        builder = self._builders[rule] = SubsetBuilder.for_nfa(source)
        if deferred:
            self._deferred[rule] = 0
        return self._lazy_state(rule, builder.start())

    def prefer_minimal(self) -> None:
        """Build minimal automata from now on (the decoder calls this: it computes token masks
        per state).

        Until then, medium rules are built lazily and stay so (see :data:`DEFER_ABOVE`): a
        verdict reads a few of their states. Those read :data:`DEFERRED_STATES` deep are
        completed now, the others once they are; medium rules with calls built later are
        minimized at once.
        """
        if self._minimal:
            return
        self._minimal = True
        for rule in [r for r, expanded in self._deferred.items() if expanded >= DEFERRED_STATES]:
            self._complete(rule)

    def _add_automaton(self, rule: int, source: Automaton) -> int:
        """Add the states of ``source`` to ``rule``; return the number of its start."""
        base = self.num_states
        for s in range(source.num_states):
            self._new_state(rule, None, tuple((r, t + base) for r, t in source.call_edges[s]),
                            tuple((lo, hi, t + base) for lo, hi, t in source.byte_edges[s]),
                            tuple((k, t + base) for k, t in source.token_edges[s]))
        self.finals.update(f + base for f in source.finals)
        return source.start + base

    def _complete(self, rule: int) -> None:
        """Determinize and minimize deferred ``rule`` completely; each of its states built so
        far lazily takes the edges of the state standing for its position set (trimmed dead
        ends lose theirs), so an input goes on in the minimal automaton."""
        del self._deferred[rule]
        builder = self._builders[rule]
        assert isinstance(builder, PlainSubsets)
        found = minimal_dfa(builder.nfa, max(_DFA_GROWTH * builder.nfa.num_states, 256))
        if found is None:
            return  # it stays lazy
        dfa, standing = found
        base = self._add_automaton(rule, dfa) - dfa.start
        for state, content in enumerate(self._content):
            if content is None or self.state_rule[state] != rule:
                continue
            assert isinstance(content, frozenset)  # plain subsets: never switched to intervals
            target = standing.get(content)
            self._content[state] = None
            del self._index[(rule, content)]
            if target is None:
                self._bytes[state], self._calls[state], self._tokens[state] = (), (), ()
            else:
                self._bytes[state] = self._bytes[base + target]
                self._calls[state] = self._calls[base + target]
                self._tokens[state] = self._tokens[base + target]
        self._builders[rule] = None

    def _new_state(self, rule: int, content: Content | None, calls: CallEdges | None,
                   byte_edges: ByteEdges | None = (), tokens: TokenEdges | None = ()) -> int:
        self.state_rule.append(rule)
        self._content.append(content)
        self._bytes.append(byte_edges)
        self._calls.append(calls)
        self._tokens.append(tokens)
        return len(self.state_rule) - 1

    def _lazy_state(self, rule: int, positions: Content) -> int:
        key = (rule, positions)
        found = self._index.get(key)
        if found is None:
            size = len(positions)
            self._positions += size
            self._rule_positions[rule] += size
            if self._positions > MAX_POSITIONS:
                raise GrammarError([error(
                    "GK121", f"grammar too large: its automata reach the memory ceiling of "
                    f"{MAX_POSITIONS:,} positions (in rule `{self.rule_names[rule]}`)",
                    self._spans[rule], "nest fewer ambiguous repetitions inside each other")])
            found = self._index[key] = self._new_state(rule, positions, None, None, None)
            builder = self._builders[rule]
            assert builder is not None
            if builder.is_final(positions):  # type: ignore[arg-type]  # content of the builder
                self.finals.add(found)
        return found

    def _expand(self, state: int) -> None:
        """Compute the edges of lazily built ``state``."""
        rule = self.state_rule[state]
        expanded = self._deferred.get(rule)
        if expanded is not None:
            if expanded >= DEFERRED_STATES and self._minimal:
                self._complete(rule)
                if self._bytes[state] is not None:
                    return
            else:
                self._deferred[rule] = expanded + 1
        positions = self._content[state]
        builder = self._builders[rule]
        assert positions is not None and builder is not None
        if (isinstance(builder, PlainSubsets) and rule not in self._no_intervals
                and rule not in self._deferred  # plain sets: they are looked up on completion
                and self._rule_positions[rule] > _INTERVALS_AFTER * builder.nfa.num_states):
            builder = self._to_intervals(rule, builder.nfa)
            positions = self._content[state]
            assert positions is not None
        moves: tuple[Sequence[tuple[int, int, Content]], Sequence[tuple[int, Content]],
                     Sequence[tuple[TokenEdge, Content]]]
        if isinstance(builder, IntervalSubsets):
            assert isinstance(positions, tuple)
            try:
                moves = builder.moves(positions)
            except Fragmented:
                self._no_intervals.add(rule)
                self._to_plain_sets(rule, builder)
                self._expand(state)
                return
        else:
            assert isinstance(positions, frozenset)
            moves = (builder.byte_moves(positions), builder.call_moves(positions),
                     builder.token_moves(positions))
        intern = self._lazy_state
        ranges: list[tuple[int, int, int]] = []
        for lo, hi, targets in moves[0]:
            t = intern(rule, targets)
            if ranges and ranges[-1][2] == t and ranges[-1][1] + 1 == lo:
                ranges[-1] = (ranges[-1][0], hi, t)
            else:
                ranges.append((lo, hi, t))
        calls = tuple((r, intern(rule, targets)) for r, targets in moves[1])
        tokens = tuple((k, intern(rule, targets)) for k, targets in moves[2])
        self._bytes[state] = tuple(ranges)
        self._calls[state] = calls
        self._tokens[state] = tokens

    def _to_intervals(self, rule: int, nfa: NFA) -> IntervalSubsets:
        """Continue ``rule`` with rank intervals: its sets are large and keep coming."""
        builder = IntervalSubsets(nfa)
        self._builders[rule] = builder
        self._rebuild_index(rule, frozenset, builder.compress)
        return builder

    def _rebuild_index(self, rule: int, kind: type, convert: Callable[[Any], Content]) -> None:
        for state, content in enumerate(self._content):
            if content is not None and isinstance(content, kind) and self.state_rule[state] == rule:
                new = convert(content)
                del self._index[(rule, content)]
                self._index[(rule, new)] = state
                self._content[state] = new
                self._positions += len(new) - len(content)

    def _to_plain_sets(self, rule: int, builder: IntervalSubsets) -> None:
        """Continue ``rule`` with plain position sets: its interval sets do not compress."""
        self._builders[rule] = PlainSubsets(builder.nfa)
        self._rebuild_index(rule, tuple, builder.expand)

    def _counted_positions(self, state: int) -> Positions | None:
        """The positions of ``state`` if its rule has counted repetitions, else ``None``."""
        positions = self._content[state]
        if not isinstance(positions, frozenset):
            return None
        builder = self._builders[self.state_rule[state]]
        return positions if isinstance(builder, SubsetBuilder) and builder.counted else None

    def canonical_state(self, state: int, horizon: int) -> int:
        """A state accepting the same byte strings as ``state`` up to ``horizon`` bytes long.

        Counts of counted repetitions far from both bounds are replaced by one representative
        (:meth:`~grammarkit.automata.nfa.Loop.clamp`), so a decoder sees the middle of
        ``[a-z]{0,100000}`` as one state. Other states are their own canonical state.
        """
        positions = self._counted_positions(state)
        if positions is None:
            return state
        key = (state, horizon)
        found = self._canonical.get(key)
        if found is None:
            found = self._canonical[key] = self._lazy_state(self.state_rule[state],
                                                             clamped(positions, horizon))
        return found

    def run_limit(self, state: int) -> int | None:
        """How many iterations of a counted loop ``state`` can run uniformly, all at once.

        The loop is the innermost one of the deepest counter stack in ``state``; every position
        whose counters mention it must have it innermost, with the same counts. When those
        counts are in a stretch where every iteration decides alike (below ``min - 1``, or from
        there below ``max - 1``), :meth:`shifted` by up to the returned number of iterations
        behaves exactly like running them (if one iteration leaves the other positions as they
        are). ``None`` when ``state`` does not qualify or fewer than 2 iterations are left
        (:meth:`~grammarkit.automata.lazy_dfa.SubsetBuilder.run_limit`).
        """
        positions = self._counted_positions(state)
        if positions is None:
            return None
        builder = self._builders[self.state_rule[state]]
        assert isinstance(builder, SubsetBuilder)
        return builder.run_limit(positions)

    def shifted(self, state: int, iterations: int) -> int:
        """``state`` with the count of its :meth:`run_limit` loop raised by ``iterations``."""
        positions = self._counted_positions(state)
        builder = self._builders[self.state_rule[state]]
        assert positions is not None and isinstance(builder, SubsetBuilder)
        return self._lazy_state(self.state_rule[state], builder.shifted(positions, iterations))

    def follow_sets(self) -> Sequence[int]:
        """Per rule (the pseudo-rule last): the bytes that can come right after it completes.

        256-bit ints over any context in the grammar, closed over rules that complete at once
        with the rule; read off the rule bodies, counters ignored (a superset, see
        :mod:`grammarkit.automata.byte_facts`; no rule is compiled for it). Each set is
        solved the first time it is read, from the bodies of the rules around it.
        """
        return self._byte_facts().follow

    def _byte_facts(self) -> ByteFacts:
        if self._facts is None:
            with paused_gc():
                self._facts = self._rules.byte_facts(self.nullable)
        return self._facts

    def build_all(self, limit: int) -> bool:
        """Build every rule's automaton completely, rule by rule (a deterministic numbering).

        Stops, returning ``False``, once more than ``limit`` states exist.
        """
        for rule in range(self.num_rules):
            start = self.start_of(rule)
            seen = {start}
            stack = [start]
            while stack:
                if self.num_states > limit:
                    return False
                s = stack.pop()
                targets = [t for _, _, t in self.byte_edges[s]]
                targets += [t for _, t in self.call_edges[s]] + [t for _, t in self.token_edges[s]]
                for t in targets:
                    if t not in seen:
                        seen.add(t)
                        stack.append(t)
        return True

    # -- inspection ------------------------------------------------------------------------------
    def byte_ranges(self) -> set[tuple[int, int]]:
        """Every byte range some edge of some rule may carry (unbuilt automata included).

        Bytes lying in exactly the same ranges are never told apart by the grammar. Read off
        the rule bodies (no rule is compiled for it).
        """
        return set(self._byte_facts().byte_ranges)

    def rule_states(self, rule: int) -> list[int]:
        """Every state of ``rule`` reachable from its start, ascending (builds them all)."""
        start = self.start_of(rule)
        seen = {start}
        stack = [start]
        while stack:
            s = stack.pop()
            targets = [t for _, _, t in self.byte_edges[s]] + [t for _, t in self.call_edges[s]]
            targets += [t for _, t in self.token_edges[s]]
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    stack.append(t)
        return sorted(seen)

    def byte_table(self) -> np.ndarray:
        """Byte transitions of every state as an ``int32`` array ``[states, 256]`` (``-1``: none).

        Builds every rule's automaton completely first (only for small grammars).
        """
        import numpy as np

        for rule in range(self.num_rules):
            self.rule_states(rule)
        table = np.full((self.num_states, 256), -1, dtype=np.int32)
        for s in range(self.num_states):
            for lo, hi, t in self.byte_edges[s]:
                table[s, lo:hi + 1] = t
        return table

    def format(self) -> str:
        """A readable listing of every rule's automaton (builds them all; for debugging, tests)."""
        lines = []
        for rule, name in enumerate(self.rule_names):
            nullable = " nullable" if rule in self.nullable else ""
            lines.append(f"{name}{nullable}:")
            for s in self.rule_states(rule):
                lines.append(f"  {self._format_state(s)}")
        return "\n".join(lines)

    def _format_state(self, s: int) -> str:
        marks = ("start " if s in self._starts else "") + ("final " if s in self.finals else "")
        edges = [f"{_byte_range(lo, hi)}->{t}" for lo, hi, t in self.byte_edges[s]]
        edges += [f"{self.rule_names[r]}->{t}" for r, t in self.call_edges[s]]
        edges += [f"{k}->{t}" for k, t in self.token_edges[s]]
        return f"{s}: {marks}[{', '.join(edges)}]"

    def __str__(self) -> str:
        return self.format()


def _byte_range(lo: int, hi: int) -> str:
    def show(b: int) -> str:
        c = chr(b)
        return c if c.isprintable() and b < 0x7F and c not in "[]-\\'" else f"\\x{b:02x}"

    return f"'{show(lo)}'" if lo == hi else f"[{show(lo)}-{show(hi)}]"
