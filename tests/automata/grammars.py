"""Grammars covering every dialect feature, with the characters their test strings are made of.

Shared by the differential tests (against xgrammar) and the explanation and sampling tests.
"""

from __future__ import annotations

from dataclasses import dataclass

JSON = r"""
root ::= (("{" [ \n\r\t]* members_and_embrace) | ("[" [ \n\r\t]* elements_or_embrace))
value_non_str ::= (("{" [ \n\r\t]* members_and_embrace) | ("[" [ \n\r\t]* elements_or_embrace) | ("0" fraction exponent) | ([1-9] [0-9]* fraction exponent) | ("-" [0-9] fraction exponent) | ("-" [1-9] [0-9]* fraction exponent) | ("true") | ("false") | ("null")) (=([ \n\r\t]* member_suffix_suffix))
members_and_embrace ::= (("\"" characters_and_colon [ \n\r\t]* members_suffix) | ("}")) (=([ \n\r\t,}\]]))
members_suffix ::= ((value_non_str [ \n\r\t]* member_suffix_suffix) | ("\"" characters_and_embrace) | ("\"" characters_and_comma [ \n\r\t]* "\"" characters_and_colon [ \n\r\t]* members_suffix)) (=([ \n\r\t,}\]]))
member_suffix_suffix ::= (("}") | ("," [ \n\r\t]* "\"" characters_and_colon [ \n\r\t]* members_suffix)) (=([ \n\r\t,}\]]))
elements_or_embrace ::= (("{" [ \n\r\t]* members_and_embrace elements_rest [ \n\r\t]* "]") | ("[" [ \n\r\t]* elements_or_embrace elements_rest [ \n\r\t]* "]") | ("\"" characters_item elements_rest [ \n\r\t]* "]") | ("0" fraction exponent elements_rest [ \n\r\t]* "]") | ([1-9] [0-9]* fraction exponent elements_rest [ \n\r\t]* "]") | ("-" "0" fraction exponent elements_rest [ \n\r\t]* "]") | ("-" [1-9] [0-9]* fraction exponent elements_rest [ \n\r\t]* "]") | ("true" elements_rest [ \n\r\t]* "]") | ("false" elements_rest [ \n\r\t]* "]") | ("null" elements_rest [ \n\r\t]* "]") | ("]"))
elements ::= (("{" [ \n\r\t]* members_and_embrace elements_rest) | ("[" [ \n\r\t]* elements_or_embrace elements_rest) | ("\"" characters_item elements_rest) | ("0" fraction exponent elements_rest) | ([1-9] [0-9]* fraction exponent elements_rest) | ("-" [0-9] fraction exponent elements_rest) | ("-" [1-9] [0-9]* fraction exponent elements_rest) | ("true" elements_rest) | ("false" elements_rest) | ("null" elements_rest))
elements_rest ::= ("" | ([ \n\r\t]* "," [ \n\r\t]* elements))
characters_and_colon ::= (("\"" [ \n\r\t]* ":") | ([^\"\\\0-\x1f] characters_and_colon) | ("\\" escape characters_and_colon)) (=([ \n\r\t]* [\"{[0-9tfn\-]))
characters_and_comma ::= (("\"" [ \n\r\t]* ",") | ([^\"\\\0-\x1f] characters_and_comma) | ("\\" escape characters_and_comma)) (=([ \n\r\t]* "\""))
characters_and_embrace ::= (("\"" [ \n\r\t]* "}") | ([^\"\\\0-\x1f] characters_and_embrace) | ("\\" escape characters_and_embrace)) (=([ \n\r\t]* [},]))
characters_item ::= (("\"") | ([^\"\\\0-\x1f] characters_item) | ("\\" escape characters_item)) (=([ \n\r\t]* [,\]]))
escape ::= (([\"\\/bfnrt]) | ("u" [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9] [A-Fa-f0-9]))
fraction ::= ("" | ("." [0-9] [0-9]*))
exponent ::= ("" | ("e" sign [0-9] [0-9]*) | ("E" sign [0-9] [0-9]*))
sign ::= ("" | ("+") | ("-"))
"""
"""xgrammar 0.2.8's builtin JSON grammar, as ``str(xgrammar.Grammar.builtin_json_grammar())``."""


@dataclass(frozen=True)
class Case:
    """A grammar and the pieces its random test strings are made of."""

    name: str
    ebnf: str
    atoms: tuple[bytes, ...]
    vocabulary: tuple[str, ...] | None = None
    """Token-level grammars are checked with a matcher built on this vocabulary."""


def _atoms(text: str, *extra: bytes) -> tuple[bytes, ...]:
    return tuple(c.encode() for c in text) + extra


