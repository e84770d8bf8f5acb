"""Pausing Python's cyclic garbage collector while a large, acyclic structure is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Run the block with the cyclic collector off (reference counting still frees memory).

    Building an AST of a million nodes triggers full collections that walk every node again
    and again (a third of the time of parsing a 1 MB grammar); the nodes form no cycles, so
    nothing is lost by leaving them to later collections. On the way out, what the block
    built joins the oldest generation (through ``gc.freeze``/``gc.unfreeze``) rather than the
    youngest, whose next collection would walk all of it at once; this is skipped when the
    program has frozen objects of its own (a pre-fork server), which must stay frozen.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
