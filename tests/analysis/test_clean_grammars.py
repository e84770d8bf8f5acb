"""Well-written grammars get no warnings: the rules are precise, not noisy."""

from __future__ import annotations

from pathlib import Path

import pytest

from grammarkit.analysis.lint import lint

JSON = r'''
root ::= value
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws (member ("," ws member)*)? "}"
member ::= string ws ":" ws value ws
array ::= "[" ws (value ws ("," ws value ws)*)? "]"
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
number ::= "-"? ("0" | [1-9] [0-9]{0,15}) ("." [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?
ws ::= [ \t\n\r]{0,16}
'''

ARITHMETIC = r'''
root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= number | "(" expr ")" | "-" factor
number ::= [0-9]+ ("." [0-9]+)?
'''

CSV = r'''
root ::= header row*
header ::= line
row ::= line
line ::= field ("," field)* "\r"? "\n"
field ::= quoted | bare
quoted ::= "\"" ([^"] | "\"\"")* "\""
bare ::= [^,"\r\n]*
'''

ISO8601 = r'''
root ::= date ("T" time zone?)?
date ::= year "-" month "-" day
year ::= [0-9]{4}
month ::= "0" [1-9] | "1" [0-2]
day ::= "0" [1-9] | [12] [0-9] | "3" [01]
time ::= hour ":" minute (":" second ("." [0-9]{1,9})?)?
hour ::= [01] [0-9] | "2" [0-3]
minute ::= [0-5] [0-9]
second ::= [0-5] [0-9] | "60"
zone ::= "Z" | [+-] hour ":" minute
'''

SQL_SELECT = r'''
root ::= "SELECT " columns " FROM " name where? order? limit? ";"
columns ::= "*" | name (", " name)*
where ::= " WHERE " condition ((" AND " | " OR ") condition)*
condition ::= name " " op " " literal
op ::= "=" | "<>" | "<=" | ">=" | "<" | ">"
order ::= " ORDER BY " name (" ASC" | " DESC")?
limit ::= " LIMIT " [1-9] [0-9]{0,5}
literal ::= [0-9]+ | "'" [^']* "'"
name ::= [a-zA-Z_] [a-zA-Z0-9_]{0,63}
'''

TOOL_CALLS = r'''
root ::= TagDispatch(("<tool_call>", call), excludes=("</think>",))
call ::= "{\"name\": \"" [a-z_]+ "\"}" "</tool_call>"
'''

LOOKAHEADS = r'''
root ::= word (" " word)*
word ::= [a-z]+ (= " ")
'''


@pytest.mark.parametrize("text", [JSON, ARITHMETIC, CSV, ISO8601, SQL_SELECT, TOOL_CALLS,
                                  LOOKAHEADS])
def test_well_written_grammars_are_clean(text: str) -> None:
    assert lint(text) == []


CURATED = sorted((Path(__file__).resolve().parents[2] / "grammars").glob("*.ebnf"))


@pytest.mark.parametrize("path", CURATED, ids=[p.name for p in CURATED])
def test_curated_grammars_are_clean(path: Path) -> None:
    assert lint(path.read_bytes(), str(path)) == []


@pytest.mark.xgrammar
def test_xgrammar_builtin_json_grammar_is_clean() -> None:
    import xgrammar

    assert lint(str(xgrammar.Grammar.builtin_json_grammar())) == []
