"""Enum values as real schemas hold them, for the scale benchmarks and tests (issue 7)."""

from __future__ import annotations

import random
import string


def real_looking_words(count: int) -> list[str]:
    """Words as real enums hold them (issue 7): lowercase of 3-12 letters, some capitalized,
    with digits, ``-`` or ``_``, non-ASCII letters and an emoji, quotes, backslashes, slashes
    and tabs."""
    generator = random.Random(11)
    extra = ["é", "ü", "ß", "ñ", "ø", "日", "本", "😀", "Ω"]
    words: set[str] = set()
    while len(words) < count:
        word = [generator.choice(string.ascii_lowercase)
                for _ in range(generator.randint(3, 12))]
        kind = generator.random()
        if kind < 0.15:
            word[0] = word[0].upper()
        elif kind < 0.25:
            word.append(str(generator.randint(0, 99)))
        elif kind < 0.32:
            word.insert(generator.randint(1, len(word) - 1), generator.choice("-_"))
        elif kind < 0.37:
            word.insert(generator.randint(0, len(word)), generator.choice(extra))
        elif kind < 0.39:
            word.insert(generator.randint(0, len(word)), generator.choice(['"', "\\", "/", "\t"]))
        words.add("".join(word))
    return sorted(words)
