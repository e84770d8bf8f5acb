"""One registry of tokenizer names for every surface that takes ``--tokenizer NAME``."""

from __future__ import annotations

import pytest

from grammarkit.check.tokenizers import load_tokenizer
from grammarkit.cli.common import InputError
from grammarkit.cli.generation import load_vocabulary as cli_load_vocabulary
from grammarkit.server.run import ServerSetupError
from grammarkit.server.run import load_vocabulary as server_load_vocabulary
from grammarkit.vocab.named import NAMED_TOKENIZERS, installed_tokenizers, named_tokenizer


def test_names_are_unique_and_case_insensitive() -> None:
    names = [named.name for named in NAMED_TOKENIZERS]
    assert len(names) == len(set(names))
    assert named_tokenizer("QWEN3.6") is named_tokenizer("qwen3.6") is not None
    assert named_tokenizer("gpt2") is None


def test_every_registered_vocabulary_is_installed_in_the_dev_environment() -> None:
    assert {named.name for named, _ in installed_tokenizers()} == {
        named.name for named in NAMED_TOKENIZERS}


@pytest.mark.parametrize("name", ["cl100k", "QWEN2.5"])
def test_check_sample_and_serve_read_the_same_file(name: str) -> None:
    by_check = load_tokenizer(name).vocab
    by_cli = cli_load_vocabulary(name)
    by_server = server_load_vocabulary(name)
    assert by_check.source == by_cli.source == by_server.source
    assert len(by_check) == len(by_cli) == len(by_server)


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(ServerSetupError, match="neither a file nor one of qwen3.6, qwen2.5"):
        server_load_vocabulary("no-such-tokenizer")
    with pytest.raises(InputError, match="cannot load the tokenizer no-such-tokenizer"):
        cli_load_vocabulary("no-such-tokenizer")
