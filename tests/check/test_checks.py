"""Each check on real vocabularies (Qwen3.6, DeepSeek-V4, Llama 3): a planted problem it finds,
and a clean grammar where it finds nothing."""

from __future__ import annotations

import math
from typing import Any

import pytest

import grammarkit as gk
from grammarkit.check import check
from grammarkit.check.tokenizers import LoadedTokenizer
from tests.check.conftest import letters_vocabulary

CLEAN_JSON_STRING = 'root ::= "{\\"name\\": \\"" [a-zA-Z ]{0,40} "\\"}"'


def _check(text: str, loaded: LoadedTokenizer, **options: Any) -> Any:
    options.setdefault("samples", 30)
    return check(gk.Grammar.from_ebnf(text), loaded.vocab, encoder=loaded.encoder, **options)


def _codes(report: Any) -> list[str]:
    return [d.code for d in report.diagnostics]


@pytest.mark.parametrize("name", ["qwen36", "deepseek", "llama3"])
def test_clean_grammar_has_no_finding(name: str, request: pytest.FixtureRequest) -> None:
    loaded = request.getfixturevalue(name)
    report = _check(CLEAN_JSON_STRING, loaded)
    assert report.diagnostics == (), report.render()
    assert report.ok and report.notes == ()
    assert report.shortest_completion is not None
    assert report.shortest_completion.text == '{"name": ""}'
    assert report.max_tokens == len('{"name": ""}') + 40 + 1
    assert report.boundaries is not None and report.boundaries.refused == 0
    assert report.mask is not None and report.mask.min_allowed >= 1


# -- producibility -------------------------------------------------------------------------------
def test_token_id_without_token_in_a_padded_vocabulary(qwen36: LoadedTokenizer) -> None:
    padded = qwen36.vocab.with_vocab_size(248320)
    report = check(gk.Grammar.from_ebnf('root ::= "a" Token(248200)'), padded, samples=5)
    (finding,) = [d for d in report.diagnostics if d.code == "GK302"]
    assert "248200" in finding.message and finding.is_error
    assert finding.position is not None and finding.position.column == 14


def test_token_id_outside_deepseek_is_the_matchers_error(deepseek: LoadedTokenizer) -> None:
    report = _check('root ::= TokenTagDispatch((130000, tail)) \ntail ::= "x"', deepseek)
    assert _codes(report) == ["GK170"] and not report.ok
    assert report.mask is None and "the matcher refuses the grammar" in report.notes[0]


def test_vocabulary_without_byte_fallback_cannot_spell_digits() -> None:
    report = check(gk.Grammar.from_ebnf('root ::= "n=" [0-9] | "é"'), letters_vocabulary(),
                   samples=5)
    assert {"GK300", "GK301"} <= set(_codes(report))
    literal = next(d for d in report.diagnostics if d.code == "GK300")
    assert "'=' (U+003D)" in literal.message


def test_byte_level_vocabulary_spells_anything(llama3: LoadedTokenizer) -> None:
    report = _check('root ::= "n=\\u0000 \\U0010FFFF" [\\u0300-\\u036f]', llama3)
    assert not {"GK300", "GK301"} & set(_codes(report))


# -- termination ---------------------------------------------------------------------------------
def test_grammar_that_cannot_complete(llama3: LoadedTokenizer) -> None:
    report = _check('root ::= "a" more\nmore ::= "b" more', llama3)
    assert _codes(report) == ["GK310"]
    assert report.shortest_completion is None and report.mask is None
    assert any("cannot complete" in note for note in report.notes)


def test_no_stop_token(qwen36: LoadedTokenizer) -> None:
    report = _check('root ::= "yes" | "no"', qwen36, stop_token_ids=[])
    assert _codes(report) == ["GK311"]
    assert not report.ok


def test_shortest_completion_in_fewest_tokens(qwen36: LoadedTokenizer) -> None:
    report = _check('root ::= "true" | "1" [0-9]{3}', qwen36)
    shortest = report.shortest_completion
    assert shortest is not None and shortest.text == "true"
    assert [qwen36.vocab.tokens[i] for i in shortest.token_ids] == [b"true"]


# -- special tokens ------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "count"), [("qwen36", 33), ("deepseek", 1280)])
def test_free_string_spells_special_tokens(name: str, count: int,
                                           request: pytest.FixtureRequest) -> None:
    report = _check('root ::= "\\"" [^"\\\\]* "\\""', request.getfixturevalue(name))
    (finding,) = report.diagnostics
    assert finding.code == "GK320" and f"can spell {count} special tokens" in finding.message
    clean = _check('root ::= "\\"" [^"\\\\<]* "\\""', request.getfixturevalue(name))
    assert clean.diagnostics == ()


