"""The `Backend` protocol and the registry that finds backends by name.

Built in: ``native`` (grammarkit's `TokenMatcher`), ``xgrammar`` (xgrammar 0.2.8) and
``remote`` (an SGLang-compatible server, :mod:`grammarkit.generate.remote`). Other packages add
backends through the entry-point group ``grammarkit.backends``: each entry point names a
callable (usually a class) taking the backend options as keywords.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

from grammarkit.generate.completion import Chunk, Completion
from grammarkit.generate.constraint import Constraint
from grammarkit.generate.errors import GenerationError
from grammarkit.generate.params import SamplingParams

ENTRY_POINT_GROUP = "grammarkit.backends"

BUILT_IN = {
    "native": ("grammarkit.generate.native", "NativeBackend"),
    "xgrammar": ("grammarkit.generate.xgrammar_backend", "XGrammarBackend"),
    "remote": ("grammarkit.generate.remote", "RemoteBackend"),
}
"""Built-in backend name -> (module, class), imported only when asked for."""


@runtime_checkable
class Backend(Protocol):
    """Generates completions of a prompt under a constraint.

    ``prompt`` is token ids, or text that the backend tokenizes (or sends as is).
    """

    name: str

    def generate(self, constraint: Constraint, prompt: Sequence[int] | str,
                 params: SamplingParams) -> Completion:
        """The whole completion."""

    def stream(self, constraint: Constraint, prompt: Sequence[int] | str,
               params: SamplingParams) -> Iterator[Chunk]:
        """The completion piece by piece; each choice's last chunk has its finish reason."""


def backend_names() -> list[str]:
    """Every known backend name: built in, then registered through entry points."""
    extra = sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)
                   if ep.name not in BUILT_IN)
    return [*BUILT_IN, *extra]


def get_backend(name_or_instance: str | Backend, **options: Any) -> Backend:
    """A backend by name (built with ``options``), or ``name_or_instance`` itself.

    Parameters
    ----------
    name_or_instance
        ``"native"``, ``"xgrammar"``, ``"remote"``, a name registered in the entry-point group
        ``grammarkit.backends``, or an object with ``generate`` and ``stream``.
    options
        Keywords for the backend: ``lm`` and ``vocab`` for the local backends, the server's
        address and model for ``remote``.

    Raises
    ------
    GenerationError
        GK350 for an unknown name (the known ones are listed).
    MissingExtraError
        GK351 when the backend needs an extra that is not installed.
    """
    if not isinstance(name_or_instance, str):
        if isinstance(name_or_instance, Backend):
            return name_or_instance
        raise TypeError(f"a backend is a name or an object with generate() and stream(), "
                        f"not {type(name_or_instance).__name__}")
    return _factory(name_or_instance)(**options)


def _factory(name: str) -> Callable[..., Backend]:
    if name in BUILT_IN:
        module_name, class_name = BUILT_IN[name]
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            raise GenerationError(
                "GK350", f"the `{name}` backend is not part of this installation "
                f"({module_name} is missing)", "upgrade grammarkit") from None
        factory: Callable[..., Backend] = getattr(module, class_name)
        return factory
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            loaded: Callable[..., Backend] = ep.load()
            return loaded
    raise GenerationError("GK350", f"unknown backend `{name}`",
                          f"known backends: {', '.join(backend_names())}")
