"""Vocabularies: token id -> exact bytes, special and stop tokens, and their loaders."""

from grammarkit.vocab.arrays import VocabArrays
from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.vocabulary import Vocabulary

__all__ = ["VocabArrays", "Vocabulary", "VocabularyError"]
