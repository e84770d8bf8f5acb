"""The native token-mask decoder: `TokenMatcher`, `BatchTokenMatcher` and xgrammar-layout
bitmask helpers."""

from grammarkit.decode.batch import BatchTokenMatcher
from grammarkit.decode.bitmask import allocate_token_bitmask, apply_token_bitmask
from grammarkit.decode.matcher import TokenMatcher

__all__ = ["BatchTokenMatcher", "TokenMatcher", "allocate_token_bitmask", "apply_token_bitmask"]
