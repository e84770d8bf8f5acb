"""The compiled-grammar cache: one `MaskEngine` per (canonical grammar, vocabulary).

In a process, the same grammar (compared by its canonical EBNF text and root rule) with the
same vocabulary (compared by its ordinary tokens, see :attr:`TokenIndex.digest`) is compiled
once; the engines of the :data:`ENGINE_CACHE_SIZE` most recently used grammars are kept, fewer
when their tables grow beyond :data:`ENGINE_CACHE_BYTES`.

With the environment variable :data:`CACHE_DIR_VARIABLE` naming a directory, an engine also
starts from the tables an earlier process stored for the same grammar, vocabulary and compiled
automata (its token partition and every token classification), and stores what it has
computed at exit (or on :func:`save`). A file is only used when its checksum, key and every
array check out (:mod:`grammarkit.decode.disk_cache`); otherwise it is recomputed.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import threading
import warnings
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from grammarkit.automata.compiled import CompiledGrammar
from grammarkit.decode.disk_cache import FORMAT_VERSION, Arrays, CacheWarning, DiskCache
from grammarkit.decode.mask_engine import MaskEngine
from grammarkit.decode.token_classes import Context, TokenClasses
from grammarkit.decode.token_index import TokenIndex, token_index
from grammarkit.decode.token_partition import TokenPartition, byte_classes, clear_partitions
from grammarkit.grammar import Grammar
from grammarkit.vocab import Vocabulary

STORED_STATES = 200_000
"""Grammars whose automata have more states than this are not stored (lazily numbered)."""

ENGINE_CACHE_SIZE = 32
"""Engines (compiled grammars with their mask tables) kept per process."""

ENGINE_CACHE_BYTES = 1 << 30
"""Engines beyond the most recent one are dropped while their tables exceed this many bytes."""

CACHE_DIR_VARIABLE = "GRAMMARKIT_CACHE_DIR"
"""The environment variable naming the on-disk cache directory (unset: no disk cache)."""


@dataclass
class _Entry:
    engine: MaskEngine
    disk: DiskCache | None
    disk_key: str
    stored: int
    """Contexts classified when the engine was last loaded from or stored to disk."""


_ENTRIES: OrderedDict[tuple[str, str], _Entry] = OrderedDict()
_LOCK = threading.Lock()
_BUILDING: dict[tuple[str, str], threading.Lock] = {}
_DIGESTS: weakref.WeakKeyDictionary[Grammar, str] = weakref.WeakKeyDictionary()
_SAVE_REGISTERED = False


def grammar_digest(grammar: Grammar) -> str:
    """SHA-256 of the canonical rules (comments and layout aside) and root of ``grammar``
    (memoized per object)."""
    found = _DIGESTS.get(grammar)
    if found is None:
        from grammarkit.ebnf.printer import print_rule

        text = "\n".join([grammar.root, *map(print_rule, grammar.ast.rules)])
        found = _DIGESTS[grammar] = hashlib.sha256(text.encode("utf-8", "surrogatepass")
                                                   ).hexdigest()
    return found


def mask_engine(grammar: Grammar, vocab: Vocabulary) -> MaskEngine:
    """The engine of ``grammar`` and ``vocab``: cached, or compiled now (see the module doc)."""
    index = token_index(vocab)
    key = (grammar_digest(grammar), index.digest)
    with _LOCK:
        entry = _ENTRIES.get(key)
        if entry is not None:
            _ENTRIES.move_to_end(key)
            return entry.engine
        building = _BUILDING.setdefault(key, threading.Lock())
    with building:  # threads asking for the same grammar at once wait for one compilation
        with _LOCK:
            entry = _ENTRIES.get(key)
        if entry is None:
            entry = _build(grammar.compiled, index, key)
            with _LOCK:
                _ENTRIES[key] = entry
                _evict()
                _BUILDING.pop(key, None)
    return entry.engine


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
        classified = entry.engine.classifier.num_classified
        if entry.disk is None or classified <= entry.stored:
            continue
        if entry.disk.store(entry.disk_key, _tables_of(entry.engine)):
            entry.stored = classified
            written += 1
    return written


def _evict() -> None:
    while len(_ENTRIES) > ENGINE_CACHE_SIZE:
        _ENTRIES.popitem(last=False)
    total = sum(entry.engine.nbytes for entry in _ENTRIES.values())
    while len(_ENTRIES) > 1 and total > ENGINE_CACHE_BYTES:
        _, dropped = _ENTRIES.popitem(last=False)
        total -= dropped.engine.nbytes


def _build(compiled: CompiledGrammar, index: TokenIndex, key: tuple[str, str]) -> _Entry:
    directory = os.environ.get(CACHE_DIR_VARIABLE)
    if not directory:
        return _Entry(MaskEngine(compiled, index), None, "", 0)
    global _SAVE_REGISTERED
    if not _SAVE_REGISTERED:
        atexit.register(save)
        _SAVE_REGISTERED = True
    if not compiled.build_all(STORED_STATES):  # stored tables need a fixed numbering
        return _Entry(MaskEngine(compiled, index), None, "", 0)
    disk = DiskCache(directory)
    disk_key = f"mask-tables/{FORMAT_VERSION}/{key[0]}/{key[1]}/{_structure_digest(compiled)}"
    stored = disk.load(disk_key)
    if stored is not None:
        try:
            engine = _restored(compiled, index, stored)
        except (ValueError, KeyError, IndexError) as exc:
            warnings.warn(f"ignoring cache file {disk.path(disk_key)}: {exc}", CacheWarning,
                          stacklevel=4)
        else:
            return _Entry(engine, disk, disk_key, engine.classifier.num_classified)
    return _Entry(MaskEngine(compiled, index), disk, disk_key, 0)


def _structure_digest(compiled: CompiledGrammar) -> str:
    """SHA-256 of the automata's structure (see :meth:`CompiledGrammar.structure_digest`)."""
    return compiled.structure_digest()


