"""The ``xgrammar`` backend: xgrammar 0.2.8's `GrammarMatcher` masks the model's logits."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from grammarkit.ebnf import ast
from grammarkit.generate.errors import require
from grammarkit.generate.lm import LanguageModel
from grammarkit.generate.local import LocalBackend

if TYPE_CHECKING:
    from grammarkit.grammar import Grammar
    from grammarkit.vocab import Vocabulary


class XGrammarSession:
    """An ``xgrammar.GrammarMatcher`` as a decoding session."""

    def __init__(self, compiled: Any, stop_token_ids: Sequence[int]):
        import xgrammar as xgr

        self.matcher = xgr.GrammarMatcher(compiled, override_stop_tokens=list(stop_token_ids))

    def fill_next_token_bitmask(self, bitmask: npt.NDArray[np.int32]) -> None:
        import torch

        words = torch.from_numpy(bitmask)
        self.matcher.fill_next_token_bitmask(words)

    def accept_token(self, token_id: int) -> bool:
        return bool(self.matcher.accept_token(token_id))

    def forced_bytes(self) -> bytes:
        return self.matcher.find_jump_forward_string().encode("utf-8", "surrogateescape")


class XGrammarBackend(LocalBackend):
    """Generation in this process with xgrammar 0.2.8's `GrammarMatcher` (extra ``xgrammar``).

    xgrammar is given the vocabulary as raw bytes. Where it would let the vocabulary's special
    tokens into text (it does not detect them in tiktoken files), they are forbidden, as the
    native backend forbids them, unless the grammar names tokens itself (``Token(...)``).

    Raises
    ------
    MissingExtraError
        GK351 when xgrammar or torch is not installed.
    """

    name = "xgrammar"

    def __init__(self, lm: LanguageModel | None = None, vocab: Vocabulary | None = None):
        require("xgrammar", "xgrammar", "the xgrammar backend")
        require("torch", "xgrammar", "the xgrammar backend")
        super().__init__(lm, vocab)
        self.compiler = _compiler(self.vocab)
        specials = sorted(self.vocab.special_ids - self.vocab.stop_ids)
        self._specials = np.array(specials, dtype=np.int64)

    def session(self, grammar: Grammar, stop_token_ids: Sequence[int]) -> XGrammarSession:
        import xgrammar as xgr

        compiled = self.compiler.compile_grammar(
            xgr.Grammar.from_ebnf(grammar.to_ebnf(), root_rule_name=grammar.root))
        return XGrammarSession(compiled, stop_token_ids)

    def blocked_ids(self, grammar: Grammar) -> npt.NDArray[np.int64] | None:
        names_tokens = any(isinstance(node, (ast.TokenSet, ast.TokenTagDispatch))
                           for rule in grammar.ast.rules for node in ast.walk(rule.body))
        return None if names_tokens else self._specials


@lru_cache(maxsize=4)
def _compiler(vocab: Vocabulary) -> Any:
    """An xgrammar compiler (with its grammar cache) for ``vocab``, shared by backends."""
    import xgrammar as xgr

    info = xgr.TokenizerInfo(list(vocab.tokens), xgr.VocabType.RAW, vocab_size=vocab.vocab_size,
                             stop_token_ids=sorted(vocab.stop_ids))
    return xgr.GrammarCompiler(info)
