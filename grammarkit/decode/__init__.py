"""The native token-mask decoder: `TokenMatcher` and xgrammar-layout bitmask helpers."""

from grammarkit.decode.bitmask import allocate_token_bitmask, apply_token_bitmask
from grammarkit.decode.matcher import TokenMatcher

__all__ = ["TokenMatcher", "allocate_token_bitmask", "apply_token_bitmask"]
