"""Regular expressions to grammar: xgrammar's ``from_regex`` and Python's ``re`` as references.

The AST a pattern converts to is run through an independent recognizer (a Python ``re`` pattern
printed from the AST) and compared, string by string, with the reference engine.
"""

from __future__ import annotations

import importlib
import random
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.codepoints import MAX_CODEPOINT
from grammarkit.convert.regex import regex_to_ast, regex_to_grammar
from grammarkit.diagnostics import GrammarError
from grammarkit.ebnf import ast
from grammarkit.grammar import Grammar

# -- an independent recognizer and a sampler for regex-shaped ASTs ------------------------------


def python_regex(expr: ast.Expr) -> str:
    """A Python ``re`` pattern matching exactly what ``expr`` matches."""
    if isinstance(expr, ast.Literal):
        return re.escape(expr.value)
    if isinstance(expr, ast.CharClass):
        if not expr.ranges:
            return r"[\s\S]" if expr.negated else r"(?!)"
        body = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in expr.ranges)
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, ast.Sequence):
        return "".join(f"(?:{python_regex(item)})" for item in expr.items)
    if isinstance(expr, ast.Choice):
        return "(?:" + "|".join(python_regex(a) for a in expr.alternatives) + ")"
    if isinstance(expr, ast.Repeat):
        high = "" if expr.max is None else str(expr.max)
        return f"(?:{python_regex(expr.item)}){{{expr.min},{high}}}"
    raise TypeError(f"not a regex-shaped node: {expr!r}")


def accepts(expr: ast.Expr, text: str) -> bool:
    return re.fullmatch(python_regex(expr), text) is not None


_FILLER = "aZ09_- .\n\t\xa0é中😀\"\\"


def sample(expr: ast.Expr, rng: random.Random) -> str:
    """A random string that ``expr`` matches."""
    if isinstance(expr, ast.Literal):
        return expr.value
    if isinstance(expr, ast.CharClass):
        if expr.negated:
            pool = [c for c in _FILLER if not any(lo <= ord(c) <= hi for lo, hi in expr.ranges)]
            return rng.choice(pool) if pool else ""
        low, high = rng.choice(expr.ranges)
        return chr(rng.choice([low, high, rng.randint(low, high)]))
    if isinstance(expr, ast.Sequence):
        return "".join(sample(item, rng) for item in expr.items)
    if isinstance(expr, ast.Choice):
        return sample(rng.choice(expr.alternatives), rng)
    if isinstance(expr, ast.Repeat):
        high = expr.min + 3 if expr.max is None else min(expr.max, expr.min + 3)
        return "".join(sample(expr.item, rng) for _ in range(rng.randint(expr.min, high)))
    raise TypeError(f"not a regex-shaped node: {expr!r}")


def mutate(text: str, rng: random.Random) -> str:
    """``text`` with one character inserted, deleted or replaced."""
    i = rng.randint(0, len(text))
    c = rng.choice(_FILLER)
    action = rng.choice(["insert", "delete", "replace"]) if text else "insert"
    if action == "insert":
        return text[:i] + c + text[i:]
    i = min(i, len(text) - 1)
    return text[:i] + (c if action == "replace" else "") + text[i + 1 :]


def probe_strings(expr: ast.Expr, seed: int, extra: tuple[str, ...] = ()) -> list[str]:
    """Strings worth asking both engines about: members of ``expr``, near misses, fixed probes."""
    rng = random.Random(seed)
    members = [sample(expr, rng) for _ in range(8)]
    near = [mutate(s, rng) for s in members]
    return list(dict.fromkeys([*extra, *members, *near, "", "a", "\n", "é", "0", " "]))


# -- random regular expressions, as ASTs and as pattern text ------------------------------------

_LITERALS = "ab-x0 .é中😀*+?()[]{}|^$\\/\"'"
_META = set(".*+?()[]{}|^$\\/")


def random_regex(rng: random.Random, depth: int = 3) -> ast.Expr:
    """A random regex-shaped AST (what a pattern can spell)."""
    kind = rng.choice(["literal", "class", "class"] + ["sequence", "choice", "repeat"] * (depth > 0))
    if kind == "literal":
        return ast.Literal("".join(rng.choice(_LITERALS) for _ in range(rng.randint(1, 3))))
    if kind == "class":
        ranges = []
        for _ in range(rng.randint(1, 3)):
            low = ord(rng.choice("aAm0 é中😀-]\\"))  # not "^": xgrammar misreads `[\\^`
            ranges.append((low, low + rng.choice([0, 0, 1, 5, 25])))
        return ast.CharClass(tuple(sorted(ranges)), negated=rng.random() < 0.3)
    if kind == "repeat":
        low = rng.choice([0, 0, 1, 2])
        high = rng.choice([None, low, low + 1, low + 3])
        return ast.Repeat(random_regex(rng, depth - 1), low, high)
    children = tuple(random_regex(rng, depth - 1) for _ in range(rng.randint(2, 3)))
    if kind == "choice":
        if rng.random() < 0.2:
            children += (ast.Literal(""),)
        return ast.Choice(children)
    return ast.Sequence(children)


