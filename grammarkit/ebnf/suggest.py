""""Did you mean" hints for misspelled rule names, in time linear in the grammar's size.

``difflib.get_close_matches`` compares a name with every candidate; asked once per undefined
reference that is quadratic (20,000 undefined references among 20,000 rules ran for minutes).
:class:`NameSuggester` compares names with ``difflib`` while a fixed budget of comparisons
lasts, then only with the names one deletion away from the query (a symmetric-deletion index:
every name within edit distance two shares a key with it), and remembers each answer.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

COMPARISON_BUDGET = 20_000
"""Name comparisons a suggester makes against the whole name list before it uses its index."""

_CUTOFF = 0.6


class NameSuggester:
    """Suggests the defined name closest to a misspelled one."""

    def __init__(self, names: Iterable[str]):
        self._names = list(names)
        self._budget = COMPARISON_BUDGET
        self._answers: dict[str, str | None] = {}
        self._index: dict[str, list[str]] | None = None

    def closest(self, name: str) -> str | None:
        """The most similar defined name (``difflib`` ratio at least 0.6), or ``None``."""
        if name not in self._answers:
            if len(self._names) <= self._budget:
                self._budget -= len(self._names)
                candidates = self._names
            else:
                candidates = self._neighbours(name)
            close = difflib.get_close_matches(name, candidates, n=1, cutoff=_CUTOFF)
            self._answers[name] = close[0] if close else None
        return self._answers[name]

    def hint(self, name: str) -> str | None:
        """``did you mean `x`?`` for the closest name, or ``None``."""
        close = self.closest(name)
        return f"did you mean `{close}`?" if close else None

    def _neighbours(self, name: str) -> list[str]:
        if self._index is None:
            index: dict[str, list[str]] = {}
            for candidate in self._names:
                for key in _deletions(candidate):
                    index.setdefault(key, []).append(candidate)
            self._index = index
        found: dict[str, None] = {}
        for key in _deletions(name):
            found.update(dict.fromkeys(self._index.get(key, ())))
        return list(found)


def _deletions(name: str) -> set[str]:
    """``name`` and every string made by deleting one of its characters."""
    return {name, *(name[:i] + name[i + 1 :] for i in range(len(name)))}
