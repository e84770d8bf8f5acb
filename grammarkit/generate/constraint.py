"""What a completion is constrained by: a `Grammar`, EBNF text, a `JsonSchema` or a `Regex`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Union

if TYPE_CHECKING:
    from grammarkit.grammar import Grammar


@dataclass(frozen=True)
class JsonSchema:
    """A JSON Schema as a constraint; a remote server receives it as ``json_schema``.

    Parameters
    ----------
    schema
        The schema as a dict, JSON text, or boolean.
    options
        Conversion options of :meth:`Grammar.from_json_schema` (``whitespace``, ``indent``,
        ``strict``, ``lenient``, ...), used when the grammar is built locally.
    """

    schema: dict[str, Any] | str | bool
    options: dict[str, Any] = field(default_factory=dict)

    def __init__(self, schema: dict[str, Any] | str | bool, **options: Any):
        object.__setattr__(self, "schema", schema)
        object.__setattr__(self, "options", dict(options))

    def __hash__(self) -> int:
        return hash(self.text())

    def text(self) -> str:
        """The schema as JSON text."""
        return self.schema if isinstance(self.schema, str) else json.dumps(self.schema)


@dataclass(frozen=True)
class Regex:
    """A regular expression the whole completion must match; sent to servers as ``regex``."""

    pattern: str
    flavor: str = "ecma"


Constraint = Union["Grammar", str, JsonSchema, Regex]
"""A `Grammar`, EBNF text (root rule ``root``), a `JsonSchema` or a `Regex`."""


def as_grammar(constraint: Constraint) -> Grammar:
    """The grammar of ``constraint``.

    Raises
    ------
    GrammarError
        When EBNF text or a regex is invalid.
    SchemaError
        When a schema is invalid or cannot be enforced.
    TypeError
        For anything that is not a constraint.
    """
    from grammarkit.grammar import Grammar

    if isinstance(constraint, Grammar):
        return constraint
    if isinstance(constraint, str):
        return Grammar.from_ebnf(constraint)
    if isinstance(constraint, JsonSchema):
        return Grammar.from_json_schema(constraint.schema, **constraint.options)
    if isinstance(constraint, Regex):
        return Grammar.from_regex(constraint.pattern, flavor=constraint.flavor)
    raise TypeError(f"a constraint is a Grammar, EBNF text, JsonSchema or Regex, "
                    f"not {type(constraint).__name__}")


def request_field(constraint: Constraint) -> tuple[Literal["ebnf", "regex", "json_schema"], str]:
    """How to send ``constraint`` to an SGLang-style server: the request field and its value.

    Schemas and ECMAScript regexes travel as themselves (the server converts them); grammars,
    and Python-flavor regexes (which a server would read with ECMAScript's meaning), as EBNF text.
    """
    if isinstance(constraint, JsonSchema):
        return "json_schema", constraint.text()
    if isinstance(constraint, Regex) and constraint.flavor == "ecma":
        return "regex", constraint.pattern
    if isinstance(constraint, str):
        return "ebnf", constraint
    return "ebnf", _rooted_ebnf(as_grammar(constraint))


def _rooted_ebnf(grammar: Grammar) -> str:
    """EBNF text whose root rule is named ``root`` (servers know no other root)."""
    text = grammar.to_ebnf()
    if grammar.root == "root":
        return text
    if "root" in grammar.rule_names:
        raise ValueError(f"the grammar starts at `{grammar.root}` but also has a rule `root`: "
                         "rename it to send the grammar to a server")
    return f"root ::= {grammar.root}\n{text}"
