"""Front-ends that build a grammar from another notation, and exporters to other grammar formats.

``regex`` (regular expression → AST), ``json_schema`` (JSON Schema → AST), ``gbnf`` (llama.cpp
GBNF, both ways) and ``lark`` (Lark / llguidance text).
"""
