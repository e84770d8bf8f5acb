"""The library's exception types survive pickling, so multiprocessing users get them back whole."""

from __future__ import annotations

import multiprocessing
import pickle

import pytest

import grammarkit as gk


def _grammar_error() -> gk.GrammarError:
    with pytest.raises(gk.GrammarError) as info:
        gk.Grammar.from_ebnf('root ::= "a" valu\nvalue ::= "b"\n', path="g.ebnf")
    return info.value


def _schema_error() -> gk.SchemaError:
    with pytest.raises(gk.SchemaError) as info:
        gk.Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "nope"}}})
    return info.value


@pytest.mark.parametrize("make", [_grammar_error, _schema_error])
def test_errors_pickle_round_trip(make: object) -> None:
    error = make()  # type: ignore[operator]
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert copy.diagnostics == error.diagnostics
    assert copy.render() == error.render()
    assert getattr(copy, "pointer", None) == getattr(error, "pointer", None)


def _compile(text: str) -> str:
    return gk.Grammar.from_ebnf(text).to_ebnf()


def test_errors_cross_a_process_pool() -> None:
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert "root" in pool.apply_async(_compile, ('root ::= "a"',)).get(timeout=30)
        # An exception that cannot be unpickled kills the pool's result thread: get() times out.
        with pytest.raises(gk.GrammarError) as info:
            pool.apply_async(_compile, ("root ::= valu",)).get(timeout=30)
    assert [d.code for d in info.value.diagnostics] == ["GK103"]
    assert "valu" in info.value.diagnostics[0].render()
