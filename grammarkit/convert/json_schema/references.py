"""The schema document: its subschemas, base URIs, anchors, drafts, and ``$ref`` resolution.

One walk over the document (through schema keywords only, never into ``enum`` or ``const``
data) records every subschema's JSON pointer, the base URI in effect there (``$id``, or ``id``
in draft 4, resolved against the enclosing base per RFC 3986), the ``$anchor``\\ s and
``$dynamicAnchor``\\ s, and each resource's draft (from ``$schema``). A ``$ref`` then resolves to
a pointer in this document, or to ``None`` when it names another document.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

DEFAULT_BASE = "grammarkit:///schema.json"
"""The base URI of a document without ``$id``."""

DRAFTS = {
    "draft-04": 4,
    "draft-06": 6,
    "draft-07": 7,
    "2019-09": 2019,
    "2020-12": 2020,
}

SCHEMA_KEYWORDS = (
    "additionalProperties", "additionalItems", "contains", "propertyNames", "not", "if", "then",
    "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema",
)
"""Keywords whose value is one subschema."""

SCHEMA_MAP_KEYWORDS = (
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas",
    "dependencies",
)
"""Keywords whose value maps names to subschemas (``dependencies`` only for its schema values)."""

SCHEMA_LIST_KEYWORDS = ("allOf", "anyOf", "oneOf", "prefixItems")
"""Keywords whose value is a list of subschemas (``items`` may be either form)."""


def escape(token: str) -> str:
    """A JSON pointer token: ``~`` as ``~0``, ``/`` as ``~1``."""
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True)
class Subschema:
    """Where a subschema sits: its base URI, its resource's draft, and whether a ``$schema``
    declared that draft."""

    base: str
    draft: int
    declared: bool = False


class Document:
    """The whole schema, indexed for ``$ref`` resolution."""

    def __init__(self, root: Any, default_draft: int = 2020):
        self.root = root
        self.subschemas: dict[str, Subschema] = {}
        self.resources: dict[str, str] = {}
        self.anchors: dict[tuple[str, str], str] = {}
        self.dynamic_anchors: dict[str, list[str]] = {}
        self.unknown_metaschemas: list[str] = []
        self._index(default_draft)

    def _index(self, default_draft: int) -> None:
        stack: list[tuple[str, Any, str, int, bool]] = [
            ("", self.root, DEFAULT_BASE, default_draft, False)]
        self.resources[DEFAULT_BASE] = ""
        while stack:
            pointer, schema, base, draft, declared = stack.pop()
            if isinstance(schema, dict):
                if isinstance(schema.get("$schema"), str):
                    known = _draft(schema["$schema"], None)
                    if known is None:
                        self.unknown_metaschemas.append(pointer + "/$schema")
                    draft, declared = known or draft, True
                base = self._register(pointer, schema, base, draft)
            self.subschemas[pointer] = Subschema(base, draft, declared)
            if isinstance(schema, dict):
                for path, child in _subschemas(schema):
                    stack.append((pointer + path, child, base, draft, declared))

    def _register(self, pointer: str, schema: dict[str, Any], base: str, draft: int) -> str:
        identifier = schema.get("id" if draft == 4 else "$id")
        if isinstance(identifier, str):
            target, fragment = _split_fragment(resolve_uri(base, identifier))
            if target != base or not pointer:
                base = target
                self.resources.setdefault(base, pointer)
            if fragment and draft <= 7:
                self.anchors.setdefault((base, fragment), pointer)
        for keyword in ("$anchor", "$dynamicAnchor"):
            anchor = schema.get(keyword)
            if isinstance(anchor, str):
                self.anchors.setdefault((base, anchor), pointer)
                if keyword == "$dynamicAnchor":
                    self.dynamic_anchors.setdefault(anchor, []).append(pointer)
        return base

    def at(self, pointer: str) -> Any:
        """The value at ``pointer``; raises ``KeyError`` if there is none."""
        value = self.root
        if not pointer:
            return value
        for token in pointer[1:].split("/"):
            token = unescape(token)
            if isinstance(value, dict) and token in value:
                value = value[token]
            elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
                value = value[int(token)]
            else:
                raise KeyError(pointer)
        return value

    def location(self, pointer: str) -> Subschema:
        """The base URI and draft in effect at ``pointer``."""
        probe = pointer
        while probe not in self.subschemas:
            probe = probe[: probe.rfind("/")] if "/" in probe else ""
        return self.subschemas[probe]

    def resolve(self, pointer: str, reference: str) -> str | None:
        """The pointer ``reference`` (found at ``pointer``) names, or ``None`` if it names
        another document. Raises ``KeyError`` for a fragment this document lacks."""
        target, fragment = _split_fragment(resolve_uri(self.location(pointer).base, reference))
        resource = self.resources.get(target)
        if resource is None:
            return None
        if not fragment:
            return resource
        if fragment.startswith("/"):
            found = resource + unquote(fragment)
            self.at(found)
            return found
        anchor = self.anchors.get((target, unquote(fragment)))
        if anchor is None:
            raise KeyError(fragment)
        return anchor


def _draft(uri: str, default: int | None) -> int | None:
    """The draft a ``$schema`` URI names (a json-schema.org metaschema), else ``default``."""
    if "json-schema.org/" in uri:
        for marker, draft in DRAFTS.items():
            if marker in uri:
                return draft
    return default


def _subschemas(schema: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(relative pointer, subschema)`` for every subschema directly inside ``schema``."""
    found: list[tuple[str, Any]] = []
    for keyword in SCHEMA_KEYWORDS:
        if keyword in schema:
            found.append((f"/{keyword}", schema[keyword]))
    items = schema.get("items")
    if isinstance(items, list):
        found.extend((f"/items/{i}", child) for i, child in enumerate(items))
    elif "items" in schema:
        found.append(("/items", items))
    for keyword in SCHEMA_LIST_KEYWORDS:
        value = schema.get(keyword)
        if isinstance(value, list):
            found.extend((f"/{keyword}/{i}", child) for i, child in enumerate(value))
    for keyword in SCHEMA_MAP_KEYWORDS:
        value = schema.get(keyword)
        if isinstance(value, dict):
            found.extend(
                (f"/{keyword}/{escape(name)}", child)
                for name, child in value.items()
                if isinstance(child, (dict, bool))
            )
    return found


