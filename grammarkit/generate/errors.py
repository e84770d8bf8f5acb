"""`GenerationError`: a request that cannot run, as a diagnostic (codes GK350-GK369)."""

from __future__ import annotations

from grammarkit.diagnostics import Diagnostic, error


class GenerationError(ValueError):
    """A generation request that cannot run: unknown backend, bad prompt, mismatched model, ...

    ``diagnostic`` holds the code, message and hint (see docs/diagnostics.md, GK350-GK369).
    """

    def __init__(self, code: str, message: str, hint: str | None = None):
        self.diagnostic: Diagnostic = error(code, message, None, hint)
        super().__init__(f"{code} {message}" + (f" ({hint})" if hint else ""))

    def __reduce__(self) -> tuple[type, tuple[str, str, str | None]]:
        d = self.diagnostic
        return type(self), (d.code, d.message, d.hint)


class MissingExtraError(GenerationError, ImportError):
    """An optional dependency is not installed; the message names the ``pip install``."""

    def __init__(self, what: str, extra: str, module: str):
        super().__init__("GK351", f"{what} needs the `{module}` package, which is not installed",
                         f"pip install 'grammarkit[{extra}]'")
        self.what = what
        self.extra = extra
        self.module = module

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.what, self.extra, self.module)


def require(module: str, extra: str, what: str) -> None:
    """Import ``module`` or raise :class:`MissingExtraError` naming ``extra``."""
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(what, extra, module) from None