def test_special_token_named_by_token_is_not_a_leak(qwen36: LoadedTokenizer) -> None:
    im_end = qwen36.vocab.token_id("<|im_end|>")
    report = _check(f'root ::= "<think>" [a-z]* Token({im_end})', qwen36)
    assert [d.code for d in report.diagnostics if d.code.startswith("GK32")] == ["GK321"]


# -- loops ---------------------------------------------------------------------------------------
def test_whitespace_loop_behind_a_rule_and_optional_progress(llama3: LoadedTokenizer) -> None:
    report = _check('root ::= "[" (ws ","?)* "]"\nws ::= [ \\t]+', llama3)
    loop, inner = report.diagnostics
    assert (loop.code, inner.code) == ("GK330", "GK330")
    assert "rule `root`" in loop.message and "rule `ws`" in inner.message
    assert loop.hint == "bound the repetition: ...{0,32}, or make its parts required"
    assert inner.hint is not None and inner.hint.startswith("bound it: [ \\t]{0,")
    assert math.isinf(report.max_tokens)


def test_bounded_grammar_has_a_token_budget(deepseek: LoadedTokenizer) -> None:
    report = _check('root ::= "[" [ \\n]{0,4} ("ab" | "é"){1,3} "]"', deepseek)
    assert report.diagnostics == ()
    assert report.max_tokens == 1 + 4 + 6 + 1 + 1


# -- boundaries ----------------------------------------------------------------------------------
def test_special_token_text_is_refused_as_the_tokenizer_splits_it(qwen36: LoadedTokenizer) -> None:
    report = _check('root ::= "<think>" [a-z]{1,5} "</think>"', qwen36)
    boundary = [d for d in report.diagnostics if d.code == "GK340"]
    assert boundary and "248068" in boundary[0].message
    assert boundary[0].position is not None and boundary[0].position.column == 10
    assert boundary[0].hint == "name the special token with Token(248068) where the grammar means it"


def test_normalizing_tokenizer_rewrites_text(qwen36: LoadedTokenizer) -> None:
    report = _check('root ::= "cafe\\u0301"', qwen36)
    assert _codes(report) == ["GK341"]


def test_without_encoder_the_boundary_check_is_skipped(llama3: LoadedTokenizer) -> None:
    report = check(gk.Grammar.from_ebnf('root ::= "a"'), gk.Vocabulary(llama3.vocab.tokens,
                   special_ids=llama3.vocab.special_ids, stop_ids=llama3.vocab.stop_ids),
                   samples=5)
    assert report.boundaries is None and "boundaries: skipped" in report.notes[0]


# -- mask statistics -----------------------------------------------------------------------------
def test_dead_end(deepseek: LoadedTokenizer) -> None:
    report = _check('root ::= "go" Token(1) "!"', deepseek)
    assert "GK345" in _codes(report)
    dead = next(d for d in report.diagnostics if d.code == "GK345")
    assert dead.is_error and "after 'go" in dead.message


def test_mask_statistics_are_deterministic(llama3: LoadedTokenizer) -> None:
    first = _check('root ::= "a" [0-9]{1,3} ("x" | "y")', llama3, seed=3).mask
    second = _check('root ::= "a" [0-9]{1,3} ("x" | "y")', llama3, seed=3).mask
    assert first is not None and second is not None
    assert (first.steps, first.median_allowed) == (second.steps, second.median_allowed)
    assert first.min_allowed >= 1 and 0 < first.single_choice_share < 1


def test_select_and_ignore(llama3: LoadedTokenizer) -> None:
    text = 'root ::= "\\"" [^"]* "\\"" [ ]*'
    assert set(_codes(_check(text, llama3))) == {"GK320", "GK330"}
    assert _codes(_check(text, llama3, select=["GK33"])) == ["GK330"]
    assert _codes(_check(text, llama3, ignore=["GK330"])) == ["GK320"]
    with pytest.raises(ValueError, match="matches no lint rule"):
        _check(text, llama3, select=["GK399"])


def test_findings_on_a_gbnf_grammar_point_into_its_text() -> None:
    # llama.cpp's c.gbnf through `grammarkit check c.gbnf --tokenizer llama3`: findings were
    # shown at 1:1 over an empty line, the GBNF text not being the grammar's source
    text = 'root ::= "x" ws "y"\n\nws ::= ([ \\t\\n]+)\n'
    grammar = gk.Grammar.from_gbnf(text, path="c.gbnf")
    assert grammar.source is not None and grammar.source.path == "c.gbnf"
    report = check(grammar, letters_vocabulary(), samples=10)
    [loop] = [d for d in report.diagnostics if d.code == "GK330"]
    assert (loop.position.line, loop.position.column) == (3, 8)  # the loop `([ \\t\\n]+)`
    assert "ws ::= ([ \\t\\n]+)" in loop.render()
