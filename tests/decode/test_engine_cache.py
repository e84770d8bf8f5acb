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
from grammarkit.decode import TokenMatcher, disk_cache, engine_cache, mask_engine
from grammarkit.decode.disk_cache import CacheWarning, DiskCache
from grammarkit.diagnostics import GrammarError
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
    monkeypatch.setattr(mask_engine, "SURVEY_STATES", 0)  # classes too, not only masks
    monkeypatch.setattr(engine_cache, "START_FROM_DISK_SECONDS", float("inf"))  # one file
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


def test_digests_are_only_computed_against_cached_grammars_of_the_same_shape(
        vocab: Vocabulary, monkeypatch: pytest.MonkeyPatch) -> None:
    printed: list[str] = []
    from grammarkit.ebnf import printer

    original = printer.print_rule
    monkeypatch.setattr(printer, "print_rule", lambda rule: printed.append(rule.name)
                        or original(rule))
    first = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    two_rules = TokenMatcher(Grammar.from_ebnf('root ::= x\nx ::= "a"+'), vocab)
    other_root = TokenMatcher(Grammar.from_ebnf('start ::= x x\nx ::= "b"\ny ::= "c"',
                                                root="start"), vocab)
    assert not printed  # no cached grammar had the same root and number of rules
    same_shape = TokenMatcher(Grammar.from_ebnf('root ::= expr\nexpr ::= term\nterm ::= "1"'),
                              vocab)
    assert printed  # compared with the arithmetic grammar by digest: a different grammar
    respelled = TokenMatcher(Grammar.from_ebnf(ARITHMETIC.replace(" ", "  ")), vocab)
    assert respelled._engine is first._engine
    engines = {id(m._engine) for m in (first, two_rules, other_root, same_shape)}
    assert len(engines) == 4


def test_threads_asking_at_once_share_one_compilation(vocab: Vocabulary) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        matchers = list(pool.map(lambda _: TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab),
                                 range(8)))
    assert len({id(m._engine) for m in matchers}) == 1
    assert not engine_cache._BUILDING


def test_a_build_that_raises_leaves_nothing_behind(vocab: Vocabulary) -> None:
    # a recursive lazy rule cannot be flattened (GK121): compiling it raises in the build
    grammar = Grammar.from_ebnf('root ::= u ">"\nu[lazy] ::= "(" u ")" | "a"')
    for _ in range(2):  # the second build raises the same error
        with pytest.raises(GrammarError, match="GK121"):
            TokenMatcher(grammar, vocab)
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
    classified = first._engine.classifier.num_classified
    assert engine_cache.save() == 1
    assert engine_cache.save() == 0  # nothing new since
    assert len(list(cache_dir.glob("*.gkcache"))) == 1
    engine_cache.clear()  # a restarted process
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
        assert _walk(restored) == expected
    engine = restored._engine
    assert engine._computed == 1  # the (cheap) first mask; the others read back by route
    assert 0 < engine.classifier.num_classified <= classified  # those of routed states
    assert engine.partition.is_grouped
    assert np.array_equal(engine.partition.group_of, groups)
    restored.reset()
    assert _walk(restored, 40, seed=1) == _reference_walk(vocab, 40, 1)  # new states: classes