def _pattern_char(cp: int, in_class: bool) -> str:
    c = chr(cp)
    if in_class and c in "]\\^-[":
        return "\\" + c
    if not in_class and c in _META:
        return "\\" + c
    return c


def pattern_of(expr: ast.Expr, flavor: str = "ecma") -> str:
    """``expr`` spelled as a pattern, with a few equivalent spellings chosen by its shape."""
    if isinstance(expr, ast.Literal):
        return "".join(_pattern_char(ord(c), in_class=False) for c in expr.value)
    if isinstance(expr, ast.CharClass):
        body = "".join(
            _pattern_char(lo, True) + ("" if lo == hi else "-" + _pattern_char(hi, True))
            for lo, hi in expr.ranges
        )
        return f"[{'^' if expr.negated else ''}{body}]"
    if isinstance(expr, ast.Sequence):
        return "".join(_grouped(item, flavor, isinstance(item, ast.Choice)) for item in expr.items)
    if isinstance(expr, ast.Choice):
        return "|".join(pattern_of(a, flavor) for a in expr.alternatives)
    if isinstance(expr, ast.Repeat):
        atomic = isinstance(expr.item, ast.CharClass) or (
            isinstance(expr.item, ast.Literal) and len(expr.item.value) == 1
        )
        spelled = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((expr.min, expr.max))
        if spelled is None:
            high = "" if expr.max is None else str(expr.max)
            spelled = f"{{{expr.min}}}" if expr.max == expr.min else f"{{{expr.min},{high}}}"
        lazy = "?" if len(pattern_of(expr.item, flavor)) % 3 == 0 else ""
        return _grouped(expr.item, flavor, not atomic) + spelled + lazy
    raise TypeError(f"not a regex-shaped node: {expr!r}")


def _grouped(expr: ast.Expr, flavor: str, needed: bool) -> str:
    text = pattern_of(expr, flavor)
    if not needed:
        return text
    openings = ["(", "(?:"] if flavor == "python" else ["(", "(?:", "(?<g>"]
    opening = openings[len(text) % len(openings)]
    return f"{opening}{text})"


# -- the reference engine ------------------------------------------------------------------------


def xgrammar_accepts(pattern: str, strings: list[str], *, ebnf: bool = False) -> list[bool]:
    """xgrammar's verdicts for ``Grammar.from_regex(pattern)`` (or ``from_ebnf`` if ``ebnf``)."""
    xgr = importlib.import_module("xgrammar")
    from xgrammar.testing import _is_grammar_accept_string

    grammar = xgr.Grammar.from_ebnf(pattern) if ebnf else xgr.Grammar.from_regex(pattern)
    return [_is_grammar_accept_string(grammar, s) for s in strings]


def assert_same_language(pattern: str, seed: int, extra: tuple[str, ...] = ()) -> None:
    """Our conversion of ``pattern`` accepts what xgrammar's ``from_regex`` accepts, judged by
    three recognizers: the ``re`` oracle, ``Grammar.matches``, and xgrammar on ``to_ebnf()``."""
    expr = regex_to_ast(pattern)
    strings = probe_strings(expr, seed, extra)
    expected = xgrammar_accepts(pattern, strings)
    grammar = Grammar(regex_to_grammar(pattern))
    verdicts = {
        "the re oracle": [accepts(expr, s) for s in strings],
        "Grammar.matches": [grammar.matches(s) for s in strings],
        "xgrammar on to_ebnf()": xgrammar_accepts(grammar.to_ebnf(), strings, ebnf=True),
    }
    for judge, ours in verdicts.items():
        differing = [(s, o) for s, o, t in zip(strings, ours, expected) if o != t]
        assert not differing, f"{pattern!r}: {judge} disagrees with xgrammar on {differing}"
    assert any(expected), f"{pattern!r}: no probe string matched; the comparison proved nothing"


# -- realistic patterns --------------------------------------------------------------------------

