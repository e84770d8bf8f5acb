"""The collector pause used while big trees are built: it leaves the collector as it found it."""

from __future__ import annotations

import gc
import weakref

from grammarkit._gc import paused_gc


class Node:
    """A tracked object that can sit in a cycle."""

    def __init__(self) -> None:
        self.other: object = None


def test_built_objects_join_the_oldest_generation_and_the_collector_runs_again() -> None:
    with paused_gc():
        assert not gc.isenabled()
        built = Node()
    assert gc.isenabled()
    assert any(obj is built for obj in gc.get_objects(generation=2))


def test_cycles_built_while_paused_are_still_collected() -> None:
    with paused_gc():
        first, second = Node(), Node()
        first.other, second.other = second, first
        probe = weakref.ref(first)
        del first, second
    assert probe() is not None  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert probe() is None


def test_a_programs_frozen_objects_stay_frozen_and_a_disabled_collector_stays_off() -> None:
    mine = Node()
    gc.freeze()
    try:
        with paused_gc():
            Node()
        # still frozen: in none of the generations the collector walks
        assert not any(obj is mine for g in range(3) for obj in gc.get_objects(generation=g))
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_verdict_leaves_no_young_objects_for_the_next_collections() -> None:
    # a scan builds tables, frames and rule automata with the collector off; left young, they
    # would all be walked by the collections after it (0.2 s for eslintrc's schema)
    from grammarkit import Grammar

    rules = "\n".join(f'v{i} ::= "{{" "\\"k{i}\\"" ":" ([0-9]+ | v{i + 1}) "}}"'
                      for i in range(300))
    grammar = Grammar.from_ebnf(f'root ::= v0\n{rules}\nv300 ::= "x"')
    text = "".join(f'{{"k{i}":' for i in range(300)) + "x" + "}" * 300
    gc.collect()
    assert grammar.matches(text)
    assert gc.isenabled()
    assert len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1)) < 500
