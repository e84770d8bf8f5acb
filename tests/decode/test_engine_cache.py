"""The compiled-grammar cache: in a process, and on disk (``GRAMMARKIT_CACHE_DIR``) where every
bad file is ignored with a warning and never trusted."""

from __future__ import annotations

import errno
import os
import random
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, disk_cache, engine_cache
from grammarkit.decode.disk_cache import CacheWarning, DiskCache
from grammarkit.vocab import Vocabulary

TOKENS = [b"a", b"b", b"ab", b"1", b"12", b"+", b"(", b")", b" ", b"</s>", b"x1", b"1+"]
STOP = 9
ARITHMETIC = 'root ::= expr\nexpr ::= term ("+" term)*\nterm ::= [0-9]+ | "(" expr ")"'


@pytest.fixture
def vocab() -> Vocabulary:
    return Vocabulary(TOKENS, stop_ids=[STOP])


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv(engine_cache.CACHE_DIR_VARIABLE, raising=False)
    engine_cache.clear()
    yield
    engine_cache.clear()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "cache"
    monkeypatch.setenv(engine_cache.CACHE_DIR_VARIABLE, str(directory))
    return directory


def _walk(matcher: TokenMatcher, steps: int = 25, seed: int = 0) -> list[list[int]]:
    """The masks along a seeded random walk (restarting after each finished sentence)."""
    rng = random.Random(seed)
    masks = []
    for _ in range(steps):
        allowed = matcher.allowed_token_ids().tolist()
        masks.append(allowed)
        ordinary = [t for t in allowed if t != STOP]
        if not ordinary or rng.random() < 0.1 and STOP in allowed:
            matcher.reset()
            continue
        assert matcher.accept_token(rng.choice(ordinary))
    return masks


def _reference(vocab: Vocabulary, text: str = ARITHMETIC) -> list[list[int]]:
    """The masks of a freshly compiled engine, no disk cache involved."""
    saved = os.environ.pop(engine_cache.CACHE_DIR_VARIABLE, None)
    engine_cache.clear()
    try:
        return _walk(TokenMatcher(Grammar.from_ebnf(text), vocab))
    finally:
        engine_cache.clear()
        if saved is not None:
            os.environ[engine_cache.CACHE_DIR_VARIABLE] = saved


# -- in a process ----------------------------------------------------------------------------------
def test_same_grammar_and_vocabulary_compile_once(vocab: Vocabulary) -> None:
    first = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    respelled = Grammar.from_ebnf("# the same grammar\nroot ::= expr\n"
                                  'expr ::= term ( "+" term )*\n'
                                  'term ::= [0-9]+ | "(" expr ")"\n')
    second = TokenMatcher(respelled, Vocabulary(list(TOKENS), stop_ids=[STOP]))
    assert second._engine is first._engine
    assert "compiled" not in respelled.__dict__  # never compiled
    other_grammar = TokenMatcher(Grammar.from_ebnf('root ::= "a"+'), vocab)
    other_vocab = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), Vocabulary(TOKENS + [b"2"]))
    assert len({id(m._engine) for m in (first, other_grammar, other_vocab)}) == 3


def test_threads_asking_at_once_share_one_compilation(vocab: Vocabulary) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        matchers = list(pool.map(lambda _: TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab),
                                 range(8)))
    assert len({id(m._engine) for m in matchers}) == 1
    assert not engine_cache._BUILDING


def test_cache_is_bounded(vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_cache, "ENGINE_CACHE_SIZE", 2)
    texts = ['root ::= "a"+', 'root ::= "b"+', 'root ::= "ab"+']
    engines = [TokenMatcher(Grammar.from_ebnf(t), vocab)._engine for t in texts]
    assert TokenMatcher(Grammar.from_ebnf(texts[2]), vocab)._engine is engines[2]
    assert TokenMatcher(Grammar.from_ebnf(texts[0]), vocab)._engine is not engines[0]
    monkeypatch.setattr(engine_cache, "ENGINE_CACHE_BYTES", 0)
    TokenMatcher(Grammar.from_ebnf(texts[1]), vocab)
    assert len(engine_cache._ENTRIES) == 1  # the most recent engine is always kept


