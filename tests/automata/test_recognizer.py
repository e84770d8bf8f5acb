"""``Grammar.matches`` construct by construct (the verdicts are xgrammar 0.2.8's, checked in
``test_differential``), and the incremental ``Recognizer`` interface."""

from __future__ import annotations

import pytest

from grammarkit.automata.earley import Recognizer
from grammarkit.grammar import Grammar

CONSTRUCTS: list[tuple[str, str, list[str | bytes], list[str | bytes]]] = [
    ("literal", 'root ::= "ab" "c"', ["abc"], ["", "ab", "abcc", "abd"]),
    ("empty literal", 'root ::= ""', [""], ["a"]),
    ("empty group", "root ::= ()", [""], ["a"]),
    ("escapes are code points", r'root ::= "\xff" "\u00e9"', ["ÿé"], [b"\xff\xe9"]),
    ("surrogate escape", r'root ::= "\ud800"', [b"\xed\xa0\x80"], ["?"]),
    ("class", "root ::= [a-c0-9]", ["a", "c", "5"], ["d", "", "ab"]),
    ("unicode class", r"root ::= [\u4e00-\u9fff]", ["中"], ["a", "中".encode()[:2]]),
    ("negated class", "root ::= [^a-z]", ["A", "é", "😀", b"\xed\xa0\x80"], ["a", "", "AB"]),
    ("negated class rejects invalid UTF-8", "root ::= [^a]",
     [b"\xc3\xa9"], [b"\xc3", b"\xff", b"\x80", b"\xc0\x80", b"\xe0\x80\x80",
                     b"\xf4\x90\x80\x80"]),
    ("any code point", "root ::= [^]", ["a", "\U0010ffff"], ["", "ab", b"\xf8"]),
    ("empty class", "root ::= [] | \"x\"", ["x"], ["", "a"]),
    ("choice", 'root ::= "a" | "bc" | ""', ["a", "bc", ""], ["b", "abc"]),
    ("optional", 'root ::= "a"?', ["", "a"], ["aa"]),
    ("star", 'root ::= "ab"*', ["", "ab", "abab"], ["a", "aba"]),
    ("plus", 'root ::= "a"+', ["a", "aaaa"], [""]),
    ("exactly", 'root ::= "a"{3}', ["aaa"], ["aa", "aaaa"]),
    ("between", 'root ::= "a"{2,3}', ["aa", "aaa"], ["a", "aaaa"]),
    ("at least", 'root ::= "a"{2,}', ["aa", "aaaaaaa"], ["a"]),
    ("zero times", 'root ::= "a"{0} "b"', ["b"], ["ab"]),
    ("repeat of nullable", 'root ::= ("a"?){2,3} "b"', ["b", "ab", "aaab"], ["aaaab"]),
    ("left recursion", 'root ::= root "a" | "b"', ["b", "baaa"], ["a", "ab"]),
    ("right recursion", 'root ::= "a" root | "b"', ["b", "aaab"], ["a", "ba"]),
    ("mutual recursion", 'root ::= "(" x ")" | "."\nx ::= root root?',
     ["(.)", "((.).)"], ["()", "(((.)"]),
    ("hidden left recursion", 'root ::= e root "x" | "y"\ne ::= "" | "e"',
     ["y", "yx", "eyxx"], ["x", "yy"]),
    ("no finite derivation", 'root ::= "a" root', [], ["", "a", "aaaa"]),
    ("self loop", "root ::= root", [], ["", "a"]),
    ("lookahead is a hint", 'root ::= x "c"\nx ::= "a" (= "b")', ["ac"], ["abc"]),
    ("tag dispatch", 'root ::= TagDispatch(("<a>", y))\ny ::= "1"',
     ["", "free", "x<a>1", "<a>1<a>1 tail", "x<a", b"\xff"], ["<a>", "<a>2"]),
    ("tag dispatch once", ('root ::= TagDispatch(("<a>", y), loop_after_dispatch=false)\n'
     'y ::= "1"'), ["hi<a>1"], ["hi<a>1bye", "<a>1<a>1"]),
    ("tag dispatch excludes", 'root ::= TagDispatch(("ab", y), excludes=("b",))\ny ::= "1"',
     ["a", "xa"], ["ab1", "b", "xb"]),
    ("tag found anywhere", 'root ::= TagDispatch(("aab", y))\ny ::= "1"',
     ["aaab1", "aab1"], ["aaab2", "aab2"]),
    ("tag suffix does not dispatch", ('root ::= TagDispatch(("ab", y), ("xaby", z))\n'
     'y ::= "1"\nz ::= "2"'), ["xab", "xabz", "xaby2"], ["xaby"]),
    ("tag dispatch in a sequence", 'root ::= "q" TagDispatch(("<a>", y)) "x"\ny ::= "1"',
     ["qx", "qhix", "q<a>1x"], ["q<a>x"]),
    ("substring", 'root ::= Substring("ab", "c", "d")',
     ["", "ab", "c", "cd", "abcd"], ["a", "b", "bc", "abd"]),
    ("tokens match no bytes", 'root ::= "a" Token(1)? | ExcludeToken(2)', ["a"], ["", "a1"]),
    ("token tag dispatch", 'root ::= TokenTagDispatch((0, y))\ny ::= "x"', [""], ["x"]),
    ("lazy rule", 'root ::= x "b"?\nx[lazy] ::= "a"+', ["a", "ab"], ["aa", "aab"]),
    ("lazy rule with references", 'root ::= x\nx[lazy] ::= z "a"\nz ::= "a"*', ["a"], ["aa"]),
    ("attributes do not matter", 'root ::= x\nx[max_tokens=1, capture] ::= "a"*',
     ["", "aaa"], ["b"]),
]


