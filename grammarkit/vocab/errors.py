"""The one exception type of the vocabulary layer."""

from __future__ import annotations


class VocabularyError(ValueError):
    """A tokenizer file, object or model could not be turned into a `Vocabulary`.

    The message names the file (or object, or model) and says why.
    """
