"""Railroad (syntax) diagrams of grammar rules, as SVG and as one self-contained HTML page.

Drawn with the ``railroad-diagrams`` package (extra ``diagram``). Each rule reference links to
that rule's diagram (``#rule-NAME``); literals and classes are terminals; ``?``, ``*``, ``+``
and ``{m,n}`` are the usual loops, with the bounds written under a counted loop.
"""

from __future__ import annotations

import html
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from grammarkit.ebnf import ast
from grammarkit.ebnf.printer import print_expr

if TYPE_CHECKING:
    from grammarkit.diagnostics import Diagnostic

MAX_LABEL = 40
"""Terminal labels longer than this many characters are shortened with an ellipsis."""

_PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h2 { font-family: monospace; margin: 1.5em 0 0.3em; }
nav a { font-family: monospace; margin-right: 0.8em; }
pre.errors { background: #fee; padding: 1em; overflow-x: auto; }
svg.railroad-diagram g.non-terminal a text { fill: #0645ad; text-decoration: underline; }
"""


def _railroad() -> Any:
    try:
        import railroad
    except ImportError:  # pragma: no cover - the dev extra installs it
        raise ImportError("railroad diagrams need the `diagram` extra: "
                          "pip install 'grammarkit[diagram]'") from None
    return railroad


def rule_diagram(rule: ast.Rule) -> Any:
    """The ``railroad.Diagram`` of one rule."""
    rr = _railroad()
    try:
        body = _node(rr, rule.body)
    except RecursionError:
        body = rr.Comment("(nested too deeply to draw)")
    items = [body]
    if rule.lookahead is not None:
        items.append(rr.Comment(f"followed by {_label(print_expr(rule.lookahead))}"))
    return rr.Diagram(*items)


def rule_svg(rule: ast.Rule, *, standalone: bool = False) -> str:
    """One rule's diagram as SVG text; ``standalone`` embeds the style and XML namespaces."""
    out = io.StringIO()
    diagram = rule_diagram(rule)
    if standalone:
        diagram.writeStandalone(out.write)
    else:  # namespaces declared, so each inline diagram is well-formed XML on its own too
        diagram.attrs["xmlns"] = "http://www.w3.org/2000/svg"
        diagram.attrs["xmlns:xlink"] = "http://www.w3.org/1999/xlink"
        diagram.writeSvg(out.write)
    return out.getvalue()


def grammar_html(rules: Sequence[ast.Rule], *, title: str = "grammar",
                 errors: Sequence[Diagnostic] = ()) -> str:
    """A self-contained HTML page: a diagram per rule, linked, with ``errors`` listed on top."""
    rr = _railroad()
    names = [rule.name for rule in rules]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{rr.DEFAULT_STYLE}{_PAGE_STYLE}</style>",
        "</head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if errors:
        rendered = "\n\n".join(d.render() for d in errors)
        parts.append(f"<p>The grammar has errors; the rules that parse are drawn below.</p>"
                     f'<pre class="errors">{html.escape(rendered)}</pre>')
    parts.append("<nav>" + " ".join(f'<a href="#rule-{_anchor(n)}">{html.escape(n)}</a>'
                                    for n in names) + "</nav>")
    for rule in rules:
        parts.append(f'<h2 id="rule-{_anchor(rule.name)}">{html.escape(rule.name)}</h2>')
        parts.append(rule_svg(rule))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _node(rr: Any, expr: ast.Expr) -> Any:
    if isinstance(expr, ast.Literal):
        return rr.Terminal(_label(print_expr(expr)))
    if isinstance(expr, ast.CharClass):
        return rr.Terminal(_label(print_expr(expr)), cls="class")
    if isinstance(expr, ast.RuleRef):
        return rr.NonTerminal(expr.name, href=f"#rule-{_anchor(expr.name)}")
    if isinstance(expr, ast.Sequence):
        return rr.Sequence(*(_node(rr, item) for item in expr.items)) if expr.items else rr.Skip()
    if isinstance(expr, ast.Choice):
        return rr.Choice(0, *(_node(rr, alternative) for alternative in expr.alternatives))
    if isinstance(expr, ast.Repeat):
        return _repeat(rr, expr)
    if isinstance(expr, ast.TagDispatch):
        tags = [rr.Sequence(rr.Terminal(_label(print_expr(ast.Literal(tag)))),
                            rr.NonTerminal(name, href=f"#rule-{_anchor(name)}"))
                for tag, name in expr.tags]
        dispatch = rr.Choice(0, rr.Comment("any text"), *tags)
        return rr.Group(rr.ZeroOrMore(dispatch) if expr.loop_after_dispatch else dispatch,
                        rr.Comment("TagDispatch"))
    return rr.Terminal(_label(print_expr(expr)), cls="macro")


def _repeat(rr: Any, node: ast.Repeat) -> Any:
    item = _node(rr, node.item)
    if node.max == 0:
        return rr.Skip()
    if (node.min, node.max) == (0, 1):
        return rr.Optional(item)
    if node.max is None and node.min <= 1:
        return rr.OneOrMore(item) if node.min == 1 else rr.ZeroOrMore(item)
    bounds = f"{node.min}+ times" if node.max is None else (
        f"{node.min} times" if node.min == node.max else f"{node.min} to {node.max} times")
    loop = rr.OneOrMore(item, rr.Comment(bounds))
    return rr.Optional(loop) if node.min == 0 else loop


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def _anchor(name: str) -> str:
    return html.escape(name, quote=True)
