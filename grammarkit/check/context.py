"""What every check reads: the grammar, the vocabulary, and facts computed once and shared."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf import ast
from grammarkit.grammar import Grammar
from grammarkit.source import SourceText
from grammarkit.vocab import Vocabulary

if TYPE_CHECKING:
    from grammarkit.analysis.properties import GrammarProperties
    from grammarkit.check.facts import ExprFacts
    from grammarkit.check.tokenizers import Encoder
    from grammarkit.decode import TokenMatcher

Progress = Callable[[str, int, int], None]
"""``progress(check_name, done, total)``: called as a long check advances."""


@dataclass
class CheckContext:
    """The inputs of one `check` run and the shared facts derived from them.

    Attributes
    ----------
    grammar, vocab
        What is checked.
    stop_ids
        The stop ids in force (the vocabulary's unless replaced).
    encoder
        The tokenizer's canonical encoder, or None.
    samples, seed
        How many random sentences and walks (at most), and their seed.
    source
        What diagnostics point into: the grammar's text, or a named empty text for grammars
        without one (JSON Schemas), so every finding still names its file.
    progress
        Progress callback, or None.
    notes
        Why checks were skipped or cut short.
    matcher_usable
        False when `matcher` cannot be built for this grammar and vocabulary.
    """

    grammar: Grammar
    vocab: Vocabulary
    stop_ids: frozenset[int]
    encoder: Encoder | None
    samples: int
    seed: int
    source: SourceText
    progress: Progress | None = None
    notes: list[str] = field(default_factory=list)
    matcher_usable: bool = True

    def report(self, code: str, severity: Severity, message: str, node: ast.Expr | None,
               hint: str | None = None) -> Diagnostic:
        """A diagnostic located at ``node`` (when it has a span) in this grammar's source."""
        span = node.span if node is not None else None
        return Diagnostic(code, severity, message, span, hint, self.source)

    def tick(self, name: str, done: int, total: int) -> None:
        """Report progress of check ``name``."""
        if self.progress is not None:
            self.progress(name, done, total)

    @cached_property
    def properties(self) -> GrammarProperties:
        from grammarkit.analysis.properties import GrammarProperties

        return GrammarProperties(self.grammar.ast, self.grammar.root)

    @cached_property
    def facts(self) -> ExprFacts:
        from grammarkit.check.facts import ExprFacts

        return ExprFacts(self.properties)

    @cached_property
    def reachable_rules(self) -> list[ast.Rule]:
        """The rules reachable from the root, in definition order."""
        reachable = self.properties.reachable
        return [rule for rule in self.grammar.ast.rule_map().values() if rule.name in reachable]

    @cached_property
    def matcher(self) -> TokenMatcher:
        from grammarkit.decode import TokenMatcher

        return TokenMatcher(self.grammar, self.vocab, stop_token_ids=sorted(self.stop_ids))

    @cached_property
    def ordinary_ids(self) -> dict[bytes, int]:
        """Bytes -> id of every ordinary (non-special, non-empty) token (lowest id wins)."""
        special = self.vocab.special_ids
        index: dict[bytes, int] = {}
        for token_id, token in enumerate(self.vocab.tokens):
            if token and token_id not in special:
                index.setdefault(token, token_id)
        return index

    @cached_property
    def max_token_length(self) -> int:
        return max((len(token) for token in self.ordinary_ids), default=0)

    def fewest_tokens(self, data: bytes) -> list[int] | None:
        """The fewest ordinary tokens spelling ``data`` exactly, or None if none can."""
        index = self.ordinary_ids
        longest = self.max_token_length
        best: list[list[int] | None] = [None] * (len(data) + 1)
        best[0] = []
        for start in range(len(data)):
            path = best[start]
            if path is None:
                continue
            for end in range(start + 1, min(len(data), start + longest) + 1):
                token_id = index.get(data[start:end])
                if token_id is None:
                    continue
                current = best[end]
                if current is None or len(current) > len(path) + 1:
                    best[end] = [*path, token_id]
        return best[len(data)]


def expanded(node: ast.Expr) -> ast.Expr:
    """A ``Regex(...)`` macro as the expression it stands for (spans: the macro's); others as is."""
    if not isinstance(node, ast.RegexMacro):
        return node
    from grammarkit.automata.regex_macro import expand_regex

    return expand_regex(node)


def grammar_nodes(rules: Sequence[ast.Rule]) -> list[tuple[ast.Rule, ast.Expr]]:
    """Every expression node of ``rules`` (``Regex`` macros expanded), with its rule."""
    found = []
    for rule in rules:
        stack: list[tuple[ast.Expr, ast.Span | None]] = [(rule.body, None)]
        while stack:
            node, macro_span = stack.pop()
            if isinstance(node, ast.RegexMacro):
                stack.append((expanded(node), node.span))
                continue
            found.append((rule, _with_span(node, macro_span)))
            stack.extend((kid, macro_span) for kid in reversed(ast.children(node)))
    return found


def _with_span(node: ast.Expr, span: ast.Span | None) -> ast.Expr:
    """``node`` located at ``span`` (a ``Regex`` macro's) when it has no span of its own."""
    if span is None or node.span is not None:
        return node
    from dataclasses import replace

    return replace(node, span=span)
