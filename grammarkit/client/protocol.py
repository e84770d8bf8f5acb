"""The ``/v1/completions`` request as SGLang serves it: field names, defaults and the rules a
request must follow, shared by the client (which checks before sending) and the local server.

Pure Python, no HTTP library: both :mod:`grammarkit.client` and :mod:`grammarkit.server` import it.
Every problem is a :class:`~grammarkit.diagnostics.Diagnostic` whose ``pointer`` is the JSON
pointer of the offending field (``/prompt/2``), so a refused request names where and why.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.source import SourceText

if TYPE_CHECKING:
    from grammarkit.grammar import Grammar

CONSTRAINT_FIELDS = ("ebnf", "regex", "json_schema")
"""SGLang's grammar fields; a request names at most one of them."""

MAX_STOP_STRINGS = 4

SAMPLING_DEFAULTS: dict[str, Any] = {
    "max_tokens": 16,
    "min_tokens": 0,
    "temperature": 1.0,
    "top_p": 1.0,
    "top_k": -1,
    "min_p": 0.0,
    "frequency_penalty": 0.0,
    "presence_penalty": 0.0,
    "repetition_penalty": 1.0,
}
"""SGLang's defaults (``sglang/srt/entrypoints/openai/protocol.py``, ``CompletionRequest``)."""

OPENAI_FIELDS = (
    "model", "prompt", "best_of", "echo", "frequency_penalty", "logit_bias", "logprobs",
    "max_tokens", "n", "presence_penalty", "seed", "stop", "stream", "stream_options", "suffix",
    "temperature", "top_p", "user",
)
SGLANG_FIELDS = (
    "top_k", "min_p", "min_tokens", "repetition_penalty", "stop_token_ids", "skip_special_tokens",
    "response_format", *CONSTRAINT_FIELDS,
)
PASSTHROUGH_FIELDS = (
    "custom_params", "ignore_eos", "no_stop_trim", "spaces_between_special_tokens", "stop_regex",
    "structural_tag", "custom_logit_processor", "logprob_start_len", "lora_path", "priority",
    "return_hidden_states", "return_logprob", "return_routed_experts", "return_text_in_logprobs",
    "rid", "token_ids_logprob", "top_logprobs_num",
)
"""SGLang-specific fields the client sends as given (type-checked only)."""

REQUEST_FIELDS = frozenset(OPENAI_FIELDS + SGLANG_FIELDS + PASSTHROUGH_FIELDS)
"""Every field a completion request may carry; servers ignore others (SGLang does)."""

_BOOL_FIELDS = (
    "echo", "stream", "skip_special_tokens", "ignore_eos", "no_stop_trim",
    "spaces_between_special_tokens", "return_hidden_states", "return_logprob",
    "return_routed_experts", "return_text_in_logprobs",
)
_STRING_FIELDS = ("suffix", "user", "structural_tag", "custom_logit_processor")
_INT_FIELDS = ("seed", "logprob_start_len", "priority", "top_logprobs_num")


