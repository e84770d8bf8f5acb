"""What a loader read from a tokenizer, before special and stop tokens are decided."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_TOKEN_ID = 1 << 20
"""Token ids must be below this (1,048,576), four times the largest real vocabularies (~262k).

A vocabulary is dense (one entry per id), so a file naming id ``n`` costs memory and time for
``n`` ids however few tokens it lists: at this limit about 3 s and 200 MB. Higher ids are
refused as corrupt.
"""


@dataclass
class RawVocab:
    """Token bytes by id plus the hints a tokenizer source gives about control tokens.

    Attributes
    ----------
    tokens : list of bytes
        Exact bytes by id; ``b""`` where the source has no token for an id.
    source : str
        Where the tokens came from (a path, a model name, an object's type), for messages.
    flagged_ids : set of int
        Ids the source itself marks special (``"special": true``, tiktoken special tokens).
    added_ids : set of int
        Out-of-band ids (added tokens, tiktoken specials): their text is checked against the
        control-token name rules, which are too broad to apply to ordinary vocabulary entries.
    eos_ids : set of int
        End-of-sequence ids declared by the source's metadata.
    """

    tokens: list[bytes]
    source: str
    flagged_ids: set[int] = field(default_factory=set)
    added_ids: set[int] = field(default_factory=set)
    eos_ids: set[int] = field(default_factory=set)

    def add_token(self, token_id: int, token: bytes) -> None:
        """Put ``token`` at ``token_id``, growing the list with empty holes as needed."""
        if token_id >= len(self.tokens):
            self.tokens.extend([b""] * (token_id + 1 - len(self.tokens)))
        self.tokens[token_id] = token
