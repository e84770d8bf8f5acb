"""Byte-level automata for grammars, and exact recognition over them.

A grammar compiles (:func:`~grammarkit.automata.compiler.compile_grammar`) to a
:class:`~grammarkit.automata.compiled.CompiledGrammar`: one automaton per rule over bytes, with
rule calls and vocabulary tokens as extra edge kinds. The
:class:`~grammarkit.automata.earley.Recognizer` runs an Earley parser over those automata and
decides membership exactly as xgrammar 0.2.8 does.

Modules, in pipeline order: ``utf8`` (code points to byte sequences), ``nfa`` (the working
automaton), ``construct`` (rule bodies to NFAs), ``tagdispatch`` and ``regex_macro`` (macro
semantics), ``determinize`` (subset construction, minimization), ``compiler`` (the pipeline),
``compiled`` (the result), ``earley`` (recognition and explanations).
"""
