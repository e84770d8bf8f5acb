"""Raising Python's recursion limit while a deep, bounded structure is walked."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

DEEP_RECURSION_LIMIT = 20_000
"""Frames allowed inside :func:`deep_recursion` (Python's default is 1,000)."""


@contextmanager
def deep_recursion() -> Iterator[None]:
    """Run the block with a recursion limit of at least :data:`DEEP_RECURSION_LIMIT`.

    For code that recurses once per level of an input whose depth is already bounded (a
    schema nested up to ``loading.MAX_DEPTH``, groups up to ``MAX_NESTING``), where each level
    costs several frames: hashing a nested frozen dataclass alone takes two or three.
    """
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, DEEP_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)