REALISTIC: list[tuple[str, tuple[str, ...]]] = [
    # e-mail addresses
    (r"[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}", ("john.doe@example.com", "a@b.c")),
    (r"^[^\s@]+@[^\s@]+\.[^\s@]+$", ("x@y.z", "x y@z.w", "é@ü.org")),
    (r"[\w.+-]+@[\w-]+\.[\w.-]+", ("first.last+tag@sub-domain.co.uk",)),
    (r"(?<user>[a-z0-9_]+)@(?<host>[a-z]+)\.(?:com|org|net)", ("bob_1@site.org", "bob@site.io")),
    # dates and times
    (r"\d{4}-\d{2}-\d{2}", ("2024-01-31", "2024-1-31")),
    (r"(19|20)\d\d[- /.](0[1-9]|1[012])[- /.](0[1-9]|[12][0-9]|3[01])", ("1999/12/31",)),
    ((r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
     r"(\.\d+)?(Z|[+-]\d{2}:\d{2})$"), ("2024-02-29T23:59:60Z", "2024-02-29T23:59:59.123+01:00")),
    (r"([01]?[0-9]|2[0-3]):[0-5][0-9]", ("7:05", "23:59", "24:00")),
    (r"(0?[1-9]|1[0-2]):[0-5]\d ?(AM|PM|am|pm)", ("12:30 PM", "9:15am")),
    (r"\d{1,2}/\d{1,2}/\d{2,4}", ("1/2/99", "12/31/2024")),
    (r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar) \d{4}", ("Tue, 02 Jan 2024",)),
    (r"P(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?", ("P1Y2M3DT4H5M6S", "PT")),
    # identifiers and codes
    (r"[a-f0-9]{8}-[a-f0-9]{4}-4[a-f0-9]{3}-[89ab][a-f0-9]{3}-[a-f0-9]{12}",
     ("123e4567-e89b-42d3-a456-426614174000",)),
    (r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", ("00000000-0000-0000-0000-000000000000",)),
    (r"[A-Z]{2}\d{6}", ("AB123456", "ab123456")),
    (r"^[a-zA-Z_][a-zA-Z0-9_]*$", ("_private", "9lives")),
    (r"[a-z][a-z0-9-]{0,61}[a-z0-9]", ("my-bucket-01", "a-")),
    (r"#?[0-9a-fA-F]{6}", ("#ff00AA", "ff00aa", "#fff")),
    (r"#([0-9a-f]{3}){1,2}", ("#abc", "#abcdef", "#abcd")),
    (r"[A-Z]{3}", ("USD", "usd")),
    (r"\d{5}(-\d{4})?", ("12345", "12345-6789", "1234")),
    (r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}", ("SW1A 1AA", "M1 1AE")),
    (r"[0-9]{4} ?[0-9]{4} ?[0-9]{4} ?[0-9]{4}", ("4111 1111 1111 1111", "4111111111111111")),
    (r"\d{3}-\d{2}-\d{4}", ("078-05-1120",)),
    (r"[A-Z]{2}\d{2}[A-Z0-9]{4}\d{7}([A-Z0-9]?){0,16}", ("GB82WEST12345698765432",)),
    (r"(?:97[89]-?)?\d{1,5}-?\d{1,7}-?\d{1,6}-?[\dX]", ("978-3-16-148410-0",)),
    (r"sk-[A-Za-z0-9]{20,}", ("sk-abcdefghijklmnopqrstu", "sk-short")),
    (r"v\d+(\.\d+){0,2}", ("v1", "v1.2.3", "v1.2.3.4")),
    (r"[a-z]+(_[a-z]+)*", ("snake_case_name", "_bad")),
    (r"[A-Z][a-zA-Z0-9]*", ("CamelCase", "camel")),
    (r"([a-z]+-)*[a-z]+", ("kebab-case-name",)),
    # numbers
    (r"-?\d+", ("-42", "0", "--1")),
    (r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?", ("-0.5e+10", "01", "3.")),
    (r"[+-]?\d*\.?\d+", ("+.5", "3.14", "1.")),
    (r"0x[0-9a-fA-F]+", ("0xDEADbeef", "0x")),
    (r"0b[01]+", ("0b1010", "0b2")),
    (r"0o[0-7]+", ("0o755",)),
    (r"\d{1,3}(,\d{3})*(\.\d+)?", ("1,234,567.89", "1234,567")),
    (r"\$\d+(\.\d{2})?", ("$19.99", "$5", "$5.9")),
    (r"[1-9]\d{0,2}", ("999", "1000", "0")),
    (r"(100|[1-9]?\d)%", ("100%", "7%", "101%")),
    (r"[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", ("6.02e23", ".5", "e5")),
    (r"(?:0|[1-9][0-9]*)", ("0", "10", "010")),
    (r"-?(?:[1-9]\d{0,2}(?:_\d{3})*|0)", ("1_000_000", "1_00")),
    (r"\d+/\d+", ("3/4",)),
    (r"[IVXLCDM]+", ("MCMXCIV",)),
    # phone numbers
    (r"\+?1?[-. ]?\(?\d{3}\)?[-. ]?\d{3}[-. ]?\d{4}", ("+1 (555) 123-4567", "555.123.4567")),
    (r"^\(\d{3}\) \d{3}-\d{4}$", ("(555) 123-4567",)),
    (r"\+\d{1,3} \d{1,14}", ("+44 2071838750",)),
    (r"\+?[0-9 ()-]{7,20}", ("+49 (0) 30 1234567",)),
    # URLs and paths
    (r"https?://[\w.-]+(:\d+)?(/[\w./%-]*)?(\?[\w=&%-]*)?", ("https://example.com:8080/a/b?x=1",)),
    (r"(https?|ftp)://[^\s/$.?#].[^\s]*", ("ftp://files.example.org/pub",)),
    (r"[a-z][a-z0-9+.-]*:[^\s]+", ("mailto:a@b.c", "urn:isbn:0451450523")),
    (r"(www\.)?[a-z0-9-]+\.[a-z]{2,6}", ("www.example.com", "example.museum")),
    (r"/([\w.-]+/)*[\w.-]*", ("/usr/local/bin/", "/")),
    (r"[A-Za-z]:\\(?:[^\\/:*?\"<>|\r\n]+\\)*[^\\/:*?\"<>|\r\n]*", ("C:\\Windows\\system32",)),
    (r"[\w-]+\.(jpg|jpeg|png|gif)", ("photo-1.jpeg", "photo.bmp")),
    (r"((25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(25[0-5]|2[0-4]\d|[01]?\d\d?)",
     ("192.168.0.1", "256.1.1.1")),
    (r"([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", ("00:1A:2b:3C:4d:5E",)),
    (r"(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}", ("2001:0db8:85a3:0000:0000:8a2e:0370:7334",)),
    (r"[a-z0-9-]+(\.[a-z0-9-]+)*:\d{2,5}", ("localhost:8080", "db.internal:5432")),
    # semantic versions
    ((r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
     r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+"
     r"(?:\.[0-9a-zA-Z-]+)*))?"), ("1.0.0-alpha.1+build.5", "01.0.0", "1.2.3")),
    (r"^v?\d+\.\d+\.\d+$", ("v1.2.3", "1.2")),
    (r"[~^]?\d+(\.(\d+|x|\*)){0,2}", ("^1.2.x", "~3")),
    # hex, base64 and hashes
    (r"[0-9a-f]+", ("deadbeef", "DEADBEEF")),
    (r"(?:[0-9A-Fa-f]{2})+", ("0aFF", "0aF")),
    (r"[a-f0-9]{40}", ("da39a3ee5e6b4b0d3255bfef95601890afd80709",)),
    (r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?", ("aGVsbG8=", "aGVsbA==")),
    (r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*", ("eyJhbGciOi.eyJzdWIi.SflKxw",)),
    # quoted strings and code
    (r'"(?:[^"\\]|\\.)*"', ('"say \\"hi\\""', '"unterminated')),
    (r"'[^']*'", ("'it'", "'it's'")),
    (r'"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"', ('"a\\u00e9\\n"', '"\x01"')),
    (r"`[^`]*`", ("`code`",)),
    (r"<[a-z]+>[^<]*</[a-z]+>", ("<b>bold</b>",)),
    (r"<([a-z][a-z0-9]*)( [a-z]+=\"[^\"]*\")*/?>", ('<img src="a.png"/>',)),
    (r"\{\s*\"[a-z]+\"\s*:\s*\d+\s*\}", ('{ "age": 42 }', '{"age":42}')),
    (r"\[(\d+(, ?\d+)*)?\]", ("[1, 2,3]", "[]", "[1,]")),
    (r"[A-Za-z_]\w*\(([^()]*)\)", ("print(x, y)",)),
    (r"(?:SELECT|select) [\w, *]+ (?:FROM|from) \w+( WHERE \w+ ?= ?\d+)?;?",
     ("SELECT a, b FROM t WHERE id = 3;",)),
    (r"#+ .+", ("## Heading",)),
    (r"- \[[ x]\] .+", ("- [x] done",)),
    (r"//[^\n]*", ("// comment",)),
    (r"/\*[^*]*\*+(?:[^/*][^*]*\*+)*/", ("/* a ** b */",)),
    # words, whitespace, free text
    (r"[A-Z][a-z]+( [A-Z][a-z]+)*", ("New York City", "new york")),
    (r"(yes|no|maybe)", ("maybe", "Maybe")),
    (r"\w+", ("under_score9", "é")),
    (r"\s*", (" \t\n\r\f\v\xa0", "\u2028", "\u3000")),
    (r"\S+", ("non-space", "a b")),
    (r"\W+", ("!?", "é", "a")),
    (r"\D*", ("abc", "a1")),
    (r"[^,]*(,[^,]*)*", ("a,b,,c",)),
    (r".*", ("anything\nat all", "😀")),
    (r".+?", ("x",)),
    (r"(?:a|b)*abb", ("ababb", "abab")),
    (r"(ab|a)(bc|c)", ("abc",)),
    (r"[\u4e00-\u9fff]+", ("中文", "中a")),
    (r"[äöüÄÖÜß]+", ("Straße", "strasse")),
    (r"😀+", ("😀😀",)),
    (r"\u{1F600}\u00e9", ("😀é",)),
    (r"[\u{1F600}-\u{1F64F}]+", ("😀🙏", "🚀")),
    (r"Hello, [A-Z][a-z]*!", ("Hello, World!",)),
    (r"(true|false|null)", ("null", "nil")),
    (r"(?:[a-z]+ ){2,4}[a-z]+\.", ("the quick brown fox.",)),
    (r"[^\n]{0,80}", ("short line",)),
    (r"\t+[a-z]+\r?\n", ("\t\tindent\r\n",)),
    (r"[\t ]*\n", ("  \n",)),
    (r"\x41\x42[\x61-\x7a]", ("ABz",)),
    (r"\u0041+\u00e9", ("AAé",)),
    (r"\cJ\cM?", ("\n", "\n\r")),
    (r"[\b]\f\v\0", ("\b\f\v\0",)),
    (r"\.\*\+\?\(\)\[\]\{\}\|\^\$\\\/", (".*+?()[]{}|^$\\/",)),
    (r"a{0}b", ("b", "ab")),
    (r"(a|)+", ("aa", "")),
    (r"a|", ("a", "")),
    (r"|b", ("b", "")),
    (r"()", ("",)),
    (r"(?:)", ("",)),
    (r"", ("",)),
    (r"^$", ("",)),
    (r"^abc$", ("abc", "abcabc")),
    (r"^a|^b$", ("a", "b")),
    (r"(^a)?b", ("ab", "b")),
    (r"[^]", ("\n", "😀", "")),
    (r"[\d\w\s]+", ("a1 _",)),
    (r"[^\s]+", ("xyz", "x\xa0")),
    (r"[\D]", ("é", "5")),
    (r"[\W\d]", ("5", "!", "a")),
    (r"[\d-z]", ("-", "5", "z", "y")),
    (r"[a-]", ("-", "a")),
    (r"[-a]", ("-", "a")),
    (r"[a-b-c]", ("-", "c")),
    (r"[\-\]\\]", ("-", "]", "\\")),
    (r"[[]", ("[",)),
    (r"[.^$*+?(){}|]", ("^", "$", "*")),
    (r"a}b]", ("a}b]",)),
    (r"\q\é\ ", ("qé ",)),
    (r"a*?b+?c??d{2}?e{1,}?f{1,2}?", ("bcddeff",)),
    (r"(?:x{2}){2}", ("xxxx",)),
]


@pytest.mark.xgrammar
@pytest.mark.parametrize(
    ("pattern", "examples"),
    REALISTIC,
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_realistic_patterns_match_like_xgrammar(pattern: str, examples: tuple[str, ...]) -> None:
    assert_same_language(pattern, seed=len(pattern), extra=examples)


GENERATED_SEEDS = range(200)


@pytest.mark.xgrammar
@pytest.mark.parametrize("seed", GENERATED_SEEDS)
def test_generated_patterns_match_like_xgrammar(seed: int) -> None:
    rng = random.Random(seed)
    expr = random_regex(rng)
    pattern = pattern_of(expr)
    rng_strings = random.Random(seed)
    members = tuple(sample(expr, rng_strings) for _ in range(6))
    assert all(accepts(regex_to_ast(pattern), s) for s in members), pattern
    assert_same_language(pattern, seed, extra=members)


def test_corpus_has_at_least_300_patterns() -> None:
    assert len(REALISTIC) + len(GENERATED_SEEDS) >= 300


@pytest.mark.xgrammar
@settings(max_examples=40)
@given(st.randoms(use_true_random=False))
def test_random_patterns_match_like_xgrammar(rng: random.Random) -> None:
    expr = random_regex(rng)
    pattern = pattern_of(expr)
    members = tuple(sample(expr, rng) for _ in range(4))
    assert_same_language(pattern, rng.randint(0, 10**6), extra=members)


@settings(max_examples=60)
@given(st.randoms(use_true_random=False))
def test_parsing_a_printed_ast_gives_back_its_language(rng: random.Random) -> None:
    expr = random_regex(rng)
    parsed = regex_to_ast(pattern_of(expr))
    for text in probe_strings(expr, rng.randint(0, 10**6)):
        assert accepts(parsed, text) == accepts(expr, text), text


# -- the Python flavor, against re.fullmatch(pattern, text, re.ASCII) ----------------------------


def assert_same_as_re(pattern: str, expr: ast.Expr, strings: list[str]) -> None:
    compiled = re.compile(pattern, re.ASCII)
    for text in strings:
        assert accepts(expr, text) == (compiled.fullmatch(text) is not None), (pattern, text)


@settings(max_examples=60)
@given(st.randoms(use_true_random=False))
def test_python_flavor_matches_like_re(rng: random.Random) -> None:
    expr = random_regex(rng)
    pattern = pattern_of(expr, "python")
    assert_same_as_re(pattern, regex_to_ast(pattern, "python"),
                      probe_strings(expr, rng.randint(0, 10**6)))


PYTHON_PATTERNS = [
    r"(?P<year>\d{4})-(?P<month>\d\d)",
    r"\A[a-z]+\Z",
    r"a{,3}b{2,}c{,}",
    r"x{y}z{",
    r"\0\012\101[\1-\7]",
    r"\N{EM DASH}\N{LATIN SMALL LETTER E WITH ACUTE}",
    r"\u00e9\U0001F600",
    r"[]a]+[^]a]",
    r"(?#a comment)ab",
    r".+",
    r"\s\S\w\W\d\D",
    r"[\s\d]+",
    r"\a\f\v\x7f",
]


@pytest.mark.parametrize("pattern", PYTHON_PATTERNS)
def test_python_flavor_specifics(pattern: str) -> None:
    expr = regex_to_ast(pattern, "python")
    strings = probe_strings(expr, len(pattern), ("\n", "\x0b", "\x1c", "\xa0", "a\n"))
    assert_same_as_re(pattern, expr, strings)


# -- the AST -------------------------------------------------------------------------------------


def test_literals_merge_and_quantifiers_bind_to_one_character() -> None:
    expr = regex_to_ast("abc*")
    assert expr == ast.Sequence((ast.Literal("ab"), ast.Repeat(ast.Literal("c"), 0, None, "*")))
    assert expr.span == ast.Span(0, 4)
    assert expr.items[1].span == ast.Span(2, 4)


def test_groups_disappear_and_spans_cover_the_parentheses() -> None:
    expr = regex_to_ast("(?:ab|c){2,3}?")
    assert expr == ast.Repeat(ast.Choice((ast.Literal("ab"), ast.Literal("c"))), 2, 3, "{}")
    assert expr.span == ast.Span(0, 14)
    assert expr.item.span == ast.Span(0, 8)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (".", ast.CharClass(((0, MAX_CODEPOINT),))),
        (r"\D", ast.CharClass(((0x30, 0x39),), negated=True)),
        (r"\s", ast.CharClass(((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0)))),
        (r"[^]", ast.CharClass(((0, MAX_CODEPOINT),))),
        (r"[a-cb-f\d]", ast.CharClass(((0x30, 0x39), (0x61, 0x66)))),
        (r"[^\n]", ast.CharClass(((0x0A, 0x0A),), negated=True)),
        (r"\uD83D\uDE00", ast.Literal("😀")),
        (r"a|", ast.Choice((ast.Literal("a"), ast.Literal("")))),
        (r"^$", ast.Literal("")),
    ],
)
def test_ast_of(pattern: str, expected: ast.Expr) -> None:
    assert regex_to_ast(pattern) == expected


def test_python_dot_excludes_newline() -> None:
    assert regex_to_ast(".", "python") == ast.CharClass(((0x0A, 0x0A),), negated=True)


def test_regex_to_grammar_has_one_root_rule() -> None:
    grammar = regex_to_grammar("a+")
    assert [rule.name for rule in grammar.rules] == ["root"]
    assert grammar.rules[0].body == ast.Repeat(ast.Literal("a"), 1, None, "+")


def test_unknown_flavor_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="flavor"):
        regex_to_ast("a", "perl")


# -- rejections ----------------------------------------------------------------------------------

# (pattern, flavor, code, (start, end), a fragment of the hint, whether xgrammar rejects it too)
REJECTED = [
    ("(?=a)b", "ecma", "GK130", (0, 5), "look ahead", True),
    ("(?!a)b", "ecma", "GK130", (0, 5), "look ahead", True),
    ("(?<=a)b", "ecma", "GK130", (0, 6), "look ahead", True),
    ("a(?<!a)", "ecma", "GK130", (1, 7), "look ahead", True),
    (r"(a)\1", "ecma", "GK130", (3, 5), "repeat of earlier text", True),
    (r"(?<n>a)\k<n>", "ecma", "GK130", (7, 12), "repeat of earlier text", True),
    (r"(?P<n>a)(?P=n)", "python", "GK130", (8, 14), "repeat of earlier text", False),
    (r"\bword\b", "ecma", "GK130", (0, 2), "word boundaries", True),
    (r"a\B", "ecma", "GK130", (1, 3), "word boundaries", True),
    ("(?i)abc", "ecma", "GK130", (0, 4), "both cases", True),
    ("(?i:a)b", "ecma", "GK130", (0, 6), "both cases", True),
    ("(?x)a", "python", "GK130", (0, 4), "both cases", False),
    (r"\p{L}+", "ecma", "GK130", (0, 5), "list the characters", True),
    (r"[\P{Lu}]", "ecma", "GK130", (1, 7), "list the characters", False),
    ("a[]", "ecma", "GK131", (1, 3), "[^]", True),
    ("a{,3}", "ecma", "GK131", (1, 5), "{0,3}", True),
    ("a**", "ecma", "GK131", (2, 3), "group first", True),
    ("a{2}{3}", "ecma", "GK131", (4, 7), "group first", True),
    ("a?+", "ecma", "GK131", (2, 3), "group first", True),
    ("a*+", "python", "GK130", (1, 3), "drop the trailing", False),
    ("(a|b", "ecma", "GK131", (0, 1), "missing `)`", True),
    ("a)", "ecma", "GK131", (1, 2), "escape a literal parenthesis", True),
    ("*a", "ecma", "GK131", (0, 1), "after a character", True),
    ("^*", "ecma", "GK131", (1, 2), "after a character", True),
    ("a{3,1}", "ecma", "GK131", (1, 6), "{1,3}", True),
    ("a{", "ecma", "GK131", (1, 2), "\\{", True),
    ("a{x}", "ecma", "GK131", (1, 2), "\\{", True),
    ("[z-a]", "ecma", "GK131", (1, 4), "lower character first", True),
    (r"[a-\d]", "ecma", "GK131", (1, 5), "\\-", True),
    ("[abc", "ecma", "GK131", (0, 4), "missing `]`", True),
    ("ab\\", "ecma", "GK131", (2, 3), "backslash", True),
    (r"\x4", "ecma", "GK131", (0, 3), "\\x41", True),
    (r"\u12", "ecma", "GK131", (0, 4), "\\x41", True),
    (r"\u{}", "ecma", "GK131", (0, 3), "\\u{1F600}", True),
    (r"\c1", "ecma", "GK131", (0, 2), "line feed", True),
    ("(?<n", "ecma", "GK131", (0, 4), "(?<name>...)", True),
    ("(?<1a>x)", "ecma", "GK131", (0, 6), "group name", True),
    # a Python named group (semver.org's regex) in the ECMAScript flavor: say which flavor reads it
    ("(?P<major>0|[1-9]\\d*)", "ecma", "GK131", (0, 3), "convert regex --flavor python", True),
    # xgrammar accepts these, with a meaning that differs from JavaScript's or none at all:
    ("a^b", "ecma", "GK130", (1, 2), "start and end", False),
    ("a$b", "ecma", "GK130", (1, 2), "start and end", False),
    ("(a$)b", "ecma", "GK130", (2, 3), "start and end", False),
    ("(^a)*", "ecma", "GK130", (4, 5), "start and end", False),
    (r"\01", "ecma", "GK131", (0, 3), "octal", False),
    (r"\x4g", "ecma", "GK131", (0, 3), "\\x41", False),
    (r"\u{110000}", "ecma", "GK131", (0, 10), "hex digits", False),
    (r"\uD800", "ecma", "GK131", (0, 6), "\\u{1F600}", False),
    # Python syntax errors
    (r"\q", "python", "GK131", (0, 2), "letter itself", False),
    (r"\400", "python", "GK131", (0, 4), "hex digits", False),
    (r"\N{NO SUCH CHARACTER}", "python", "GK131", (0, 21), "Unicode tables", False),
    ("(?<n>a)", "python", "GK131", (0, 3), "(?P<name>...)", False),
    ("(?>a)", "python", "GK130", (0, 5), "plain group", False),
    ("(?(1)a|b)", "python", "GK130", (0, 9), "alternatives", False),
    ("(?#open", "python", "GK131", (0, 3), "end the comment", False),
    (r"[\A]", "python", "GK131", (1, 3), "outside classes", False),
]


@pytest.mark.parametrize(
    ("pattern", "flavor", "code", "span", "hint", "xgrammar_rejects"),
    REJECTED,
    ids=[f"{flavor}:{pattern}" for pattern, flavor, *_ in REJECTED],
)
def test_rejected(pattern: str, flavor: str, code: str, span: tuple[int, int], hint: str,
                  xgrammar_rejects: bool) -> None:
    with pytest.raises(GrammarError) as caught:
        regex_to_ast(pattern, flavor)
    first = caught.value.diagnostics[0]
    assert (first.code, (first.span.start, first.span.end) if first.span else None) == (code, span)
    assert first.hint is not None and hint in first.hint
    assert first.source is not None and first.source.text == pattern


@pytest.mark.xgrammar
@pytest.mark.parametrize(
    "pattern", [p for p, flavor, *_, rejects in REJECTED if flavor == "ecma" and rejects]
)
def test_xgrammar_rejects_them_too(pattern: str) -> None:
    xgr = importlib.import_module("xgrammar")
    with pytest.raises(RuntimeError):
        xgr.Grammar.from_regex(pattern)


def test_every_error_is_reported() -> None:
    with pytest.raises(GrammarError) as caught:
        regex_to_ast(r"(?=x)\1a**\b(")
    codes = [(d.code, d.span.start if d.span else None) for d in caught.value.diagnostics]
    assert codes == [("GK130", 0), ("GK130", 5), ("GK131", 9), ("GK130", 10), ("GK131", 12)]


def test_reading_stops_after_200_errors_with_a_note() -> None:
    with pytest.raises(GrammarError) as caught:
        regex_to_ast(r"\b" * 1000)
    diagnostics = caught.value.diagnostics
    assert [d.code for d in diagnostics] == ["GK130"] * 200 + ["GK100"]
    assert diagnostics[-1].message == "the pattern was read no further than offset 400"


def test_diagnostic_renders_the_pattern_with_a_caret() -> None:
    with pytest.raises(GrammarError) as caught:
        regex_to_ast(r"\d+(?<=x)")
    assert caught.value.render().splitlines() == [
        "<regex>:1:4: GK130 lookbehind assertions can't be expressed",
        "  |",
        r"1 | \d+(?<=x)",
        "  |    ^^^^^^",
        ("  = help: a grammar can't look ahead or behind; match the text itself, or check it "
        "after generation"),
    ]


@pytest.mark.xgrammar
@pytest.mark.parametrize(
    ("pattern", "text", "ours", "xgrammar"),
    [
        (r"\x414", "A4", True, False),  # xgrammar reads every hex digit after \x
        (r"[\^]", "x", False, True),  # xgrammar prints [\^] as [^], "any character"
        (r"\uD83D\uDE00", "😀", True, False),  # xgrammar keeps the two surrogates apart
    ],
)
def test_deliberate_deviations_from_xgrammar(pattern: str, text: str, ours: bool,
                                             xgrammar: bool) -> None:
    assert accepts(regex_to_ast(pattern), text) is ours
    assert Grammar.from_regex(pattern).matches(text) is ours
    assert xgrammar_accepts(pattern, [text]) == [xgrammar]


# -- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "code"),
    [
        ("(" * 100_000, "GK132"),
        ("(" * 1000 + "a" + ")" * 1000, None),
        ("(" * 600 + "a" + ")" * 1200, "GK131"),
        ("a{99999999999999999}", "GK132"),
        ("a{1," + "9" * 5000 + "}", "GK132"),
        ("[" + "a" * 200_000, "GK131"),
        ("{" * 50_000, "GK131"),
        ("\\u{" * 50_000, "GK131"),
        ("(?<" * 50_000, "GK131"),
        ("\\p{" * 50_000, "GK130"),
        ("a|" * 20_000, None),
        ("ab" * 500_000, None),
        ("a*" * 20_000, None),
        ("(a)" * 20_000, None),
        (")" * 100_000, "GK131"),
    ],
    ids=lambda value: value[:12] if isinstance(value, str) else str(value),
)
def test_hostile_patterns_are_fast(pattern: str, code: str | None) -> None:
    start = time.process_time()
    if code is None:
        regex_to_ast(pattern)
    else:
        with pytest.raises(GrammarError) as caught:
            regex_to_ast(pattern)
        assert caught.value.diagnostics[0].code == code
    assert time.process_time() - start < 10.0  # generous: catches quadratic blow-ups, not jitter


@settings(max_examples=200)
@given(st.text(alphabet="ab()[]{}|*+?^$\\.-,:=!<>Pkpu0123xcdDsSwW", max_size=30),
       st.sampled_from(["ecma", "python"]))
def test_arbitrary_text_converts_or_raises_a_located_grammar_error(pattern: str,
                                                                   flavor: str) -> None:
    try:
        regex_to_ast(pattern, flavor)
    except GrammarError as exc:
        assert exc.diagnostics
        for diagnostic in exc.diagnostics:
            assert diagnostic.span is not None
            assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(pattern)
            assert diagnostic.hint


def test_the_limits_are_the_ebnf_readers_own() -> None:
    from grammarkit.convert import regex
    from grammarkit.ebnf import lexer, parser

    assert (regex.MAX_NESTING, regex.MAX_INTEGER) == (parser.MAX_NESTING, lexer.MAX_INTEGER)


def test_converting_a_json_schema_does_not_load_the_ebnf_parser() -> None:
    import subprocess
    import sys

    code = ("import sys, grammarkit as gk; "
            "gk.Grammar.from_json_schema({'type': 'string', 'pattern': '^(a|b)+$'}).to_ebnf(); "
            "print('grammarkit.ebnf.parser' in sys.modules)")
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True)
    assert found.stdout.strip() == "False"
