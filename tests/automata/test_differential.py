"""``Grammar.matches`` against xgrammar 0.2.8 (``accept_string`` then ``is_terminated``).

For every grammar of :mod:`tests.automata.grammars`, hypothesis draws batches of byte strings:
sentences from :func:`grammarkit.strategies.from_grammar` (accepted), single-byte mutations and
truncations of them (mostly rejected), and random strings of the grammar's atoms. Every verdict
must equal xgrammar's. About 6,000 strings in all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
import xgrammar as xgr
from hypothesis import given, settings
from hypothesis import strategies as st
from xgrammar.testing import _get_matcher_from_grammar

from grammarkit.grammar import Grammar
from grammarkit.strategies import from_grammar
from tests.automata.grammars import CASES, Case
from tests.automata.test_recognizer import CONSTRUCTS
from tests.automata.test_regex_macro import REGEX_CASES

pytestmark = pytest.mark.xgrammar

SENTENCES_PER_BATCH = 6
MUTATIONS_PER_SENTENCE = 3
RANDOM_PER_BATCH = 8
EXAMPLES_PER_GRAMMAR = 12


@functools.cache
def reference(case: Case) -> Callable[[bytes], bool]:
    """xgrammar's verdict on whole inputs (one matcher, reset between inputs)."""
    if case.vocabulary is None:
        matcher = _get_matcher_from_grammar(xgr.Grammar.from_ebnf(case.ebnf))
    else:  # token-level macros need a vocabulary to compile
        info = xgr.TokenizerInfo(list(case.vocabulary))
        compiled = xgr.GrammarCompiler(info, cache_enabled=False).compile_grammar(case.ebnf)
        matcher = xgr.GrammarMatcher(compiled, terminate_without_stop_token=True)

    def verdict(data: bytes) -> bool:
        matcher.reset()
        return bool(matcher.accept_string(data) and matcher.is_terminated())

    return verdict


@functools.cache
def grammar(case: Case) -> Grammar:
    return Grammar.from_ebnf(case.ebnf)


def mutations(data: st.DataObject, text: bytes, atoms: tuple[bytes, ...]) -> list[bytes]:
    """Single edits of ``text``: insert an atom or a byte, delete or replace a byte, truncate."""
    result = []
    for _ in range(MUTATIONS_PER_SENTENCE):
        kind = data.draw(st.sampled_from(["insert", "delete", "replace", "truncate"]))
        at = data.draw(st.integers(0, len(text)))
        piece = data.draw(st.sampled_from(atoms) | st.binary(min_size=1, max_size=1))
        if kind == "insert":
            result.append(text[:at] + piece + text[at:])
        elif kind == "delete":
            result.append(text[:at] + text[at + 1:])
        elif kind == "replace":
            result.append(text[:at] + piece + text[at + 1:])
        else:
            result.append(text[:at])
    return result


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@settings(max_examples=EXAMPLES_PER_GRAMMAR)
@given(data=st.data())
def test_verdicts_equal_xgrammar(case: Case, data: st.DataObject) -> None:
    g = grammar(case)
    batch: list[bytes] = []
    sentences = st.lists(from_grammar(g, max_length=40), min_size=SENTENCES_PER_BATCH,
                         max_size=SENTENCES_PER_BATCH)
    for sentence in data.draw(sentences):
        encoded = sentence.encode("utf-8", "surrogatepass")
        batch.append(encoded)
        batch += mutations(data, encoded, case.atoms)
    random_strings = st.lists(st.sampled_from(case.atoms), max_size=12).map(b"".join)
    batch += data.draw(st.lists(random_strings, min_size=RANDOM_PER_BATCH,
                                max_size=RANDOM_PER_BATCH))
    expected = reference(case)
    disagreements = [(s, expected(s)) for s in batch if g.matches(s) != expected(s)]
    assert not disagreements, f"grammarkit differs from xgrammar on {disagreements[:5]}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_has_both_verdicts(case: Case) -> None:
    """The differential corpus exercises acceptance and rejection for every grammar."""
    from grammarkit.sample import sample

    g = grammar(case)
    sentences = [s.encode("utf-8", "surrogatepass") for s in sample(g, n=10, seed=1)]
    assert len(sentences) == 10
    expected = reference(case)
    assert all(expected(s) and g.matches(s) for s in sentences)
    edits = [s[:i] + s[i + 1:] for s in sentences for i in range(len(s))] + [
        s + atom for s in sentences for atom in case.atoms]
    rejected = [e for e in edits if not expected(e)]
    assert rejected, "no mutation of the samples is rejected"
    assert all(not g.matches(e) for e in rejected)


def test_builtin_json_grammar_is_the_one_tested() -> None:
    from grammarkit.ebnf.parser import parse

    builtin = str(xgr.Grammar.builtin_json_grammar())
    assert parse(builtin).ast == parse(next(c for c in CASES if c.name == "json").ebnf).ast


@pytest.mark.parametrize(("name", "source", "accepted", "rejected"), CONSTRUCTS,
                         ids=[c[0] for c in CONSTRUCTS])
def test_construct_table_is_xgrammars(name: str, source: str, accepted: list[str | bytes],
                                      rejected: list[str | bytes]) -> None:
    """The hand-written verdicts of ``test_recognizer`` are xgrammar's."""
    vocabulary = ("x", "y", "z") if "Token" in source else None
    verdict = reference(Case(name, source, (), vocabulary))
    assert all(verdict(_bytes(s)) for s in accepted)
    assert not any(verdict(_bytes(s)) for s in rejected)


@pytest.mark.parametrize(("body", "accepted", "rejected"), REGEX_CASES,
                         ids=[c[0] for c in REGEX_CASES])
def test_regex_table_is_xgrammars(body: str, accepted: list[str | bytes],
                                  rejected: list[str | bytes]) -> None:
    """The hand-written verdicts of ``test_regex_macro`` are xgrammar's."""
    verdict = reference(Case(body, f"root ::= {body}", ()))
    assert all(verdict(_bytes(s)) for s in accepted)
    assert not any(verdict(_bytes(s)) for s in rejected)


def _bytes(text: str | bytes) -> bytes:
    return text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