# -- RFC 3986 reference resolution -------------------------------------------------------------
def _split_fragment(uri: str) -> tuple[str, str]:
    target, _, fragment = uri.partition("#")
    return target, fragment


def resolve_uri(base: str, reference: str) -> str:
    """``reference`` resolved against ``base`` (RFC 3986 section 5.2), for any scheme."""
    ref = urlsplit(reference)
    if ref.scheme:
        return _compose(ref.scheme, ref.netloc, _remove_dots(ref.path), ref.query, ref.fragment,
                        "//" in reference.split("#")[0][: len(ref.scheme) + 3])
    parts = urlsplit(base)
    has_authority = base.startswith(f"{parts.scheme}://")
    if reference.startswith("//"):
        return _compose(parts.scheme, ref.netloc, _remove_dots(ref.path), ref.query,
                        ref.fragment, True)
    if not ref.path:
        query = ref.query if "?" in reference.split("#")[0] else parts.query
        return _compose(parts.scheme, parts.netloc, parts.path, query, ref.fragment,
                        has_authority)
    if ref.path.startswith("/"):
        path = _remove_dots(ref.path)
    else:
        if has_authority and not parts.path:
            merged = "/" + ref.path
        else:
            merged = parts.path[: parts.path.rfind("/") + 1] + ref.path
        path = _remove_dots(merged)
    return _compose(parts.scheme, parts.netloc, path, ref.query, ref.fragment, has_authority)


def _compose(scheme: str, netloc: str, path: str, query: str, fragment: str,
             authority: bool) -> str:
    text = f"{scheme}:" if scheme else ""
    if authority or netloc:
        text += f"//{netloc}"
    text += path
    if query:
        text += f"?{query}"
    if fragment:
        text += f"#{fragment}"
    return text


def _remove_dots(path: str) -> str:
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)
