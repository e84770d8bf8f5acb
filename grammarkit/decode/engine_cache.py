"""The compiled-grammar cache: one `MaskEngine` per (canonical grammar, vocabulary).

In a process, the same grammar (compared by its canonical EBNF text and root rule) with the
same vocabulary (compared by its ordinary tokens, see :attr:`TokenIndex.digest`) is compiled
once; the engines of the :data:`ENGINE_CACHE_SIZE` most recently used grammars are kept, fewer
when their tables grow beyond :data:`ENGINE_CACHE_BYTES`. A grammar is first compared by its
:data:`Shape` (root, number of rules, vocabulary): printing every rule for the canonical digest
(about 1.5 s for a 10 MB grammar) is only done when a cached engine has the same shape, or
for the disk cache's key.

With the environment variable :data:`CACHE_DIR_VARIABLE` naming a directory, an engine also
starts from the tables an earlier process stored for the same grammar, vocabulary and compiler
and decoder code (:func:`code_fingerprint`: an edited checkout or another release never reads
tables it did not write), and stores what it has computed at exit (or on :func:`save`). A file is only used when its checksum, key and every
array check out (:mod:`grammarkit.decode.disk_cache`); otherwise it is recomputed.
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import os
import threading
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from grammarkit._gc import paused_gc
from grammarkit.decode.bitmask import Words
from grammarkit.decode.disk_cache import (
    FORMAT_VERSION,
    Arrays,
    CacheWarning,
    DiskCache,
    StoredArrays,
)
from grammarkit.decode.earley_core import Frame, ParseState
from grammarkit.decode.mask_engine import MaskEngine
from grammarkit.decode.state_automaton import StateKey
from grammarkit.decode.token_classes import Context, TokenClasses, classified_groups
from grammarkit.decode.token_index import TokenIndex, token_index
from grammarkit.decode.token_partition import clear_partitions
from grammarkit.grammar import Grammar
from grammarkit.vocab import Vocabulary

START_FROM_DISK_SECONDS = 0.002
"""An engine whose first mask took longer than this to compute stores it in a file of its
own, which a new engine reads at once; its other tables are read at its second state. (Below,
computing the first mask costs about what opening a file does, 0.5–1 ms measured.)"""

STORED_MASKS = 1024
"""Masks stored per grammar at most (the most recently used; 31 MB for 248k tokens)."""

ENGINE_CACHE_SIZE = 32
"""Engines (compiled grammars with their mask tables) kept per process."""

ENGINE_CACHE_BYTES = 1 << 30
"""Engines beyond the most recent one are dropped while their tables exceed this many bytes."""

CACHE_DIR_VARIABLE = "GRAMMARKIT_CACHE_DIR"
"""The environment variable naming the on-disk cache directory (unset: no disk cache)."""


Shape = tuple[str, int, str]
"""A grammar's root, its number of rules and the vocabulary's digest: equal for a grammar and
vocabulary equal to a cached engine's (the canonical digest spells both), cheap to compute."""


@dataclass
class _Entry:
    engine: MaskEngine
    grammar: Grammar
    """The grammar compiled (its digest is computed when another of its shape is looked up)."""
    shape: Shape
    disk: DiskCache | None
    disk_key: str
    stored: int
    """The engine's revision when it was last loaded from or stored to disk."""


_ENTRIES: OrderedDict[int, _Entry] = OrderedDict()
"""The cached engines by serial number, least recently used first."""
_SERIALS = itertools.count()
_LOCK = threading.Lock()
_BUILDING: dict[Shape, threading.Lock] = {}
_DIGESTS: weakref.WeakKeyDictionary[Grammar, str] = weakref.WeakKeyDictionary()
_SAVE_REGISTERED = False


def grammar_digest(grammar: Grammar) -> str:
    """SHA-256 of the root, number of rules and canonical rules (comments and layout aside) of
    ``grammar`` (memoized per object)."""
    found = _DIGESTS.get(grammar)
    if found is None:
        from grammarkit.ebnf.printer import print_rule

        rules = grammar.ast.rules
        text = "\n".join([grammar.root, str(len(rules)), *map(print_rule, rules)])
        found = _DIGESTS[grammar] = hashlib.sha256(text.encode("utf-8", "surrogatepass")
                                                   ).hexdigest()
    return found