def test_tables_stored_by_other_code_are_not_read_back(vocab: Vocabulary, cache_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An edited checkout keeps its version number; the key holds its code's fingerprint."""
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    assert engine_cache.save() == 1
    engine_cache.clear()
    monkeypatch.setattr(engine_cache, "code_fingerprint", lambda _package: "edited")
    again = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    assert _walk(again) == _reference(vocab)
    assert again._engine._computed > 1  # nothing read back: every mask computed anew


def test_the_code_fingerprint_follows_the_compiler_and_decoder_sources(tmp_path: Path) -> None:
    def package(name: str, decoder: str) -> Path:
        root = tmp_path / name
        for folder, text in (("automata", "A = 1\n"), ("decode", decoder), ("cli", name)):
            (root / folder).mkdir(parents=True)
            (root / folder / "module.py").write_text(text)
        return root

    original = engine_cache.code_fingerprint(package("original", "B = 2\n"))
    assert engine_cache.code_fingerprint(package("same", "B = 2\n")) == original  # cli aside
    assert engine_cache.code_fingerprint(package("edited", "B = 3\n")) != original


def test_a_cheap_first_mask_is_computed_and_the_rest_read_at_the_second_state(
        vocab: Vocabulary, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _reference(vocab)
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    engine_cache.save()
    engine_cache.clear()
    matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    engine = matcher._engine
    matcher.allowed_token_ids()
    assert engine._computed == 1 and engine.classifier.num_classified > 0  # computed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _walk(matcher) == expected
    assert engine._computed == 1  # every later mask read back


def test_a_slow_first_mask_is_read_from_a_file_of_its_own(
        vocab: Vocabulary, cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine_cache, "START_FROM_DISK_SECONDS", -1.0)
    expected = _reference(vocab)
    _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))
    engine_cache.save()
    engine_cache.clear()
    start, _ = sorted(cache_dir.glob("*.gkcache"), key=lambda p: p.stat().st_size)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
        assert _walk(matcher) == expected
    assert matcher._engine._computed == 0  # the first mask too
    engine_cache.clear()
    start.write_bytes(_flip_inside("start_mask")(start.read_bytes()))  # type: ignore[operator]
    with pytest.warns(CacheWarning, match="array start_mask"):
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    assert _walk(matcher) == expected
    assert matcher._engine._computed == 1  # the first mask computed, the others read


def _reference_walk(vocab: Vocabulary, steps: int, seed: int) -> list[list[int]]:
    saved = os.environ.pop(engine_cache.CACHE_DIR_VARIABLE, None)
    entries = dict(engine_cache._ENTRIES)
    engine_cache.clear()
    try:
        return _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab), steps, seed)
    finally:
        engine_cache.clear()
        engine_cache._ENTRIES.update(entries)
        if saved is not None:
            os.environ[engine_cache.CACHE_DIR_VARIABLE] = saved


def test_masks_of_surveyed_grammars_are_stored(vocab: Vocabulary, cache_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mask_engine, "SURVEY_STATES", 256)
    text = 'root ::= ("a" | "b") [0-9] ("+" | "ab")'
    expected = _reference(vocab, text)
    first = TokenMatcher(Grammar.from_ebnf(text), vocab)
    assert _walk(first) == expected
    assert first._engine.surveyed
    engine_cache.save()
    engine_cache.clear()
    restored = TokenMatcher(Grammar.from_ebnf(text), vocab)
    assert _walk(restored, seed=3) == _walk(TokenMatcher(Grammar.from_ebnf(text), vocab), seed=3)
    assert restored._engine.surveyed and restored._engine._computed == 1  # the first only


def _reloaded_walk(vocab: Vocabulary, match: str) -> list[list[int]]:
    """The masks of a matcher built while the cache file is bad: a warning (when building
    or at its first new state), and the masks of a fresh engine."""
    def built_and_walked() -> tuple[TokenMatcher, list[list[int]]]:
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
        return matcher, _walk(matcher)

    with pytest.warns(CacheWarning, match=match):
        matcher, masks = built_and_walked()
    assert matcher._engine.classifier.num_classified > 0  # computed, not read
    return masks


def _flip_inside(name: str) -> object:
    """Flip one byte inside the stored array ``name`` (its checksum then fails)."""
    def damage(data: bytes) -> bytes:
        member = data.index(f"{name}.npy".encode(), data.index(b"PK"))
        at = data.index(b"PK", member) - 1  # the last byte of its (stored) data
        return data[:at] + bytes([data[at] ^ 0x55]) + data[at + 1:]
    return damage


