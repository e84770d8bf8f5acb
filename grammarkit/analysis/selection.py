"""Which lint rules run: ruff-style ``select`` / ``ignore`` lists of code prefixes.

``GK2`` names every warning, ``GK203`` one rule, ``ALL`` everything. When a code matches both
lists, the longer (more specific) prefix wins; on a tie ``ignore`` wins.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

ALL = "ALL"
_SELECTOR = re.compile(r"GK[0-9]{0,3}")


def normalize_selector(selector: str) -> str:
    """``selector`` upper-cased and checked.

    Raises
    ------
    ValueError
        If it is neither ``ALL`` nor a code prefix such as ``GK``, ``GK2`` or ``GK201``.
    """
    cleaned = selector.strip().upper()
    if cleaned != ALL and not _SELECTOR.fullmatch(cleaned):
        raise ValueError(
            f"invalid rule selector {selector!r}: use a code such as GK201, a prefix such as GK2, "
            "or ALL")
    return cleaned


def _specificity(code: str, selectors: Iterable[str]) -> int:
    """The length of the longest selector matching ``code`` (``ALL`` counts 0), or -1."""
    best = -1
    for selector in selectors:
        if selector == ALL:
            best = max(best, 0)
        elif code.startswith(selector):
            best = max(best, len(selector))
    return best


def enabled_codes(codes: Iterable[str], select: Sequence[str] | None = None,
                  ignore: Sequence[str] | None = None) -> list[str]:
    """The ``codes`` that ``select`` (default ``ALL``) picks and ``ignore`` does not.

    Raises
    ------
    ValueError
        For an invalid selector, or one that matches neither a lint rule nor the errors (GK1).
    """
    codes = list(codes)
    chosen = [normalize_selector(s) for s in (select if select is not None else [ALL])]
    dropped = [normalize_selector(s) for s in (ignore or [])]
    for selector in (*chosen, *dropped):
        if selector == ALL or selector.startswith("GK1"):
            continue  # errors: always reported, so selecting them selects no lint rule
        if not any(code.startswith(selector) for code in codes):
            raise ValueError(f"rule selector {selector!r} matches no lint rule")
    enabled = []
    for code in codes:
        wanted = _specificity(code, chosen)
        unwanted = _specificity(code, dropped)
        if wanted >= 0 and wanted > unwanted:
            enabled.append(code)
    return enabled