def mask_engine(grammar: Grammar, vocab: Vocabulary) -> MaskEngine:
    """The engine of ``grammar`` and ``vocab``: cached, or compiled now (see the module doc)."""
    index = token_index(vocab)
    shape = (grammar.root, len(grammar.ast.rules), index.digest)
    entry = _cached(grammar, shape)
    if entry is not None:
        return entry.engine
    with _LOCK:
        building = _BUILDING.setdefault(shape, threading.Lock())
    with building:  # threads asking for the same grammar at once wait for one compilation
        entry = _cached(grammar, shape)
        if entry is None:
            try:
                entry = _build(grammar, index, shape)
                with _LOCK:
                    _ENTRIES[next(_SERIALS)] = entry
                    _evict()
            finally:  # a build that raised (a token id out of range...) leaves no lock behind
                with _LOCK:
                    _BUILDING.pop(shape, None)
    return entry.engine


def _cached(grammar: Grammar, shape: Shape) -> _Entry | None:
    """The cached entry of a grammar equal to ``grammar`` (marked most recently used), if any.

    Digests are only computed when some cached grammar has the same ``shape``.
    """
    with _LOCK:
        candidates = [(serial, entry) for serial, entry in _ENTRIES.items()
                      if entry.shape == shape]
    for serial, entry in candidates:
        if entry.grammar is grammar or grammar_digest(entry.grammar) == grammar_digest(grammar):
            with _LOCK:
                if serial in _ENTRIES:
                    _ENTRIES.move_to_end(serial)
            return entry
    return None


def clear() -> None:
    """Forget every cached engine and token partition, as in a new process (matchers built
    from them keep working)."""
    with _LOCK:
        _ENTRIES.clear()
        clear_partitions()


def save() -> int:
    """Store the tables of cached engines that computed something new since loaded or stored.

    Only with the disk cache enabled when the engine was built. Returns how many were written.
    """
    with _LOCK:
        entries = list(_ENTRIES.values())
    written = 0
    for entry in entries:
        revision = entry.engine.revision
        if entry.disk is None or revision <= entry.stored:
            continue
        engine = entry.engine
        if engine.first_seconds > START_FROM_DISK_SECONDS:
            start = _start_mask(engine)
            if start is not None:
                entry.disk.store(_start_key(entry.disk_key), {"start_mask": start})
        if entry.disk.store(entry.disk_key, _tables_of(engine)):
            entry.stored = revision
            written += 1
    return written


def _evict() -> None:
    while len(_ENTRIES) > ENGINE_CACHE_SIZE:
        _ENTRIES.popitem(last=False)
    total = sum(entry.engine.nbytes for entry in _ENTRIES.values())
    while len(_ENTRIES) > 1 and total > ENGINE_CACHE_BYTES:
        _, dropped = _ENTRIES.popitem(last=False)
        total -= dropped.engine.nbytes


