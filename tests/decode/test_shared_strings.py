"""Properties sharing one bounded string rule share its token classes: once a string value is
decoded, the same characters in every other property's value classify no context again
(before, each property's copy of ``json-char{0,12}`` was classified on its own)."""

from __future__ import annotations

import numpy as np

from grammarkit import Grammar
from grammarkit.decode import TokenMatcher, allocate_token_bitmask, engine_cache
from grammarkit.vocab import Vocabulary

FIELDS = 4


def test_a_second_string_value_classifies_nothing_new(qwen36: Vocabulary) -> None:
    wide = {f"f{i}": {"type": "string", "maxLength": 12} for i in range(FIELDS)}
    grammar = Grammar.from_json_schema({"type": "object", "properties": wide,
                                        "required": list(wide),
                                        "additionalProperties": False}, whitespace="compact")
    ids = {token: i for i, token in enumerate(qwen36.tokens)}
    engine_cache.clear()
    matcher = TokenMatcher(grammar, qwen36)
    classifier = matcher._engine.classifier
    mask = allocate_token_bitmask(1, len(qwen36))

    def decode(text: str) -> int:
        """Accept ``text`` byte by byte, filling each mask; the contexts classified."""
        before = classifier.num_computed
        for byte in text.encode():
            matcher.fill_next_token_bitmask(mask)
            token = ids[bytes([byte])]
            assert (mask[0, token // 32] >> (token % 32)) & 1
            assert matcher.accept_token(token)
        return classifier.num_computed - before

    value = "hello"
    decode('{"f0":"')
    assert decode(value) > 0  # the string rule's states
    decode('","f1":"')
    decode(value)  # a few masks of f0's were computed without classes (likely-state survey)
    for i in range(2, FIELDS):
        decode(f'","f{i}":"')
        assert decode(value) == 0, f"f{i}'s value classified its own contexts"
    decode('"}')
    assert matcher.is_completed()
    matcher.fill_next_token_bitmask(mask)
    assert not np.any(mask[0] & ~_stop_words(qwen36, mask.shape[1]))
    engine_cache.clear()


def _stop_words(vocab: Vocabulary, width: int) -> np.ndarray:
    words = np.zeros(width, dtype=np.int32)
    for token in vocab.stop_ids:
        words[token // 32] |= np.int32(np.uint32(1 << (token % 32)).view(np.int32))
    return words