@pytest.mark.parametrize(("source", "accepted", "rejected"),
                         [c[1:] for c in CONSTRUCTS], ids=[c[0] for c in CONSTRUCTS])
def test_construct(source: str, accepted: list[str | bytes], rejected: list[str | bytes]) -> None:
    grammar = Grammar.from_ebnf(source)
    assert [s for s in accepted if not grammar.matches(s)] == []
    assert [s for s in rejected if grammar.matches(s)] == []


def test_custom_root() -> None:
    grammar = Grammar.from_ebnf('a ::= "x" b\nb ::= "y"', root="b")
    assert grammar.matches("y") and not grammar.matches("xy")


def test_incremental_interface_agrees_with_whole_inputs() -> None:
    grammar = Grammar.from_ebnf('root ::= "[" (item ("," item)*)? "]"\nitem ::= [0-9]+')
    recognizer = Recognizer(grammar.compiled)
    start = recognizer.initial()
    assert not recognizer.is_accepting(start)
    opened = recognizer.advance(start, b"[1")
    assert opened is not None and opened.position == 2
    assert recognizer.advance(opened, b"x") is None
    done = recognizer.advance(opened, b"2,3]")
    assert done is not None and recognizer.is_accepting(done)
    # states are immutable snapshots: the earlier one can be continued differently
    other = recognizer.advance(opened, b"]")
    assert other is not None and recognizer.is_accepting(other)
    assert recognizer.advance(done, b"]") is None


def test_byte_by_byte_equals_whole() -> None:
    grammar = Grammar.from_ebnf('root ::= ("ab" | "a" "b"?)* "é"')
    recognizer = Recognizer(grammar.compiled)
    for text in ["é", "abaé", "aab", "ab\u00e9"]:
        state = recognizer.initial()
        for byte in text.encode():
            advanced = recognizer.advance(state, bytes([byte]))
            if advanced is None:
                break
            state = advanced
        else:
            assert recognizer.is_accepting(state) == grammar.matches(text)
            continue
        assert not grammar.matches(text)