class RequestError(ValueError):
    """A request that breaks the protocol's rules; ``diagnostics`` says where (JSON pointers) and
    why. Raised by the client before sending, and turned into a 400 by the server."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__(describe(diagnostics))


def describe(diagnostics: Sequence[Diagnostic]) -> str:
    """The diagnostics as text: ``GK370 message (at /pointer)`` lines, with help lines, and the
    located snippet for grammar diagnostics that carry their source."""
    parts = []
    for d in diagnostics:
        if d.source is not None:
            parts.append(d.render())
            continue
        where = f" (at {d.pointer})" if d.pointer else ""
        text = f"{d.code} {d.message}{where}"
        if d.hint:
            text += f"\n  = help: {d.hint}"
        parts.append(text)
    return "\n".join(parts)


def problem(code: str, pointer: str, message: str, hint: str | None = None) -> Diagnostic:
    """An error about the request field at JSON ``pointer``."""
    return Diagnostic(code, Severity.ERROR, message, None, hint, None, pointer)


@dataclass(frozen=True)
class CompletionRequest:
    """A checked completion request, defaults filled in.

    Attributes
    ----------
    prompts
        Each prompt of the request: a tuple of token ids, or a string for text prompts.
    batched
        Whether ``prompt`` was a list of prompts (the response then has ``n`` choices each).
    constraint
        ``(field, text)`` for the ``ebnf``, ``regex`` or ``json_schema`` field, or ``None``.
    ignored
        Names of fields the protocol does not know; servers ignore them, as SGLang does.
    """

    model: str
    prompts: tuple[tuple[int, ...] | str, ...]
    batched: bool
    max_tokens: int = 16
    min_tokens: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    min_p: float = 0.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repetition_penalty: float = 1.0
    stop: tuple[str, ...] = ()
    stop_token_ids: tuple[int, ...] = ()
    logit_bias: Mapping[int, float] | None = None
    n: int = 1
    best_of: int | None = None
    echo: bool = False
    logprobs: int | None = None
    seed: int | None = None
    stream: bool = False
    include_usage: bool = False
    continuous_usage_stats: bool = False
    constraint: tuple[str, str] | None = None
    ignore_eos: bool = False
    skip_special_tokens: bool = True
    no_stop_trim: bool = False
    suffix: str | None = None
    user: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    ignored: tuple[str, ...] = ()


def check_request(body: Any, *, text_prompts: bool = False) -> CompletionRequest:
    """Check a decoded JSON request body against the protocol's rules.

    Parameters
    ----------
    body
        The decoded JSON body.
    text_prompts
        Whether the server takes text prompts (strings) as OpenAI-legacy servers do; SGLang's
        token-ID endpoints (and grammarkit's server) take token ids only.

    Raises
    ------
    RequestError
        With one diagnostic per problem found.
    """
    if not isinstance(body, Mapping):
        raise RequestError([problem("GK371", "", f"the request body must be a JSON object, "
                                    f"not {_json_type(body)}")])
    checker = _Checker(body)
    prompts, batched = checker.prompt(text_prompts)
    values = {name: checker.number(name, default) for name, default in SAMPLING_DEFAULTS.items()}
    request = CompletionRequest(
        model=checker.string("model", required=False) or "default",
        prompts=prompts,
        batched=batched,
        **values,
        stop=checker.stop(),
        stop_token_ids=tuple(checker.token_ids("stop_token_ids") or ()),
        logit_bias=checker.logit_bias(),
        n=checker.integer("n", 1, minimum=1),
        best_of=checker.optional_int("best_of", minimum=1),
        echo=checker.flag("echo", False),
        logprobs=checker.optional_int("logprobs", minimum=0),
        seed=checker.optional_int("seed"),
        stream=checker.flag("stream", False),
        include_usage=checker.stream_option("include_usage"),
        continuous_usage_stats=checker.stream_option("continuous_usage_stats"),
        constraint=checker.constraint(),
        ignore_eos=checker.flag("ignore_eos", False),
        skip_special_tokens=checker.flag("skip_special_tokens", True),
        no_stop_trim=checker.flag("no_stop_trim", False),
        suffix=checker.string("suffix"),
        user=checker.string("user"),
        extra={k: v for k, v in body.items() if k in PASSTHROUGH_FIELDS and v is not None},
        ignored=tuple(sorted(str(k) for k in body if k not in REQUEST_FIELDS)),
    )
    checker.passthrough()
    checker.relations(request)
    if checker.problems:
        raise RequestError(checker.problems)
    return request


class _Checker:
    """Collects the problems of one request body, field by field."""

    def __init__(self, body: Mapping[str, Any]):
        self.body = body
        self.problems: list[Diagnostic] = []

    def fail(self, code: str, pointer: str, message: str, hint: str | None = None) -> None:
        self.problems.append(problem(code, pointer, message, hint))

    def _get(self, name: str) -> Any:
        return self.body.get(name)

    # -- prompt ----------------------------------------------------------------------------

    def prompt(self, text_prompts: bool) -> tuple[tuple[tuple[int, ...] | str, ...], bool]:
        if "prompt" not in self.body or self.body["prompt"] is None:
            self.fail("GK370", "/prompt", "the request has no prompt",
                      "send `prompt`: a list of token ids, or a list of such lists")
            return (), False
        prompt = self.body["prompt"]
        if isinstance(prompt, str):
            return (self._text(prompt, "/prompt", text_prompts),), False
        if not isinstance(prompt, list):
            self.fail("GK370", "/prompt", f"prompt must be a list of token ids, not "
                      f"{_json_type(prompt)}")
            return (), False
        if not prompt:
            self.fail("GK370", "/prompt", "prompt is empty", "give at least one token id")
            return (), False
        if all(isinstance(p, list) for p in prompt):
            return tuple(self._ids(p, f"/prompt/{i}") for i, p in enumerate(prompt)), True
        if all(isinstance(p, str) for p in prompt):
            return tuple(self._text(p, f"/prompt/{i}", text_prompts)
                         for i, p in enumerate(prompt)), True
        kinds = {_json_type(p) for p in prompt}
        if len(kinds) > 1 and kinds & {"a string", "an array"}:
            mixed = " and ".join(sorted(_PLURAL[k] for k in kinds))
            self.fail("GK370", "/prompt", f"prompt mixes {mixed}",
                      "send one prompt as a list of token ids, or a batch as a list of such lists")
            return (), False
        return (self._ids(prompt, "/prompt"),), False

    def _text(self, text: str, pointer: str, text_prompts: bool) -> str:
        if not text_prompts:
            self.fail("GK370", pointer, "this endpoint takes token ids, not text",
                      "tokenize the prompt with the model's tokenizer and send the ids")
        elif not text:
            self.fail("GK370", pointer, "prompt is empty")
        return text

    def _ids(self, ids: list[Any], pointer: str) -> tuple[int, ...]:
        if not ids:
            self.fail("GK370", pointer, "prompt is empty", "give at least one token id")
        for i, token in enumerate(ids):
            if not _is_int(token) or token < 0:
                shown = json.dumps(token) if _is_json_scalar(token) else _json_type(token)
                self.fail("GK370", f"{pointer}/{i}", f"token ids are non-negative integers, "
                          f"got {shown}")
                return ()
        return tuple(ids)

    # -- scalars ---------------------------------------------------------------------------

    def number(self, name: str, default: Any) -> Any:
        value = self._get(name)
        if value is None:
            return default
        integral = isinstance(default, int)
        if integral and not _is_int(value) or not integral and not _is_number(value):
            self.fail("GK371", f"/{name}", f"{name} must be {'an integer' if integral else 'a number'}"
                      f", not {_json_type(value)}")
            return default
        message = _RANGES[name](value)
        if message:
            self.fail("GK371", f"/{name}", f"{name} {message}, got {value}")
            return default
        return value if integral else float(value)

    def integer(self, name: str, default: int, *, minimum: int | None = None) -> int:
        value = self.optional_int(name, minimum=minimum)
        return default if value is None else value

    def optional_int(self, name: str, *, minimum: int | None = None) -> int | None:
        value = self._get(name)
        if value is None:
            return None
        if not _is_int(value):
            self.fail("GK371", f"/{name}", f"{name} must be an integer, not {_json_type(value)}")
            return None
        if minimum is not None and value < minimum:
            self.fail("GK371", f"/{name}", f"{name} must be at least {minimum}, got {value}")
            return None
        return int(value)

    def flag(self, name: str, default: bool) -> bool:
        value = self._get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.fail("GK371", f"/{name}", f"{name} must be true or false, not {_json_type(value)}")
            return default
        return value

    def string(self, name: str, *, required: bool = False) -> str | None:
        value = self._get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            self.fail("GK371", f"/{name}", f"{name} must be a string, not {_json_type(value)}")
            return None
        return value

    # -- structured fields -----------------------------------------------------------------

    def stop(self) -> tuple[str, ...]:
        value = self._get("stop")
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,) if value else ()
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            self.fail("GK371", "/stop", "stop must be a string or a list of strings")
            return ()
        if len(value) > MAX_STOP_STRINGS:
            self.fail("GK371", "/stop", f"stop takes up to {MAX_STOP_STRINGS} strings, got "
                      f"{len(value)}")
        return tuple(s for s in value if s)

    def token_ids(self, name: str) -> list[int] | None:
        value = self._get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(_is_int(t) and t >= 0 for t in value):
            self.fail("GK371", f"/{name}", f"{name} must be a list of non-negative token ids")
            return None
        return value

    def logit_bias(self) -> dict[int, float] | None:
        value = self._get("logit_bias")
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.fail("GK371", "/logit_bias", "logit_bias must be an object mapping token ids "
                      f"to numbers, not {_json_type(value)}")
            return None
        bias: dict[int, float] = {}
        for key, amount in value.items():
            token = _token_key(key)
            if token is None:
                self.fail("GK371", f"/logit_bias/{key}", f"logit_bias key {key!r} is not a "
                          "token id")
            elif not _is_number(amount) or not -100 <= amount <= 100:
                self.fail("GK371", f"/logit_bias/{key}", "logit_bias values are numbers from "
                          f"-100 to 100, got {json.dumps(amount)}")
            else:
                bias[token] = float(amount)
        return bias

    def stream_option(self, name: str) -> bool:
        options = self._get("stream_options")
        if options is None:
            return False
        if not isinstance(options, Mapping):
            self.fail("GK371", "/stream_options", "stream_options must be an object, not "
                      f"{_json_type(options)}")
            return False
        value = options.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.fail("GK371", f"/stream_options/{name}", f"{name} must be true or false")
            return False
        return value

    def constraint(self) -> tuple[str, str] | None:
        given = [name for name in CONSTRAINT_FIELDS if self._get(name) is not None]
        response_format = self.response_format()
        if response_format is not None:
            given.append("response_format")
        if len(given) > 1:
            self.fail("GK372", f"/{given[1]}", f"a request takes one constraint, got "
                      f"{' and '.join(given)}", "merge them into one grammar")
            return None
        if not given:
            return None
        if response_format is not None:
            return "json_schema", response_format
        name = given[0]
        value = self.body[name]
        if not isinstance(value, str):
            hint = "send the schema as JSON text (a string)" if name == "json_schema" else None
            self.fail("GK371", f"/{name}", f"{name} must be a string, not {_json_type(value)}",
                      hint)
            return None
        return name, value

    def response_format(self) -> str | None:
        """SGLang's ``response_format`` as JSON Schema text: ``json_object`` is any object,
        ``json_schema`` its ``schema``; ``text`` (or none) is no constraint."""
        value = self._get("response_format")
        if value is None:
            return None
        kind = value.get("type") if isinstance(value, Mapping) else None
        if kind == "text":
            return None
        if kind == "json_object":
            return '{"type": "object"}'
        if kind == "json_schema":
            spec = value.get("json_schema")
            schema = spec.get("schema", spec.get("schema_")) if isinstance(spec, Mapping) \
                else None
            if isinstance(schema, (Mapping, bool)):
                return json.dumps(schema)
            self.fail("GK371", "/response_format/json_schema", "response_format of type "
                      "json_schema needs json_schema.schema, an object")
            return None
        self.fail("GK371", "/response_format", "response_format must be an object whose type "
                  "is text, json_object or json_schema", "or send `json_schema` directly")
        return None

    def passthrough(self) -> None:
        for name in _BOOL_FIELDS:
            self.flag(name, False)
        for name in _STRING_FIELDS:
            self.string(name)
        for name in _INT_FIELDS:
            self.optional_int(name)
        self.token_ids("token_ids_logprob")
        for name in ("stop_regex", "rid", "lora_path"):
            value = self._get(name)
            if value is not None and not (isinstance(value, str) or isinstance(value, list)
                                          and all(isinstance(v, str) for v in value)):
                self.fail("GK371", f"/{name}", f"{name} must be a string or a list of strings")
        custom = self._get("custom_params")
        if custom is not None and not isinstance(custom, (Mapping, list)):
            self.fail("GK371", "/custom_params", "custom_params must be an object or a list")

    def relations(self, request: CompletionRequest) -> None:
        if request.min_tokens > request.max_tokens:
            self.fail("GK373", "/min_tokens", f"min_tokens ({request.min_tokens}) must be at most "
                      f"max_tokens ({request.max_tokens})")
        if request.best_of is not None:
            if request.stream:
                self.fail("GK373", "/best_of", "best_of cannot be used with stream",
                          "drop best_of, or set stream to false")
            if request.best_of < request.n:
                self.fail("GK373", "/best_of", f"best_of ({request.best_of}) must be at least n "
                          f"({request.n})")


_RANGES = {
    "max_tokens": lambda v: None if v > 0 else "must be positive",
    "min_tokens": lambda v: None if v >= 0 else "must be at least 0",
    "temperature": lambda v: None if math.isfinite(v) and v >= 0 else "must be at least 0",
    "top_p": lambda v: None if 0 < v <= 1 else "must be in (0, 1]",
    "top_k": lambda v: None if v == -1 or v >= 1 else "must be -1 (all tokens) or at least 1",
    "min_p": lambda v: None if 0 <= v <= 1 else "must be in [0, 1]",
    "frequency_penalty": lambda v: None if -2 <= v <= 2 else "must be in [-2, 2]",
    "presence_penalty": lambda v: None if -2 <= v <= 2 else "must be in [-2, 2]",
    "repetition_penalty": lambda v: None if 0 < v <= 2 else "must be in (0, 2]",
}


_PLURAL = {"a number": "token ids", "a string": "strings", "an array": "lists",
           "a boolean": "booleans", "null": "nulls", "an object": "objects"}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _is_json_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _token_key(key: Any) -> int | None:
    if _is_int(key):
        return int(key) if key >= 0 else None
    if isinstance(key, str) and key.isascii() and key.isdigit():
        return int(key)
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def compile_constraint(name: str, text: str) -> Grammar:
    """The grammar of a request's ``ebnf``, ``regex`` or ``json_schema`` field.

    Raises
    ------
    RequestError
        With grammarkit's located diagnostics (``ebnf:1:14: GK103 ...``) when the grammar does
        not compile, the regex does not convert, or the schema is not JSON or does not convert.
    """
    from grammarkit.diagnostics import GrammarError
    from grammarkit.grammar import Grammar

    try:
        if name == "ebnf":
            return Grammar.from_ebnf(text, path="ebnf")
        if name == "regex":
            return Grammar.from_regex(text)
        try:
            schema = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            where = f" (line {exc.lineno}, column {exc.colno})" \
                if isinstance(exc, json.JSONDecodeError) else ""
            raise RequestError([problem("GK374", "/json_schema", f"json_schema is not valid JSON"
                                        f"{where}: {getattr(exc, 'msg', 'nested too deeply')}",
                                        "send the schema as JSON text")]) from None
        # Decoded here, never passed as text: Grammar.from_json_schema reads a string as a path.
        return Grammar.from_json_schema(schema)
    except GrammarError as exc:
        raise RequestError([_located(name, d) for d in exc.diagnostics if d.is_error]) from None
    except RecursionError:
        raise RequestError([problem("GK374", f"/{name}", f"{name} is nested too deeply")]) from None


def _located(name: str, diagnostic: Diagnostic) -> Diagnostic:
    if name == "json_schema":
        return replace(diagnostic, pointer=f"json_schema#{diagnostic.pointer or ''}")
    if diagnostic.source is not None and diagnostic.source.path != name:
        return replace(diagnostic, source=SourceText(diagnostic.source.text, name))
    return diagnostic