@pytest.mark.parametrize("damage, match", [
    (lambda data: data[: len(data) // 2], "truncated"),
    (lambda data: data[:-40] + bytes(b ^ 0xFF for b in data[-40:]), "ignoring cache file"),
    (_flip_inside("masks"), "array masks"),
    (lambda data: b"garbage" + data, "not a grammarkit cache file"),
    (lambda data: data[:20], "truncated"),
    (lambda data: data + b"more", "trailing bytes"),
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
    assert _reloaded_walk(vocab, match) == expected
    assert engine_cache.save() == 1  # the good tables replace the bad file
    engine_cache.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
        assert _walk(matcher) == expected
        assert matcher._engine._computed == 1  # the first mask only


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
    assert _reloaded_walk(vocab, "another grammar or vocabulary") == expected


def _offsets(name: str) -> object:
    return lambda a: a.update({f"{name}_offsets": a[f"{name}_offsets"][:-1]})


@pytest.mark.parametrize("tamper, match", [
    (lambda a: a.update(group_of=np.arange(5, dtype=np.int32)), "partition"),
    (lambda a: a.update(byte_classes=a["byte_classes"][::-1].copy()), "byte classes"),
    (lambda a: a.update(accepted=a["accepted"].astype(np.int64)), "accepted"),
    (lambda a: a.update(accepted=a["accepted"] | -1), "outside the vocabulary"),
    (lambda a: a.update(masks=a["masks"][:, :-1].copy()), "masks"),
    (lambda a: a.update(uncertain=a["uncertain"] + 10**6), "uncertain"),
    (lambda a: a.update(route_parent=a["route_parent"] + 10**6), "route parents"),
    (lambda a: a.update(route_bytes=np.full_like(a["route_bytes"], ord("x"))), "rejected"),
    (_offsets("route_bytes"), "offsets"),
    (lambda a: a.update(class_group=a["class_group"] + 10**6), "class groups"),
    (lambda a: a.update(mask_node=a["mask_node"] - 10**6), "node numbers"),
    (lambda a: a.pop("masks"), "masks"),
])
def test_well_formed_but_inconsistent_tables_are_refused(vocab: Vocabulary, cache_dir: Path,
                                                        tamper: object, match: str) -> None:
    """A file whose checksums hold is still checked against the grammar and vocabulary."""
    expected = _reference(vocab)
    matcher = TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab)
    _walk(matcher)
    entry = next(iter(engine_cache._ENTRIES.values()))
    arrays = engine_cache._tables_of(matcher._engine)
    assert len(arrays["uncertain"]) and len(arrays["route_bytes"])  # every tamper shows
    tamper(arrays)  # type: ignore[operator]
    assert entry.disk is not None and entry.disk.store(entry.disk_key, arrays)
    engine_cache.clear()
    assert _reloaded_walk(vocab, match) == expected


def test_unwritable_directory_warns_and_results_stay_correct(vocab: Vocabulary, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(engine_cache.CACHE_DIR_VARIABLE, str(blocker / "cache"))
    expected = _reference(vocab)
    def built_and_walked() -> list[list[int]]:
        return _walk(TokenMatcher(Grammar.from_ebnf(ARITHMETIC), vocab))

    with pytest.warns(CacheWarning, match="cannot read"):
        assert built_and_walked() == expected
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
for text in ["1", "+", "(", "12", ")", "+", "(", "(", "1", ")", ")"]:
    matcher.allowed_token_ids()
    assert matcher.accept_string(text)
print(matcher._engine._computed)
"""


def test_a_second_process_starts_from_what_the_first_stored_at_exit(cache_dir: Path) -> None:
    import subprocess
    import sys

    def run() -> int:
        done = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", RUN],
                              capture_output=True, text=True, check=True, env=os.environ)
        return int(done.stdout)

    assert run() > 0
    assert list(cache_dir.glob("*.gkcache"))  # the tables (and maybe the first mask's file)
    assert run() <= 1  # the first mask at most (if cheaper to compute); the others read back


def test_two_processes_storing_one_grammar_at_once(cache_dir: Path) -> None:
    import subprocess
    import sys

    runs = [subprocess.Popen([sys.executable, "-W", "error::UserWarning", "-c", RUN],
                             stdout=subprocess.PIPE, env=os.environ) for _ in range(2)]
    assert [run.wait() for run in runs] == [0, 0]
    for run in runs:
        assert run.stdout is not None
        run.stdout.close()
    files = [path.name for path in cache_dir.iterdir()]
    assert files and not [name for name in files if name.startswith(".tmp-")]
    done = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", RUN],
                          capture_output=True, text=True, check=True, env=os.environ)
    assert int(done.stdout) <= 1
