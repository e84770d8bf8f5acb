"""The backend registry: built-in names, entry points, missing modules and extras."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from importlib.metadata import EntryPoint

import pytest

import grammarkit as gk
from grammarkit.generate import (
    Backend,
    Chunk,
    Completion,
    GenerationError,
    MissingExtraError,
    SamplingParams,
    Timing,
    backend,
    backend_names,
    get_backend,
)
from grammarkit.generate.completion import Choice
from grammarkit.generate.constraint import Constraint
from grammarkit.vocab import Vocabulary


class EchoBackend:
    """A third-party backend: answers the prompt's length, whatever the grammar."""

    name = "echo"

    def __init__(self, word: str = "hi"):
        self.word = word

    def generate(self, constraint: Constraint, prompt: Sequence[int] | str,
                 params: SamplingParams) -> Completion:
        return Completion([Choice(0, self.word * len(prompt), [], "stop")], len(prompt), 0,
                          Timing())

    def stream(self, constraint: Constraint, prompt: Sequence[int] | str,
               params: SamplingParams) -> Iterator[Chunk]:
        yield Chunk(0, self.generate(constraint, prompt, params).text, [], "stop")


def _fake_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    point = EntryPoint("echo", f"{__name__}:EchoBackend", backend.ENTRY_POINT_GROUP)

    def entry_points(group: str) -> list[EntryPoint]:
        return [point] if group == backend.ENTRY_POINT_GROUP else []

    monkeypatch.setattr(backend, "entry_points", entry_points)


def test_entry_point_backends_are_found_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_entry_points(monkeypatch)
    assert backend_names() == ["native", "xgrammar", "remote", "echo"]
    chosen = get_backend("echo", word="yo")
    assert isinstance(chosen, Backend)
    assert gk.generate('root ::= "a"', [1, 2], backend="echo").text == "hihi"
    assert chosen.generate('root ::= "a"', [1, 2, 3], SamplingParams()).text == "yoyoyo"


def test_a_backend_instance_is_used_as_is() -> None:
    mine = EchoBackend("x")
    assert get_backend(mine) is mine
    assert [c.text for c in gk.stream('root ::= "a"', [1], backend=mine)] == ["x"]
    with pytest.raises(TypeError, match="generate"):
        get_backend(42)  # type: ignore[arg-type]


def test_a_missing_remote_module_is_named(monkeypatch: pytest.MonkeyPatch,
                                          small_vocab: Vocabulary) -> None:
    monkeypatch.setitem(sys.modules, "grammarkit.generate.remote", None)
    with pytest.raises(GenerationError, match="remote.*grammarkit.generate.remote") as info:
        get_backend("remote")
    assert info.value.diagnostic.code == "GK350"


def test_a_missing_extra_names_the_pip_install(monkeypatch: pytest.MonkeyPatch,
                                               small_vocab: Vocabulary) -> None:
    monkeypatch.setitem(sys.modules, "xgrammar", None)
    with pytest.raises(MissingExtraError) as info:
        get_backend("xgrammar", vocab=small_vocab)
    assert info.value.diagnostic.code == "GK351"
    assert info.value.diagnostic.hint == "pip install 'grammarkit[xgrammar]'"
    assert isinstance(info.value, ImportError)