CASES = (
    Case("json", JSON, _atoms('{}[]",:0123456789.eE+-tfnrulsa \n\t\\/u', b"\xc3\xa9", b"\x01")),
    Case("arithmetic", r"""
root ::= expr
expr ::= expr "+" term | expr "-" term | term
term ::= term "*" factor | term "/" factor | factor
factor ::= "(" expr ")" | "-" factor | [0-9]+ ("." [0-9]+)?
""", _atoms("0123456789+-*/().")),
    Case("unicode_classes", r"""
root ::= ([^a-z\u00e9] | [\u4e00-\u9fff] | "é" | [\U0001F600-\U0001F64F])* "!"
""", _atoms("aZé中😀!9\u00ff", b"\x00", b"\xff", b"\xe4", b"\xed\xa0\x80", b"\xc0\x80")),
    Case("repetition_bounds", r"""
root ::= [a-c]{2,4} "x"{3} ("y" | "z"){0,2} "w"{2,} "v"{0} ("u"? "t"){1,2}
""", _atoms("abcxyzwvut")),
    Case("nested_rules", r"""
root ::= list
list ::= "(" items? ")"
items ::= item ("," item)*
item ::= list | atom
atom ::= [a-z] [a-z0-9]*
""", _atoms("(),ab1")),
    Case("mutual_recursion", r"""
root ::= a
a ::= "x" b | "y"
b ::= "z" a | a "w" | ""
""", _atoms("xyzw")),
    Case("empty_strings", r"""
root ::= "" | "a" "" x () | ()
x ::= () | "b" x
""", _atoms("ab")),
    Case("nullable_left_recursion", r"""
root ::= x
x ::= y x "a" | "b"
y ::= "" | "c"
""", _atoms("abc")),
    Case("right_recursion", r"""
root ::= list
list ::= item "," list | item
item ::= "[" list "]" | [0-9]
""", _atoms("0123[],")),
    Case("tag_dispatch", r"""
root ::= TagDispatch(("<f>", call), ("<fx", alt), ("f>", other), excludes=("</s>", "!!"))
call ::= "{" [a-z]* "}"
alt ::= "1"
other ::= "2" | ""
""", _atoms("<>/fs!{}ax12", b"\xff")),
    Case("tag_dispatch_once", r"""
root ::= "q" t "end"
t ::= TagDispatch(("ab", y), ("b", z), loop_after_dispatch=false)
y ::= "1"+
z ::= "2"
""", _atoms("abqend12")),
    Case("substring", r"""
root ::= "<" Substring("alpha", "beta", "gamma") ">" Substring("x", "日本")
""", _atoms("<>alphbetgmx", "日".encode(), "本".encode())),
    Case("lookahead", r"""
root ::= (word " ")* word "!"
word ::= [a-z]+ (= [ !])
""", _atoms("ab !")),
    Case("any_and_empty_class", r"""
root ::= [^] [^]? | [] "a" | "\0" "\xff" | "x" [^\u0000-\u007f]
""", _atoms("ax\u00ff\u0100", b"\x00", b"\xff", b"\x80", b"\xc3", b"\xf4\x8f\xbf\xbf")),
    Case("utf8_boundaries", r"""
root ::= [\u007f-\u0081\u07ff-\u0800\uffff-\U00010001\ud7ff-\ue000\U0010ffff]+
""", _atoms("\x7f\x80\x81\u07ff\u0800\uffff\U00010000\U00010001\ud7ff\ue000\U0010ffff",
            b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe0\x80\x80")),
    Case("lazy", r"""
root ::= x "b"? y
x[lazy] ::= "a"+
y ::= "a"* "c"
""", _atoms("abc")),
    Case("xml", r"""
root ::= element
element ::= "<" name ">" content "</" name ">"
content ::= ([^<&]+ | element | "&amp;")*
name ::= [a-z]+
""", (b"<", b">", b"/", b"a", b"b", b"&amp;", b"&", b" ", b"x")),
    Case("regex", r"""
root ::= Regex("[a-c]+(x|y)?\\d{1,2}") "-" Regex("[^q]", flags="i") Regex("a.", json_string=true)
""", _atoms('abcxy19-qQa."\\\n')),
    Case("regex_quirks", r"""
root ::= Regex("a.", flags="i") Regex("[^a]") Regex("[\\u0700-\\u0900]*") Regex(".") "!"
""", _atoms("aA\nb!é\u0800", b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xe0\x9f\xbf",
            b"\xc0\x80", b"\xf4\x90\x80\x80")),
    Case("tokens", r"""
root ::= "a" (Token(1) | "b") | TokenTagDispatch((0, r)) | "c" ExcludeToken(0, 1)*
r ::= "x"
""", _atoms("abcx"), vocabulary=("x", "a", "b")),
)
