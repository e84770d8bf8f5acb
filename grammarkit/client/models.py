"""The provider's models and whether each is served through ``/v1/completions``
(``models.json``, shipped with the package)."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def known_models() -> dict[str, bool]:
    """Model name -> whether the provider serves it through ``/v1/completions``."""
    text = resources.files("grammarkit.client").joinpath("models.json").read_text("utf-8")
    return {name: bool(info["completions"]) for name, info in json.loads(text)["models"].items()}


def supports_completions(model: str) -> bool | None:
    """``False`` for a model the provider serves chat-only, ``True`` for one it serves through
    completions, ``None`` for a model it does not list."""
    return known_models().get(model)


def chat_only_hint(model: str) -> str:
    """What to do instead of ``/v1/completions`` for a chat-only model."""
    return (f"{model} is served chat-only: use chat_completions(model={model!r}, messages=..., "
            'response_format={"type": "json_object"}) instead of completions')
