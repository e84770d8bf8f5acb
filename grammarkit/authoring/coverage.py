"""Grammar coverage: which alternatives, repetition branches and class ranges texts exercised.

Like line and branch coverage for code: every rule reachable from the root contributes
*coverage items* —

- each alternative of every ``|``;
- each branch of every repetition: its minimum count (``?`` absent, ``*`` zero times, ``+``
  once) and, where the bound allows, more than its minimum;
- each range of every character class (a negated class counts as one item)

— and each accepted text marks the items of one of its derivations
(:mod:`grammarkit.authoring.derivation`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from grammarkit.authoring.derivation import Deriver
from grammarkit.ebnf import ast
from grammarkit.ebnf.printer import print_expr
from grammarkit.source import SourceText

KINDS = ("alternatives", "repetitions", "ranges")


@dataclass(frozen=True)
class Item:
    """One coverage item.

    Attributes
    ----------
    rule
        The rule it belongs to.
    kind
        ``"alternatives"``, ``"repetitions"`` or ``"ranges"``.
    label
        What it is, readably (``alternative 2: "u" [0-9a-fA-F]{4}``).
    span
        Where its node stands in the grammar's text, when known.
    """

    rule: str
    kind: str
    label: str
    span: ast.Span | None


@dataclass
class Coverage:
    """Coverage items of a grammar and the texts that hit them."""

    items: list[Item]
    hits: dict[Item, int] = field(default_factory=dict)
    _keys: dict[tuple[int, str, int | None], Item] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, grammar: ast.GrammarAST, root: str = "root") -> Coverage:
        """Every coverage item of the rules reachable from ``root``, none hit yet."""
        coverage = cls(items=[])
        rules = grammar.rule_map()
        for name in _reachable(rules, root):
            for node in ast.walk(rules[name].body):
                coverage._add_node(name, node)
        return coverage

    def _add_node(self, rule: str, node: ast.Expr) -> None:
        if isinstance(node, ast.Choice):
            for index, alternative in enumerate(node.alternatives):
                label = f"alternative {index + 1}: {_short(print_expr(alternative))}"
                self._add(rule, "alternatives", label, node, index, alternative.span)
        elif isinstance(node, ast.Repeat):
            quantified = _short(print_expr(node))
            self._add(rule, "repetitions", f"{quantified} {_minimum_label(node)}", node, 0,
                      node.span)
            if node.max is None or node.max > node.min:
                self._add(rule, "repetitions", f"{quantified} {_more_label(node)}", node, 1,
                          node.span)
        elif isinstance(node, ast.CharClass):
            if node.negated:
                self._add(rule, "ranges", f"{print_expr(node)}", node, None, node.span)
            else:
                for index, (lo, hi) in enumerate(node.ranges):
                    label = print_expr(ast.CharClass(((lo, hi),)))
                    if len(node.ranges) > 1:
                        label += f" of {_short(print_expr(node))}"
                    self._add(rule, "ranges", label, node, index, node.span)

    def _add(self, rule: str, kind: str, label: str, node: ast.Expr, index: int | None,
             span: ast.Span | None) -> None:
        key = (id(node), kind, index)
        if key in self._keys:  # a node shared by several rules counts once
            return
        item = Item(rule, kind, label, span)
        self._keys[key] = item
        self.items.append(item)
        self.hits[item] = 0

    def record(self, grammar: ast.GrammarAST, root: str, texts: Iterable[str]) -> list[str]:
        """Mark the items each text's derivation uses; the texts with no derivation.

        Raises
        ------
        DerivationTooLarge
            For a text too long or a grammar too ambiguous to derive within the budget.
        """
        deriver = Deriver(grammar, root)
        missed = []
        for text in texts:
            if not deriver.derive(text, _Recorder(self)):
                missed.append(text)
        return missed

    def _hit(self, node: ast.Expr, kind: str, index: int | None) -> None:
        item = self._keys.get((id(node), kind, index))
        if item is not None:
            self.hits[item] += 1

    # -- reports -----------------------------------------------------------------------------
    @property
    def covered(self) -> int:
        return sum(1 for item in self.items if self.hits[item])

    @property
    def percent(self) -> float:
        """Items hit, in percent (100 for a grammar with no items)."""
        return 100.0 * self.covered / len(self.items) if self.items else 100.0

    def missed(self) -> list[Item]:
        """Items no text hit, in grammar order."""
        return [item for item in self.items if not self.hits[item]]

    def by_rule(self) -> dict[str, dict[str, tuple[int, int]]]:
        """Per rule and kind: ``(covered, total)``."""
        table: dict[str, dict[str, tuple[int, int]]] = {}
        for item in self.items:
            row = table.setdefault(item.rule, {})
            covered, total = row.get(item.kind, (0, 0))
            row[item.kind] = (covered + bool(self.hits[item]), total + 1)
        return table

    def render(self, source: SourceText | None = None) -> str:
        """A text table per rule, the total, and every missed item with its location."""
        rows: list[tuple[str, ...]] = [("rule", *KINDS, "cover")]
        for rule, kinds in self.by_rule().items():
            covered = sum(c for c, _ in kinds.values())
            total = sum(t for _, t in kinds.values())
            rows.append((rule, *(_fraction(kinds.get(k)) for k in KINDS),
                         f"{100 * covered / total:.0f}%"))
        totals = {k: (sum(1 for i in self.items if i.kind == k and self.hits[i]),
                      sum(1 for i in self.items if i.kind == k)) for k in KINDS}
        rows.append(("TOTAL", *(_fraction(totals[k]) if totals[k][1] else "-" for k in KINDS),
                     f"{self.percent:.1f}%"))
        widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) if c == 0 else cell.rjust(w)
                           for c, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                 for row in rows]
        missed = self.missed()
        if missed:
            lines.append("")
            lines.append("Not covered:")
            for item in missed:
                lines.append(f"  {_where(item, source)}{item.rule}: {item.label}")
        return "\n".join(lines)

    def to_json(self, source: SourceText | None = None) -> dict[str, Any]:
        """A JSON-ready summary: totals, per-rule fractions and the missed items."""
        return {
            "covered": self.covered,
            "total": len(self.items),
            "percent": round(self.percent, 2),
            "rules": {rule: {kind: {"covered": c, "total": t} for kind, (c, t) in kinds.items()}
                      for rule, kinds in self.by_rule().items()},
            "missed": [{"rule": item.rule, "kind": item.kind, "label": item.label,
                        **_json_position(item, source)} for item in self.missed()],
        }


class _Recorder:
    """A derivation visitor marking coverage items."""

    def __init__(self, coverage: Coverage):
        self.coverage = coverage

    def alternative(self, choice: ast.Choice, index: int) -> None:
        self.coverage._hit(choice, "alternatives", index)

    def repetition(self, repeat: ast.Repeat, count: int) -> None:
        self.coverage._hit(repeat, "repetitions", 0 if count <= repeat.min else 1)

    def char_range(self, node: ast.CharClass, index: int | None) -> None:
        self.coverage._hit(node, "ranges", index)


def _reachable(rules: dict[str, ast.Rule], root: str) -> list[str]:
    seen = {root} if root in rules else set()
    order = [root] if root in rules else []
    for name in order:
        for ref, _ in ast.referenced_rules(rules[name].body):
            if ref in rules and ref not in seen:
                seen.add(ref)
                order.append(ref)
    return order


def _minimum_label(node: ast.Repeat) -> str:
    if node.op == "?":
        return "absent"
    return f"repeated {_times(node.min)}"


def _more_label(node: ast.Repeat) -> str:
    return "present" if node.op == "?" else f"repeated more than {_times(node.min)}"


def _times(count: int) -> str:
    return f"{count} time{'' if count == 1 else 's'}"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _fraction(value: tuple[int, int] | None) -> str:
    return "-" if value is None else f"{value[0]}/{value[1]}"


def _where(item: Item, source: SourceText | None) -> str:
    if source is None or item.span is None:
        return ""
    position = source.position(item.span.start)
    return f"{source.path}:{position.line}:{position.column}: "


def _json_position(item: Item, source: SourceText | None) -> dict[str, int]:
    if source is None or item.span is None:
        return {}
    position = source.position(item.span.start)
    return {"line": position.line, "column": position.column}
