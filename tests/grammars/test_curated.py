"""The curated grammars in grammars/: lint-clean, and each with accepted and rejected examples."""

from __future__ import annotations

import random

import pytest

from grammarkit import Grammar
from grammarkit.analysis.lint import lint
from tests.conftest import GRAMMARS

EXAMPLES: dict[str, tuple[list[str], list[str]]] = {
    "json.ebnf": (
        [
            "{}",
            "[]",
            '{"a": 1}',
            '{"a":[1,-2.5e+3,0.0,"x\\n\\u00e9",true,false,null,{}]}',
            '[ {"k" : "v" } , [ ] ,\n\t"é😀" ]',
            '{"nested": {"deeper": [[[[1]]]]}}',
            '["\\"\\\\\\/\\b\\f\\n\\r\\t"]',
        ],
        [
            "",
            "1",
            '"string at top level"',
            " {}",
            "{} ",
            "{",
            '{"a" 1}',
            '{"a": 01}',
            '{"a": 1,}',
            "[1 2]",
            '["\\x"]',
            '["raw\ncontrol"]',
            "[.5]",
            "[1.]",
            "[tru]",
            "{'a': 1}",
        ],
    ),
    "arithmetic.ebnf": (
        ["1", "1 + 2", "-(3.5 * x) / 2", "2 ^ 3 ^ 2", "max(1, min(a, b)) - -4", "f()", "a_1*b"],
        ["", "1 +", "(1", "1 ++ 2", "1    + 2", "2 3", "1.", ".5", "f(,)", "1 + + 2"],
    ),
    "csv.ebnf": (
        ["a,b,c", "a,b\r\nc,d\r\n", '"x, y",z\n"say ""hi""",', "", ",,", "single"],
        ['"unterminated', 'a"b', '"x"y', "a\rb"],
    ),
    "iso8601.ebnf": (
        [
            "2024-02-29",
            "1999-12-31T23:59:59Z",
            "2000-01-01 00:00",
            "2021-06-30T12:30:15.123456789+05:30",
            "23:59:60",
            "08:00-0800",
        ],
        [
            "2024-02-30",
            "2024-04-31",
            "2024-13-01",
            "2024-1-01",
            "24:00",
            "12:60",
            "2024-01-01T",
            "12:00:00.1234567890",
        ],
    ),
    "sql_select.ebnf": (
        [
            "SELECT * FROM users;",
            (
                "SELECT DISTINCT name, COUNT(*) AS n FROM users AS u LEFT JOIN orders ON u.id = orders.user_id"
                " WHERE age >= 18 AND NOT name LIKE 'a%' GROUP BY name HAVING COUNT(*) > 1"
                " ORDER BY n DESC LIMIT 10 OFFSET 5"
            ),
            "SELECT 1 + 2 * (3 - x)",
            "SELECT a FROM t WHERE b IS NOT NULL OR c IN (1, 2, 'it''s')",
        ],
        [
            "SELECT",
            "select * from t",
            "SELECT * FROM",
            "SELECT a FROM t WHERE",
            "SELECT a,, b",
            "SELECT * FROM t LIMIT x",
        ],
    ),
}


def load(name: str) -> Grammar:
    path = GRAMMARS / name
    return Grammar.from_ebnf(path.read_text("utf-8"), path=str(path))


def test_every_grammar_file_has_examples() -> None:
    assert {p.name for p in GRAMMARS.glob("*.ebnf")} == set(EXAMPLES)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_grammar_is_lint_clean(name: str) -> None:
    path = GRAMMARS / name
    assert lint(path.read_text("utf-8"), str(path)) == []


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_accepted_and_rejected_examples(name: str) -> None:
    grammar = load(name)
    accepted, rejected = EXAMPLES[name]
    assert [s for s in accepted if not grammar.matches(s)] == []
    assert [s for s in rejected if grammar.matches(s)] == []


@pytest.mark.xgrammar
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_xgrammar_agrees_on_the_examples(name: str) -> None:
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    reference = xgrammar.Grammar.from_ebnf(load(name).to_ebnf())
    accepted, rejected = EXAMPLES[name]
    for text in accepted:
        assert _is_grammar_accept_string(reference, text), text
    for text in rejected:
        assert not _is_grammar_accept_string(reference, text), text


@pytest.mark.xgrammar
def test_json_grammar_has_the_language_of_xgrammars_builtin_json() -> None:
    import xgrammar
    from xgrammar.testing import _is_grammar_accept_string

    from grammarkit.sample import sample

    builtin = xgrammar.Grammar.builtin_json_grammar()
    ours = load("json.ebnf")
    theirs = Grammar.from_ebnf(str(builtin))
    texts = sample(ours, n=150, seed=1) + sample(theirs, n=150, seed=2)
    rng = random.Random(0)
    mutated = []
    for text in texts:
        i = rng.randrange(len(text) + 1)
        mutated.append(text[:i] + rng.choice(' ,:"\\{}[]0-.eE\n') + text[i + 1 :])
    for text in texts + mutated:
        assert ours.matches(text) == _is_grammar_accept_string(builtin, text), text


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_grammar_file_is_in_canonical_format(name: str) -> None:
    text = (GRAMMARS / name).read_text("utf-8")
    assert Grammar.from_ebnf(text).to_ebnf() == text
