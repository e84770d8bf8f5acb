"""The curated grammars in grammars/: lint-clean, each with an examples file that covers it."""

from __future__ import annotations

import random

import pytest

from grammarkit import Grammar
from grammarkit.analysis.lint import lint
from grammarkit.authoring.coverage import Coverage
from grammarkit.authoring.examples import EXAMPLES_SUFFIX, parse_examples
from grammarkit.source import read_source
from tests.conftest import GRAMMARS


def examples(name: str) -> tuple[list[str], list[str]]:
    """The accepted and rejected texts of ``grammars/NAME.examples``."""
    path = GRAMMARS / name.replace(".ebnf", EXAMPLES_SUFFIX)
    parsed = parse_examples(read_source(path))
    return [e.text for e in parsed if e.accept], [e.text for e in parsed if not e.accept]


EXAMPLES = {path.name: examples(path.name) for path in sorted(GRAMMARS.glob("*.ebnf"))}


def load(name: str) -> Grammar:
    path = GRAMMARS / name
    return Grammar.from_ebnf(path.read_text("utf-8"), path=str(path))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_grammar_has_accepted_and_rejected_examples(name: str) -> None:
    accepted, rejected = EXAMPLES[name]
    assert len(accepted) >= 4 and len(rejected) >= 4


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_cover_every_alternative(name: str) -> None:
    grammar = load(name)
    coverage = Coverage.of(grammar.ast, grammar.root)
    assert coverage.record(grammar.ast, grammar.root, EXAMPLES[name][0]) == []
    assert [item.label for item in coverage.missed() if item.kind == "alternatives"] == []


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
