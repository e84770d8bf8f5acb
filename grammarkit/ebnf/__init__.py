"""The XGrammar/SGLang EBNF dialect: scanner, Lark grammar, parser, AST and printer."""
