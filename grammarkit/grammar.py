"""``Grammar``: the immutable, checked grammar value, its constructors and exporters."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from grammarkit.diagnostics import Diagnostic, GrammarError
from grammarkit.ebnf import ast
from grammarkit.source import SourceText, decode_source

if TYPE_CHECKING:
    from grammarkit.automata.compiled import CompiledGrammar
    from grammarkit.automata.earley import Explanation


@dataclass(frozen=True, eq=False)
class Grammar:
    """A checked grammar in the XGrammar dialect.

    Build one with :meth:`from_ebnf`, :meth:`from_json_schema`, :meth:`from_regex` or
    :meth:`from_gbnf`; it never changes afterwards.

    Attributes
    ----------
    ast
        The grammar's rules.
    root
        The name of the rule a derivation starts from.
    source
        The EBNF text it was parsed from, when there was one.
    warnings
        Non-fatal diagnostics found while building it (e.g. relaxed JSON Schema keywords).
    """

    ast: ast.GrammarAST
    root: str = "root"
    source: SourceText | None = None
    warnings: tuple[Diagnostic, ...] = field(default=())
    _references_checked: bool = field(default=False, repr=False)
    """Whether every reference and ``Regex`` pattern was checked when parsed (then compiling
    walks no rule body up front)."""

    # -- constructors ----------------------------------------------------------------------
    @classmethod
    def from_ebnf(
        cls, text: str | bytes, root: str = "root", *, path: str | None = None
    ) -> Grammar:
        """Parse and check EBNF ``text``.

        Raises
        ------
        GrammarError
            With every error found (not only the first), each located by line and column.
        """
        from grammarkit.automata.regex_macro import check_regex_macros
        from grammarkit.ebnf.parser import parse

        source = SourceText(decode_source(text), path or "<string>")
        result = parse(source.text, root, lazy=True)  # bodies read when first used
        found = [*result.diagnostics, *check_regex_macros(result.regex_macros)]
        diagnostics = [d.with_source(source) for d in found]
        if any(d.is_error for d in diagnostics):
            raise GrammarError(diagnostics)
        return cls(result.ast, root, source, tuple(diagnostics), _references_checked=True)

    @classmethod
    def from_json_schema(
        cls,
        schema: Any,
        *,
        whitespace: str = "flexible",
        indent: int | None = None,
        separators: tuple[str, str] | None = None,
        strict: bool = False,
        property_order: str = "schema",
        lenient: bool = False,
    ) -> Grammar:
        """Convert a JSON Schema (dict, JSON text, path, or pydantic model class).

        Raises
        ------
        SchemaError
            For invalid schemas, and for keywords no grammar can enforce unless ``lenient``.
        """
        from grammarkit.convert.json_schema import convert_schema

        grammar_ast, warnings = convert_schema(
            schema,
            whitespace=whitespace,
            indent=indent,
            separators=separators,
            strict=strict,
            property_order=property_order,
            lenient=lenient,
        )
        return cls(grammar_ast, "root", None, tuple(warnings))

    @classmethod
    def from_regex(cls, pattern: str, *, flavor: str = "ecma") -> Grammar:
        """A grammar matching exactly the strings the regular expression matches in full."""
        from grammarkit.convert.regex import regex_to_grammar

        return cls(regex_to_grammar(pattern, flavor=flavor), "root")

    @classmethod
    def from_gbnf(cls, text: str, root: str = "root", *, path: str | None = None) -> Grammar:
        """Read a llama.cpp GBNF grammar; its text (named ``path``) is the grammar's source,
        so findings point into it."""
        from grammarkit.convert.gbnf import dialect_name, from_gbnf

        return cls(from_gbnf(text, root=root), dialect_name(root),
                   SourceText(text, path or "<string>"))

    # -- exporters -------------------------------------------------------------------------
    def to_ebnf(self) -> str:
        """Canonical XGrammar-dialect text; xgrammar accepts it unchanged."""
        from grammarkit.ebnf.printer import print_grammar

        return print_grammar(self.ast, self.source.text if self.source is not None else None)

    def to_gbnf(self) -> str:
        """llama.cpp GBNF text."""
        from grammarkit.convert.gbnf import to_gbnf

        with self._located_errors():
            return to_gbnf(self.ast, self.root)

    def to_lark(self) -> str:
        """Lark (and llguidance) grammar text."""
        from grammarkit.convert.lark import to_lark

        with self._located_errors():
            return to_lark(self.ast, self.root)

    def to_railroad(self, rule: str | None = None) -> str:
        """Railroad diagrams: an HTML page of every rule (linked), or one rule as SVG.

        Needs the ``diagram`` extra (the ``railroad-diagrams`` package).
        """
        from grammarkit.authoring.railroad import grammar_html, rule_svg

        if rule is None:
            return grammar_html(self.ast.rules, title=self.root)
        found = [r for r in self.ast.rules if r.name == rule]
        if not found:
            raise KeyError(f"no rule `{rule}` in this grammar")
        return rule_svg(found[0], standalone=True)

    @contextmanager
    def _located_errors(self) -> Iterator[None]:
        """Attach this grammar's source text to the diagnostics of an exporter's error."""
        try:
            yield
        except GrammarError as exc:
            if self.source is None:
                raise
            exc.diagnostics = [
                d if d.source is not None else d.with_source(self.source) for d in exc.diagnostics
            ]
            raise

    def __str__(self) -> str:
        return self.to_ebnf()

    # -- recognition -----------------------------------------------------------------------
    @cached_property
    def compiled(self) -> CompiledGrammar:
        """The byte-level automata for this grammar (built on first use).

        Rules with ``max_chars`` are ordinary rules whose budgets the recognizer and the
        decoder enforce as xgrammar's parser does (:mod:`grammarkit.automata.char_deadlines`).

        Raises
        ------
        GrammarError
            GK121 past the memory ceiling (see ``docs/diagnostics.md``).
        """
        from grammarkit.automata.compiler import compile_grammar

        with self._located_errors():
            return compile_grammar(self.ast, self.root,
                                   references_checked=self._references_checked)

    def matches(self, text: str | bytes, timeout: float | None = 60.0) -> bool:
        """Whether the whole of ``text`` is in the grammar's language (xgrammar's verdict).

        Raises ``MatchTimeout`` (a ``TimeoutError``, ``GK122``) after ``timeout`` seconds
        (``None``: no limit).
        """
        from grammarkit.automata.earley import Recognizer

        return Recognizer(self.compiled).matches(_input_bytes(text), timeout)

    def explain(self, text: str | bytes, timeout: float | None = 60.0) -> Explanation | None:
        """``None`` if ``text`` matches; otherwise where matching fails and what was expected.

        When the text is JSON rejected only because an object's keys come in another order
        than the grammar's (a schema's, with ``property_order="schema"``), the explanation is a
        ``KeyOrderExplanation`` naming the property that comes too late, with a ``hint``.

        Raises ``MatchTimeout`` (a ``TimeoutError``, ``GK122``) after ``timeout`` seconds
        (``None``: no limit).
        """
        from grammarkit.automata.earley import Recognizer
        from grammarkit.automata.key_order import key_order_explanation

        data = _input_bytes(text)
        recognizer = Recognizer(self.compiled)
        started = time.perf_counter()
        explanation = recognizer.explain(data, timeout)
        if explanation is None:
            return None
        # the key-order check reads the text up to the object again: it may take twice as long
        # as the match did (at least a second), within what is left of the timeout
        elapsed = time.perf_counter() - started
        budget = max(1.0, 2 * elapsed)
        if timeout is not None:
            budget = min(budget, max(0.0, timeout - elapsed))
        return key_order_explanation(recognizer, data, explanation, budget)

    @property
    def rule_names(self) -> list[str]:
        """Rule names in definition order."""
        return [rule.name for rule in self.ast.rules]


def _input_bytes(text: str | bytes) -> bytes:
    """The bytes of a text to match: ``str`` as UTF-8 (lone surrogates kept as their bytes).

    Raises
    ------
    TypeError
        For anything but ``str``, ``bytes``, ``bytearray`` or ``memoryview`` (``bytes(5)``
        would otherwise be five NUL bytes).
    """
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text)
    raise TypeError(f"expected str or bytes to match, not {type(text).__name__}")


__all__ = ["Grammar", "GrammarError"]