@functools.cache
def code_fingerprint(package: Path) -> str:
    """SHA-256 of the compiler's and the decoder's sources under ``package`` (the
    ``automata`` and ``decode`` modules), which decide what the stored tables hold.

    Part of the disk cache's key instead of the version number, which an editable install
    keeps while its code changes.
    """
    digest = hashlib.sha256()
    for path in sorted([*package.glob("automata/*.py"), *package.glob("decode/*.py")]):
        digest.update(f"{path.parent.name}/{path.name}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def _build(grammar: Grammar, index: TokenIndex, shape: Shape) -> _Entry:
    directory = os.environ.get(CACHE_DIR_VARIABLE)
    with paused_gc():  # compiling builds many small objects, no cycles
        engine = MaskEngine(grammar.compiled, index)
    if not directory:
        return _Entry(engine, grammar, shape, None, "", 0)
    global _SAVE_REGISTERED
    if not _SAVE_REGISTERED:
        atexit.register(save)
        _SAVE_REGISTERED = True
    disk = DiskCache(directory)
    digest = grammar_digest(grammar)
    # the tables hold rule numbers: how many rules are numbered (all, or those reachable from
    # the root, see compile_grammar) is part of the key
    numbered = grammar.compiled.num_rules
    code = code_fingerprint(Path(__file__).resolve().parent.parent)
    disk_key = f"mask-tables/{FORMAT_VERSION}/{code}/{digest}/{index.digest}/rules-{numbered}"
    start = disk.load(_start_key(disk_key))  # stored only where computing it took long
    if start is not None:
        try:
            _restore_start(engine, index, start)
        except (ValueError, KeyError, IndexError) as exc:
            _ignore(start, exc)
        finally:
            start.close()
    engine.defer(lambda restored: _restore_later(restored, index, disk.load(disk_key)))
    return _Entry(engine, grammar, shape, disk, disk_key, 0)


def _start_key(disk_key: str) -> str:
    return f"{disk_key}/start"


def _ignore(stored: StoredArrays, exc: Exception) -> None:
    warnings.warn(f"ignoring cache file {stored.path}: {exc}", CacheWarning, stacklevel=5)


def _tables_of(engine: MaskEngine) -> Arrays:
    """The engine's token partition, routed masks and classes as arrays (see
    :func:`_restore_start`, :func:`_restore_later`).

    States are stored by their routes (:attr:`MaskEngine.routes`: a parent state and the bytes
    from it), so another process finds them by replaying bytes from the start state, whatever
    its own numbering; classes by a routed state holding their context.
    """
    partition = engine.partition
    empty = np.zeros(0, dtype=np.int64)
    routes = engine.routes
    nodes: dict[StateKey, int] = {}
    parents: list[int] = []
    steps: list[bytes] = []

    def node(key: StateKey) -> int | None:
        chain: list[StateKey] = []
        at: StateKey | None = key
        while at is not None and at not in nodes:
            if at not in routes or len(chain) > len(routes):
                return None
            chain.append(at)
            at = routes[at][0]
        for item in reversed(chain):
            parent, data = routes[item]
            nodes[item] = len(parents)
            parents.append(-1 if parent is None else nodes[parent])
            steps.append(data)
        return nodes[key]

    mask_nodes, mask_rows = [], []
    for key, words in engine.masks()[-STORED_MASKS:]:
        number = node(key)
        if number is not None:
            mask_nodes.append(number)
            mask_rows.append(words)
    class_nodes, class_groups, classes = [], [], []
    for context, found in engine.classifier.classified():
        where = engine.context_states.get(context)
        number = None if where is None else node(where[0])
        if where is not None and number is not None:
            class_nodes.append(number)
            class_groups.append(where[1])
            classes.append(found)
    width = len(engine.index.ordinary_words)

    def stacked(rows: list[Words]) -> Words:
        return np.stack(rows) if rows else np.zeros((0, width), dtype=np.int32)

    return {
        "byte_classes": partition.classes.astype(np.int16),
        "group_of": (partition.group_of if partition.is_grouped else empty).astype(np.int32),
        "representative": (partition.representative if partition.is_grouped
                           else empty).astype(np.int32),
        "route_parent": np.array(parents, dtype=np.int32),
        **_ragged("route_bytes", [list(data) for data in steps]),
        "mask_node": np.array(mask_nodes, dtype=np.int32),
        "masks": stacked(mask_rows),
        "class_node": np.array(class_nodes, dtype=np.int32),
        "class_group": np.array(class_groups, dtype=np.int32),
        "accepted": stacked([c.accepted for c in classes]),
        **_ragged("uncertain", [c.uncertain.tolist() for c in classes]),
        "surveyed": np.array([engine.surveyed], dtype=np.uint8),
    }


def _start_mask(engine: MaskEngine) -> Words | None:
    """The start state's mask as a one-row array, if cached."""
    found = engine.cached_mask(engine.state_key(engine.core.initial(), {}))
    return None if found is None else found[None, :]


def _ragged(name: str, rows: list[list[int]]) -> Arrays:
    lengths = np.array([len(row) for row in rows], dtype=np.int64)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter((x for row in rows for x in row), dtype=np.int32, count=int(offsets[-1]))
    return {name: flat, f"{name}_offsets": offsets}


def _rows(stored: StoredArrays, name: str, count: int, limit: int) -> list[list[int]]:
    """The rows stored by :func:`_ragged`, checked: ``count`` rows of values in ``[0, limit)``."""
    flat, offsets = stored[name], stored[f"{name}_offsets"]
    if (offsets.ndim != 1 or len(offsets) != count + 1 or offsets[0] != 0
            or np.any(np.diff(offsets) < 0) or offsets[-1] != len(flat)):
        raise ValueError(f"bad {name} offsets")
    if len(flat) and (flat.min() < 0 or flat.max() >= limit):
        raise ValueError(f"{name} out of range")
    values = flat.tolist()
    bounds = offsets.tolist()
    return [values[bounds[i]: bounds[i + 1]] for i in range(count)]


def _words(stored: StoredArrays, name: str, count: int | None, index: TokenIndex) -> Words:
    """Bitmask rows ``name``, checked: ``int32``, of the vocabulary's width, no bit beyond
    its size."""
    rows = stored[name]
    width = len(index.ordinary_words)
    if (rows.dtype != np.int32 or rows.ndim != 2 or rows.shape[1] != width
            or count is not None and len(rows) != count):
        raise ValueError(f"bad {name} rows")
    tail = index.vocab_size % 32
    if tail and len(rows) and np.any(rows[:, -1].view(np.uint32) >> np.uint32(tail)):
        raise ValueError(f"{name}: tokens outside the vocabulary")
    return rows


def _restore_start(engine: MaskEngine, index: TokenIndex, stored: StoredArrays) -> None:
    """Add the stored mask of the start state to ``engine``.

    Raises
    ------
    ValueError
        If it is inconsistent with the vocabulary.
    """
    start = _words(stored, "start_mask", None, index)
    if len(start) > 1:
        raise ValueError("bad start_mask rows")
    if len(start):
        engine.add_mask(engine.state_key(engine.core.initial(), {}), start[0].copy(),
                        (None, b""))


def _restore_later(engine: MaskEngine, index: TokenIndex, stored: StoredArrays | None) -> None:
    """Add the token partition, masks and classes of ``stored`` to ``engine`` (all or, with a
    warning, none)."""
    if stored is None:
        return
    try:
        groups = _partition(engine, index, stored)
        _restore_routed(engine, index, stored)
    except (ValueError, KeyError, IndexError) as exc:
        _ignore(stored, exc)
    else:
        if groups is not None:
            engine.partition.adopt(groups)
    finally:
        stored.close()


def _partition(engine: MaskEngine, index: TokenIndex, stored: StoredArrays
               ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """The stored token partition's groups, checked (``None`` if none were stored).

    Raises
    ------
    ValueError
        If they do not fit the grammar's byte classes and the vocabulary.
    """
    if not np.array_equal(stored["byte_classes"], engine.partition.classes):
        raise ValueError("byte classes differ")
    group_of = stored["group_of"].astype(np.int64)
    representative = stored["representative"].astype(np.int64)
    groups = len(representative)
    if not len(group_of) and not groups:
        return None
    if (group_of.shape != (index.num_tokens,) or representative.ndim != 1
            or (len(group_of) and (group_of.min() < 0 or group_of.max() >= groups))
            or (groups and (representative.min() < 0 or representative.max() >= index.num_tokens))
            or not np.array_equal(group_of[representative], np.arange(groups))):
        raise ValueError("bad token partition")
    return group_of, representative


def _restore_routed(engine: MaskEngine, index: TokenIndex, stored: StoredArrays) -> None:
    """Add the stored masks and classes to ``engine``, replaying their routes (all or none).

    Raises
    ------
    ValueError
        If any array is inconsistent (a route the grammar rejects, a row out of range).
    """
    parents = stored["route_parent"]
    count = len(parents)
    if parents.dtype != np.int32 or parents.ndim != 1 or np.any(
            (parents < -1) | (parents >= np.arange(count))):
        raise ValueError("bad route parents")
    steps = _rows(stored, "route_bytes", count, 256)
    core = engine.core
    frame_keys: dict[Frame, int] = {}
    states: list[ParseState] = []
    keys: list[StateKey] = []
    for parent, step in zip(parents.tolist(), steps, strict=True):
        before = core.initial() if parent < 0 else states[parent]
        state = core.advance(before, bytes(step))
        if state is None:
            raise ValueError("a stored route is rejected by the grammar")
        states.append(state)
        keys.append(engine.state_key(state, frame_keys))
    mask_node = stored["mask_node"]
    masks = _words(stored, "masks", len(mask_node), index)
    class_node, class_group = stored["class_node"], stored["class_group"]
    accepted = _words(stored, "accepted", len(class_node), index)
    if np.any(accepted & ~index.ordinary_words):
        raise ValueError("accepted tokens outside the vocabulary")
    uncertain = _rows(stored, "uncertain", len(class_node), index.num_tokens)
    for nodes in (mask_node, class_node):
        if nodes.dtype != np.int32 or nodes.ndim != 1 or np.any((nodes < 0) | (nodes >= count)):
            raise ValueError("bad node numbers")
    if class_group.shape != class_node.shape:
        raise ValueError("bad class groups")
    contexts: list[tuple[Context, TokenClasses]] = []
    classifier = engine.classifier
    for node, group, words, ranks in zip(class_node.tolist(), class_group.tolist(), accepted,
                                         uncertain, strict=True):
        groups = classified_groups(states[node])
        if not 0 <= group < len(groups):
            raise ValueError("bad class groups")
        ordered = np.array(ranks, dtype=np.int64)
        if np.any(np.diff(ordered) <= 0):
            raise ValueError("uncertain tokens not ascending")
        kept = words.copy()
        kept.setflags(write=False)
        ordered.setflags(write=False)
        contexts.append((classifier.context(*groups[group]), TokenClasses(kept, ordered)))
    for node, words in zip(mask_node.tolist(), masks, strict=True):
        parent = int(parents[node])
        engine.add_mask(keys[node], words.copy(), (None if parent < 0 else keys[parent],
                                                   bytes(steps[node])))
    for context, found in contexts:
        classifier.add(context, found)
    engine.surveyed = bool(stored["surveyed"].any())