# -- on disk -------------------------------------------------------------------------------------
def test_disk_cache_is_off_by_default(vocab: Vocabulary) -> None:
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    assert engine_cache.save() == 0


def test_disk_cache_round_trip(vocab: Vocabulary, cache_dir: Path) -> None:
    expected = _reference(vocab)
    first = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    assert _walk(first) == expected
    groups = first._engine.partition.group_of.copy()  # computed, so stored too
    assert engine_cache.save() == 1
    assert engine_cache.save() == 0  # nothing new since
    assert len(list(cache_dir.glob("*.gkcache"))) == 1
    engine_cache.clear()  # a restarted process
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    classified = restored._engine.classifier.num_classified
    assert classified > 0
    assert restored._engine.partition.is_grouped
    assert np.array_equal(restored._engine.partition.group_of, groups)
    assert _walk(restored) == expected
    assert restored._engine.classifier.num_classified == classified  # nothing recomputed


def _reloaded(vocab: Vocabulary, match: str) -> TokenMatcher:
    """A matcher built while the cache file is bad: a warning, then a correct fresh engine."""
    with pytest.warns(CacheWarning, match=match):
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    assert matcher._engine.classifier.num_classified == 0
    return matcher


@pytest.mark.parametrize("damage, match", [
    (lambda data: data[: len(data) // 2], "checksum|truncated"),
    (lambda data: data[:-40] + bytes(b ^ 0xFF for b in data[-40:]), "checksum"),
    (lambda data: b"garbage" + data, "not a grammarkit cache file"),
    (lambda data: data[:20], "truncated"),
    (lambda data: data.replace(b'"key"', b'"kex"', 1), "another grammar"),
    (lambda data: data.replace(disk_cache.MAGIC + bytes([disk_cache.FORMAT_VERSION]),
                               disk_cache.MAGIC + bytes([99]), 1), "format version"),
])
def test_damaged_files_are_ignored(vocab: Vocabulary, cache_dir: Path, damage: object,
                                   match: str) -> None:
    expected = _reference(vocab)
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    engine_cache.save()
    engine_cache.clear()
    (path,) = cache_dir.glob("*.gkcache")
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert _walk(_reloaded(vocab, match)) == expected
    assert engine_cache.save() == 1  # the good tables replace the bad file
    engine_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)._engine.classifier \
            .num_classified > 0


def test_foreign_file_is_ignored(vocab: Vocabulary, cache_dir: Path) -> None:
    """Another grammar's file under this grammar's name is refused by its key."""
    expected = _reference(vocab)
    _walk(TokenMatcher(Grammar.from_ebnf('root ::= "a" [0-9]+'), vocab))
    engine_cache.save()
    engine_cache.clear()
    (foreign,) = cache_dir.glob("*.gkcache")
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    engine_cache.save()
    engine_cache.clear()
    (mine,) = set(cache_dir.glob("*.gkcache")) - {foreign}
    mine.write_bytes(foreign.read_bytes())
    assert _walk(_reloaded(vocab, "another grammar or vocabulary")) == expected


@pytest.mark.parametrize("tamper, match", [
    (lambda a: a.update(group_of=np.arange(5, dtype=np.int32)), "partition"),
    (lambda a: a.update(byte_classes=a["byte_classes"][::-1].copy()), "byte classes"),
    (lambda a: a.update(accepted=a["accepted"].astype(np.int64)), "accepted"),
    (lambda a: a.update(accepted=a["accepted"] | -1), "outside the vocabulary"),
    (lambda a: a.update(uncertain=a["uncertain"] + 10**6), "uncertain"),
    (lambda a: a.update(config_states=a["config_states"] + 10**6), "config_states"),
    (lambda a: a.update(config_states_offsets=a["config_states_offsets"][:-1]), "offsets"),
    (lambda a: a.update(follow_bytes=a["follow_bytes"][:0]), "follow"),
    (lambda a: a.pop("accepted"), "accepted"),
])
def test_well_formed_but_inconsistent_tables_are_refused(vocab: Vocabulary, cache_dir: Path,
                                                        tamper: object, match: str) -> None:
    """A file with a valid checksum is still checked against the grammar and vocabulary."""
    expected = _reference(vocab)
    matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    _walk(matcher)
    entry = next(iter(engine_cache._ENTRIES.values()))
    arrays = engine_cache._tables_of(matcher._engine)
    assert len(arrays["follow_bytes"]) and len(arrays["uncertain"])  # every tamper shows
    tamper(arrays)  # type: ignore[operator]
    assert entry.disk is not None and entry.disk.store(entry.disk_key, arrays)
    engine_cache.clear()
    assert _walk(_reloaded(vocab, match)) == expected


def test_unwritable_directory_warns_and_results_stay_correct(vocab: Vocabulary, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(engine_cache.CACHE_DIR_VARIABLE, str(blocker / "cache"))
    expected = _reference(vocab)
    with pytest.warns(CacheWarning, match="cannot read"):
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    assert _walk(matcher) == expected
    with pytest.warns(CacheWarning, match="cannot write"):
        assert engine_cache.save() == 0
    assert blocker.read_text() == "not a directory"


def test_full_disk_leaves_no_partial_file(vocab: Vocabulary, cache_dir: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(disk_cache.os, "fsync", no_space)
    with pytest.warns(CacheWarning, match="No space left"):
        assert engine_cache.save() == 0
    assert list(cache_dir.iterdir()) == []  # the temporary file is gone too


def test_directory_size_is_bounded(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path, max_bytes=3000)
    for i in range(6):
        assert cache.store(f"key-{i}", {"data": np.full(200, i, dtype=np.int32)})
    kept = sorted(tmp_path.glob("*.gkcache"))
    assert 0 < len(kept) < 6 and sum(p.stat().st_size for p in kept) <= 3000
    assert cache.load("key-5") is not None  # the newest is kept


WRITER = """
import sys
import numpy as np
from grammarkit.decode.disk_cache import DiskCache
cache = DiskCache(sys.argv[1])
value = int(sys.argv[2])
for _ in range(60):
    assert cache.store("shared", {"data": np.full(50_000, value, dtype=np.int32)})
"""


def test_concurrent_writers_never_expose_a_partial_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(v)])
               for v in (1, 2)]
    cache = DiskCache(tmp_path)
    seen: set[int] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn read would warn
        while any(w.poll() is None for w in writers):
            found = cache.load("shared")
            if found is not None:
                values = np.unique(found["data"])
                assert len(values) == 1 and len(found["data"]) == 50_000
                seen.add(int(values[0]))
    assert [w.returncode for w in writers] == [0, 0]
    assert seen and seen <= {1, 2}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []


RUN = f"""
from grammarkit import Grammar
from grammarkit.decode import TokenMatcher
from grammarkit.vocab import Vocabulary
vocab = Vocabulary({TOKENS!r}, stop_ids=[{STOP}])
matcher = TokenMatcher(Grammar.from_ebnf({ARITHMETIC!r}), vocab)
print(matcher._engine.classifier.num_classified)
for text in ["1", "+", "(", "12", ")"]:
    matcher.accept_string(text)
    matcher.allowed_token_ids()
"""


def test_a_second_process_starts_from_what_the_first_stored_at_exit(cache_dir: Path) -> None:
    import subprocess
    import sys

    def run() -> int:
        done = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", RUN],
                              capture_output=True, text=True, check=True, env=os.environ)
        return int(done.stdout)

    assert run() == 0
    assert len(list(cache_dir.glob("*.gkcache"))) == 1
    assert run() > 0
