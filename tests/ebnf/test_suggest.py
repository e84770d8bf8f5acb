"""The "did you mean" hint: close names are found, also past the comparison budget."""

from __future__ import annotations

import pytest

from grammarkit import Grammar, GrammarError
from grammarkit.ebnf import suggest
from grammarkit.ebnf.suggest import NameSuggester


def test_closest_name_within_budget() -> None:
    assert NameSuggester(["value", "object", "array"]).closest("valu") == "value"
    assert NameSuggester(["value", "object"]).closest("zzzzzz") is None


def test_index_finds_names_within_two_edits_once_the_budget_is_spent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(suggest, "COMPARISON_BUDGET", 10)
    names = [f"rule_{i}" for i in range(100)] + ["string_value"]
    suggester = NameSuggester(names)
    assert suggester.closest("strng_value") == "string_value"  # a deletion
    assert suggester.closest("string_valeu") == "string_value"  # a transposition
    assert suggester.closest("rule_7x") == "rule_7"  # an insertion
    assert suggester.closest("completely_different") is None


def test_every_undefined_reference_of_many_gets_its_hint() -> None:
    text = "root ::= " + " ".join(f"item_{i}x" for i in range(3000)) + "\n"
    text += "\n".join(f'item_{i} ::= "x"' for i in range(3000))
    with pytest.raises(GrammarError) as info:
        Grammar.from_ebnf(text)
    shown = [d for d in info.value.diagnostics if d.code == "GK103"]
    assert shown and all(
        d.hint == f"did you mean `{d.message.split('`')[1][:-1]}`?" for d in shown
    )
