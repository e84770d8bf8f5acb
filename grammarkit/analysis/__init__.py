"""Semantic analysis and lint rules: grammar-wide fixpoints and GK2xx warnings.

Entry points are :func:`grammarkit.analysis.lint.lint` (text in, diagnostics out) and
:func:`grammarkit.analysis.lint.lint_grammar_ast` (for grammars built by converters).
"""
