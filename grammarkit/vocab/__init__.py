"""Vocabularies: token id -> exact bytes, special and stop tokens, and their loaders."""

from grammarkit.vocab.arrays import VocabArrays
from grammarkit.vocab.errors import VocabularyError
from grammarkit.vocab.raw import MAX_TOKEN_ID
from grammarkit.vocab.vocabulary import Vocabulary

__all__ = ["MAX_TOKEN_ID", "VocabArrays", "Vocabulary", "VocabularyError"]
