"""Whole-input scans by shape (``matches``/``explain``) against the per-group engine.

``Recognizer.matches`` and ``explain`` scan by *shapes* (the top of the graph-structured stack,
known by configurations, with every step remembered); ``Recognizer.advance`` runs the per-group
engine byte by byte. On random grammars that nest (brackets, recursion, optional and counted
parts) and on random nested inputs, both must give the same verdict, and ``explain`` must stop
where the per-group engine first rejects a byte, expecting what it expects there.
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grammarkit.automata.earley import Explanation, ParseState, Recognizer
from grammarkit.diagnostics import GrammarError
from grammarkit.grammar import Grammar
from grammarkit.strategies import from_grammar
from tests.automata.grammars import JSON
from tests.automata.nested_documents import damaged_document

ATOMS = "ab,()[]"


def per_group_engine(grammar: Grammar, data: bytes) -> tuple[bool, int, tuple[str, ...]]:
    """``(verdict, offset where it stops, what it expects there)``, byte by byte."""
    recognizer = Recognizer(grammar.compiled)
    tables = recognizer._tables
    state: ParseState | None = recognizer.initial()
    offset = 0
    for offset in range(len(data)):
        assert state is not None
        following = recognizer.advance(state, data[offset:offset + 1])
        if following is None:
            break
        state = following
    else:
        offset = len(data)
    assert state is not None
    expected = tables.describe_expected(tables.merged(config for _, config in state.groups))
    return offset == len(data) and recognizer.is_accepting(state), offset, expected


def agree(grammar: Grammar, data: bytes) -> None:
    verdict, offset, expected = per_group_engine(grammar, data)
    assert grammar.matches(data) == verdict, data
    explanation = grammar.explain(data)
    if verdict:
        assert explanation is None
    else:
        assert isinstance(explanation, Explanation), data
        assert (explanation.offset, explanation.expected) == (offset, expected), data


@st.composite
def nested_grammars(draw: st.DrawFn) -> str:
    """EBNF of 1-4 rules that call each other, inside brackets and repetitions."""
    count = draw(st.integers(1, 4))
    names = [f"r{i}" for i in range(count)]

    def item(depth: int) -> str:
        kinds = ["literal", "class", "call", "call"] + (["bracket", "repeat"] if depth else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "literal":
            return json.dumps(draw(st.sampled_from(["a", "b", ",", "ab"])))
        if kind == "class":
            return draw(st.sampled_from(["[ab]", "[^()\\[\\],]", "[a-b,]"]))
        if kind == "call":
            return draw(st.sampled_from(names))
        inner = sequence(depth - 1)
        if kind == "bracket":
            return draw(st.sampled_from(['"(" {} ")"', '"[" {} "]"', '"(" ({})? ")"'])).format(inner)
        suffix = draw(st.sampled_from(["*", "+", "?", "{2}", "{0,3}", "{1,}"]))
        return f"({inner}){suffix}"

    def sequence(depth: int) -> str:
        return " ".join(item(depth) for _ in range(draw(st.integers(1, 3))))

    rules = [f"root ::= {names[0]}"]
    for name in names:
        alternatives = [sequence(2) for _ in range(draw(st.integers(1, 3)))]
        if draw(st.booleans()):
            alternatives.append('""')
        rules.append(f"{name} ::= " + " | ".join(alternatives))
    return "\n".join(rules)


@settings(max_examples=60)
@given(source=nested_grammars(), data=st.data())
def test_random_nested_grammars_agree_with_the_per_group_engine(source: str,
                                                                data: st.DataObject) -> None:
    try:
        grammar = Grammar.from_ebnf(source)
        grammar.compiled  # noqa: B018 - compile errors are not what this test is about
    except GrammarError:
        return
    texts = [data.draw(st.text(ATOMS, max_size=40)) for _ in range(3)]
    sentence = data.draw(from_grammar(grammar, max_length=60) | st.just(""))
    texts.append(sentence)
    if sentence:
        at = data.draw(st.integers(0, len(sentence)))
        texts.append(sentence[:at] + data.draw(st.sampled_from(ATOMS)) + sentence[at:])
        texts.append(sentence[:at] + sentence[at + 1:])
    for text in texts:
        agree(grammar, text.encode())


@pytest.fixture(scope="module")
def json_grammar() -> Grammar:
    return Grammar.from_ebnf(JSON)


@settings(max_examples=40)
@given(levels=st.lists(st.sampled_from(["[", '{"a": ', "[1, ", '{"k": [', '[{"b": 2, "c": ',
                                        '{"x": "s\\u00e9", "y": [', '[\n  ', '{"é😀": ["x", ']),
                       min_size=1, max_size=40),
       cut=st.integers(0, 10**6), damage=st.sampled_from(["", "]", "}", ",", "x", " ", "drop"]))
def test_random_nested_documents_agree_with_the_per_group_engine(
        json_grammar: Grammar, levels: list[str], cut: int, damage: str) -> None:
    closing = {"[": "]", '{"a": ': "}", "[1, ": "]", '{"k": [': "]}", '[{"b": 2, "c": ': "}]",
               '{"x": "s\\u00e9", "y": [': "]}", "[\n  ": "\n]", '{"é😀": ["x", ': "]}"}
    document = damaged_document(levels, closing, cut, damage)
    agree(json_grammar, document.encode())


# -- the documents the shape scan was made for, each broken once -----------------------------

def package_lock(packages: int) -> bytes:
    """A pretty-printed package-lock.json-like document."""
    rng = random.Random(7)
    words = ["react", "lodash", "core", "utils", "babel", "types", "loader", "parser"]
    entries: dict[str, object] = {}
    for index in range(packages):
        name = "-".join(rng.sample(words, 2)) + str(index)
        version = f"{rng.randint(0, 20)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
        entry: dict[str, object] = {
            "version": version, "resolved": f"https://registry.npmjs.org/{name}/-/{name}.tgz",
            "integrity": "sha512-" + "".join(rng.choice("abcXYZ019+/") for _ in range(40)),
            "dev": rng.random() < 0.5}
        if rng.random() < 0.6:
            entry["dependencies"] = {rng.choice(words): f"^{version}"
                                     for _ in range(rng.randint(1, 4))}
        entries[f"node_modules/{name}"] = entry
    return json.dumps({"name": "app", "lockfileVersion": 3, "packages": entries},
                      indent=2).encode()


def feature_collection(features: int) -> bytes:
    """A GeoJSON-like document: polygons nest coordinates four arrays deep."""
    rng = random.Random(11)
    items = []
    for index in range(features):
        rings = [[[round(rng.uniform(-180, 180), 5), round(rng.uniform(-90, 90), 5)]
                  for _ in range(rng.randint(4, 8))] for _ in range(rng.randint(1, 2))]
        items.append({"type": "Feature", "id": index,
                      "geometry": {"type": "MultiPolygon", "coordinates": [rings]},
                      "properties": {"name": f"f{index}", "tags": ["a", "b"][:index % 3]}})
    return json.dumps({"type": "FeatureCollection", "features": items}).encode()


SCHEMA_JSON = Grammar.from_json_schema({}).to_ebnf()
"""The grammar ``from_json_schema`` writes for any JSON value (strings call a rule per
character, objects and arrays nest through ``json-value``)."""

DOCUMENTS = {
    "objects 2000 deep": b'{"a": ' * 2000 + b"1" + b"}" * 2000,
    "arrays 5000 deep": b"[" * 5000 + b"]" * 5000,
    "package lock": package_lock(300),
    "feature collection": feature_collection(150),
}


@pytest.mark.parametrize("ebnf", [JSON, SCHEMA_JSON], ids=["builtin JSON", "schema JSON"])
@pytest.mark.parametrize("name", list(DOCUMENTS))
def test_nested_documents_and_their_broken_copies(ebnf: str, name: str) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    document = DOCUMENTS[name]
    assert grammar.matches(document) and grammar.explain(document) is None
    at = len(document) * 2 // 3  # a bracket or comma goes missing two thirds in
    while document[at:at + 1] not in (b"]", b"}", b","):
        at += 1
    broken = document[:at] + document[at + 1:]
    verdict, offset, expected = per_group_engine(grammar, broken)
    explanation = grammar.explain(broken)
    assert not verdict and not grammar.matches(broken)
    assert explanation is not None
    assert (explanation.offset, explanation.expected) == (offset, expected)
    assert offset >= at  # found no earlier than the damage
    line_start = broken.rfind(b"\n", 0, offset) + 1
    assert (explanation.line, explanation.column) == (broken.count(b"\n", 0, offset) + 1,
                                                      offset - line_start + 1)


@pytest.mark.xgrammar
@pytest.mark.parametrize("document", [
    b'{"a": ' * 100 + b"1" + b"}" * 100,  # xgrammar takes seconds per 1,000 such levels
    DOCUMENTS["arrays 5000 deep"], DOCUMENTS["package lock"], DOCUMENTS["feature collection"],
], ids=["objects 100 deep", "arrays 5000 deep", "package lock", "feature collection"])
def test_nested_documents_agree_with_xgrammar(json_grammar: Grammar, document: bytes) -> None:
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string

    reference = xgr.Grammar.from_ebnf(JSON)
    for text in (document, document[:-1], document[:len(document) // 2] + b"]"
                 + document[len(document) // 2:]):
        assert json_grammar.matches(text) == _is_grammar_accept_string(reference, text.decode())


@pytest.mark.parametrize("ebnf", [JSON, SCHEMA_JSON], ids=["builtin JSON", "schema JSON"])
def test_deep_documents_broken_at_the_end_are_located(ebnf: str) -> None:
    grammar = Grammar.from_ebnf(ebnf)
    objects = b'{"a": ' * 2000 + b"1" + b"}" * 1999 + b"]"
    explanation = grammar.explain(objects)
    assert explanation is not None
    assert str(explanation) == (
        'expected one of "\\t" "\\n" "\\r" " " "," "}" at 1:14001, found "]"')
    arrays = b"[\n" + b"  [1, 2,\n" * 3000 + b"  3" + b"]" * 2999 + b"\n"
    explanation = grammar.explain(arrays)
    assert explanation is not None and explanation.offset == len(arrays)
    assert str(explanation) == (
        'expected one of "\\t" "\\n" "\\r" " " "," "]" at 3003:1, found end of input')


def test_the_shape_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``_SHAPE_STEPS`` remembered steps, the next chunk starts afresh; verdicts and
    explanations do not change."""
    from grammarkit.automata import earley

    monkeypatch.setattr(earley, "_SHAPE_STEPS", 50)
    grammar = Grammar.from_ebnf(SCHEMA_JSON)
    document = DOCUMENTS["feature collection"] + b" " + DOCUMENTS["package lock"]
    assert not grammar.matches(document)  # two values
    assert grammar.matches(DOCUMENTS["feature collection"])
    agree(grammar, document[:30_000] + b"}" + document[30_000:40_000])
    scan = earley._tables_for(grammar.compiled)._shape_scan
    assert scan is not None
    # one chunk adds at most _SHAPE_MISSES + 4096 / 8 steps and reads before it gives up
    assert len(scan.steps) + len(scan.reads) + len(scan.jumps) <= 50 + 256 + 512
