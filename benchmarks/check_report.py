"""How long `grammarkit check` takes: the largest grammar in grammars/ and a 100-rule grammar on
the 248k Qwen3.6 vocabulary (target: under 10 s each, tokenizer loading included).

xgrammar has no counterpart to the report; beside it the script prints xgrammar's own cost of
the step every check starts from (compiling the grammar for the vocabulary), for scale.

    python benchmarks/check_report.py
"""

from __future__ import annotations

import time
from pathlib import Path

import grammarkit as gk
from grammarkit.check import check
from grammarkit.check.tokenizers import load_tokenizer

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 10.0


def hundred_rules() -> str:
    """A JSON-like record grammar of 100 rules: 96 fields, each its own rule."""
    fields = [f'field{i} ::= "\\"f{i}\\": " value{i % 3}' for i in range(96)]
    body = ' "," ws '.join(f"field{i}" for i in range(96))
    return "\n".join([
        f'root ::= "{{" ws {body} ws "}}"', *fields,
        'value0 ::= "\\"" [a-z ]{0,16} "\\""', 'value1 ::= "-"? [0-9]{1,6}',
        'value2 ::= "true" | "false"', "ws ::= [ \\n]{0,4}",
    ])


def xgrammar_compile_seconds(text: str, vocab: gk.Vocabulary) -> float | None:
    try:
        import xgrammar
    except ImportError:
        return None
    info = xgrammar.TokenizerInfo(
        [t.decode("latin-1") for t in vocab.tokens], vocab_type=xgrammar.VocabType.RAW,
        stop_token_ids=sorted(vocab.stop_ids))
    start = time.perf_counter()
    xgrammar.GrammarCompiler(info, max_threads=2).compile_grammar(text)
    return time.perf_counter() - start


def main() -> None:
    start = time.perf_counter()
    loaded = load_tokenizer("qwen3.6")
    load_seconds = time.perf_counter() - start
    largest = max((ROOT / "grammars").glob("*.ebnf"), key=lambda p: p.stat().st_size)
    cases = [(largest.name, largest.read_text("utf-8")), ("100 rules", hundred_rules())]
    print(f"Qwen3.6 ({loaded.vocab.vocab_size} ids) loaded with its encoder in "
          f"{load_seconds:.2f} s")
    print(f"{'grammar':<18} {'check (s)':>9} {'+ load':>7} {'findings':>8}  "
          f"{'xgr compile (s)':>15}  target  slowest checks")
    for name, text in cases:
        start = time.perf_counter()
        report = check(gk.Grammar.from_ebnf(text), loaded.vocab, encoder=loaded.encoder)
        seconds = time.perf_counter() - start
        xgr = xgrammar_compile_seconds(text, loaded.vocab)
        total = seconds + load_seconds
        slowest = sorted(report.seconds.items(), key=lambda kv: -kv[1])[:3]
        print(f"{name:<18} {seconds:>9.2f} {total:>7.2f} {len(report.diagnostics):>8}  "
              f"{'-' if xgr is None else f'{xgr:.3f}':>15}  "
              f"{'PASS' if total < TARGET_SECONDS else 'MISS':>6}  "
              + ", ".join(f"{k} {v:.2f}" for k, v in slowest))


if __name__ == "__main__":
    main()