def _tables_of(engine: MaskEngine) -> Arrays:
    """The engine's token partition and token classes as arrays (see :func:`_restored`)."""
    core, partition = engine.core, engine.partition
    classified = engine.classifier.classified()
    empty = np.zeros(0, dtype=np.int64)
    configs: list[list[int]] = []
    rules: list[list[int]] = []
    follow_bytes: list[bytes] = []
    for (config, own, follow), _ in classified:
        configs += [sorted(core.states(config)), sorted(core.states(own))]
        rules.append([rule for rule, _ in follow])
        follow_bytes += [bits.to_bytes(32, "little") for _, bits in follow]
    width = len(engine.index.ordinary_words)
    accepted = (np.stack([c.accepted for _, c in classified]) if classified
                else np.zeros((0, width), dtype=np.int32))
    return {
        "byte_classes": partition.classes.astype(np.int16),
        "group_of": (partition.group_of if partition.is_grouped else empty).astype(np.int32),
        "representative": (partition.representative if partition.is_grouped
                           else empty).astype(np.int32),
        **_ragged("config_states", configs),
        **_ragged("follow_rules", rules),
        "follow_bytes": np.frombuffer(b"".join(follow_bytes), dtype=np.uint8).reshape(-1, 32),
        "accepted": accepted,
        **_ragged("uncertain", [c.uncertain.tolist() for _, c in classified]),
    }


def _ragged(name: str, rows: list[list[int]]) -> Arrays:
    lengths = np.array([len(row) for row in rows], dtype=np.int64)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter((x for row in rows for x in row), dtype=np.int32, count=int(offsets[-1]))
    return {name: flat, f"{name}_offsets": offsets}


def _rows(stored: Arrays, name: str, count: int, limit: int) -> list[list[int]]:
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


def _restored(compiled: CompiledGrammar, index: TokenIndex, stored: Arrays) -> MaskEngine:
    """An engine starting from stored tables, every array checked against the grammar and
    vocabulary.

    Raises
    ------
    ValueError
        If any array is inconsistent with them.
    """
    classes = byte_classes(compiled)
    if not np.array_equal(stored["byte_classes"], classes):
        raise ValueError("byte classes differ")
    group_of = stored["group_of"].astype(np.int64)
    representative = stored["representative"].astype(np.int64)
    groups = len(representative)
    if not len(group_of) and not groups:
        partition = TokenPartition(classes, index)  # not computed when stored
    elif (group_of.shape != (index.num_tokens,) or representative.ndim != 1
            or (len(group_of) and (group_of.min() < 0 or group_of.max() >= groups))
            or (groups and (representative.min() < 0 or representative.max() >= index.num_tokens))
            or not np.array_equal(group_of[representative], np.arange(groups))):
        raise ValueError("bad token partition")
    else:
        partition = TokenPartition(classes, index, (group_of, representative))
    engine = MaskEngine(compiled, index, partition)
    count = len(stored["accepted"])
    width = len(index.ordinary_words)
    if stored["accepted"].dtype != np.int32 or stored["accepted"].shape != (count, width):
        raise ValueError("bad accepted tokens")
    accepted = stored["accepted"].astype(np.int32)
    if np.any(accepted & ~index.ordinary_words):
        raise ValueError("accepted tokens outside the vocabulary")
    core = engine.core
    follow_of = core.follow
    configs = _rows(stored, "config_states", 2 * count, compiled.num_states)
    rules = _rows(stored, "follow_rules", count, compiled.num_rules + 1)
    follow_bytes = stored["follow_bytes"]
    if follow_bytes.dtype != np.uint8 or follow_bytes.shape != (sum(map(len, rules)), 32):
        raise ValueError("bad follow sets")
    uncertain = _rows(stored, "uncertain", count, index.num_tokens)
    follow_at = 0
    for i in range(count):
        context_configs = []
        follow = tuple((rule, int.from_bytes(follow_bytes[follow_at + j].tobytes(), "little"))
                       for j, rule in enumerate(rules[i]))
        follow_at += len(rules[i])
        for states in configs[2 * i: 2 * i + 2]:
            config = core.config(states)
            if sorted(core.states(config)) != states:
                raise ValueError("configuration not closed")
            context_configs.append(config)
        if follow_of(context_configs[1]) != follow:
            raise ValueError("follow sets differ")
        ranks = np.array(uncertain[i], dtype=np.int64)
        if np.any(np.diff(ranks) <= 0):
            raise ValueError("uncertain tokens not ascending")
        words = accepted[i].copy()
        words.setflags(write=False)
        ranks.setflags(write=False)
        context: Context = (context_configs[0], context_configs[1], follow)
        engine.classifier.add(context, TokenClasses(words, ranks))
    return engine
