"""Railroad diagrams: every bundled grammar renders, SVG parses, rules link to each other."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from grammarkit import Grammar
from grammarkit.cli import main
from tests.conftest import GRAMMARS

HERE = Path(__file__).resolve().parent
SVG = re.compile(r"<svg .*?</svg>", re.DOTALL)
SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter() if t.tag in ("text", f"{SVG_NS}text")]


@pytest.mark.parametrize("path", sorted(GRAMMARS.glob("*.ebnf")), ids=lambda p: p.name)
def test_every_bundled_grammar_renders_with_every_rule(path: Path) -> None:
    grammar = Grammar.from_ebnf(path.read_text("utf-8"))
    page = grammar.to_railroad()
    diagrams = SVG.findall(page)
    assert len(diagrams) == len(grammar.rule_names)
    for name, svg in zip(grammar.rule_names, diagrams, strict=True):
        assert f'<h2 id="rule-{name}">{name}</h2>' in page
        texts = svg_texts(svg)
        assert texts, name
        for ref in re.findall(r'href="#rule-([^"]+)"', svg):
            assert ref in grammar.rule_names


def test_one_rule_as_standalone_svg_golden() -> None:
    grammar = Grammar.from_ebnf((HERE / "data" / "greeting.ebnf").read_text("utf-8"))
    svg = grammar.to_railroad("root")
    assert ET.fromstring(svg).tag == f"{SVG_NS}svg"
    assert list(dict.fromkeys(svg_texts(svg))) == ["greeting", '","', '" "', "name", '"!"']
    golden = HERE / "golden" / "diagram_greeting_root.svg"
    if os.environ.get("GRAMMARKIT_UPDATE_GOLDEN") == "1":
        golden.write_text(svg, "utf-8")
    assert svg == golden.read_text("utf-8")


def test_counted_repetitions_and_macros_are_labelled() -> None:
    grammar = Grammar.from_ebnf(
        'root ::= [0-9]{2,4} "x"{3} TagDispatch(("<a>", a)) Regex("[a-z]+")\na ::= "1"')
    texts = svg_texts(grammar.to_railroad("root"))
    assert "2 to 4 times" in texts and "3 times" in texts
    assert '"<a>"' in texts and "TagDispatch" in texts
    assert 'Regex("[a-z]+")' in texts


def test_deep_nesting_and_long_literals_do_not_break_drawing() -> None:
    grammar = Grammar.from_ebnf("root ::= " + "(" * 300 + '"a"' + ")" * 300 + ' "' + "b" * 200 + '"')
    svg = grammar.to_railroad("root")
    assert ET.fromstring(svg) is not None
    assert any(t.endswith("…") for t in svg_texts(svg))


def test_unknown_rule() -> None:
    with pytest.raises(KeyError, match="no rule `nope`"):
        Grammar.from_ebnf('root ::= "a"').to_railroad("nope")


def test_cli_draws_what_parses_and_lists_errors(tmp_path: Path) -> None:
    path = tmp_path / "broken.ebnf"
    path.write_text('root ::= "a" b\nb ::= [0-9]+ (\nc ::= "x"\n')
    out = tmp_path / "broken.html"
    result = CliRunner().invoke(main, ["diagram", str(path), "-o", str(out)])
    assert result.exit_code == 1
    assert "GK101" in result.stderr
    page = out.read_text("utf-8")
    assert "The grammar has errors" in page and "GK101" in page
    assert '<h2 id="rule-root">' in page and '<h2 id="rule-c">' in page


def test_cli_svg_needs_a_rule(tmp_path: Path) -> None:
    grammar = str(GRAMMARS / "json.ebnf")
    result = CliRunner().invoke(main, ["diagram", grammar, "-o", str(tmp_path / "x.svg")])
    assert result.exit_code == 2 and "--rule" in result.stderr
    result = CliRunner().invoke(main, ["diagram", grammar, "--rule", "value"])
    assert result.exit_code == 0
    assert ET.fromstring(result.stdout).tag == f"{SVG_NS}svg"
    result = CliRunner().invoke(main, ["diagram", grammar, "--rule", "nope"])
    assert result.exit_code == 2 and "no rule `nope`" in result.stderr


JSON_ARR_WS = 'root ::= "[" ws "]"\nws ::= | " " | "\\n" [ \\t]{0,20}\n'
"""llama.cpp's json_arr.gbnf style: an empty first alternative, which GBNF allows."""


def test_cli_draws_gbnf_files(tmp_path: Path) -> None:
    # `diagram json_arr.gbnf` read llama.cpp GBNF as EBNF: GK101 at `ws ::= |`, exit 1
    path = tmp_path / "arr.gbnf"
    path.write_text(JSON_ARR_WS)
    out = tmp_path / "arr.html"
    result = CliRunner().invoke(main, ["diagram", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    page = out.read_text("utf-8")
    assert '<h2 id="rule-root">' in page and '<h2 id="rule-ws">' in page
    assert "The grammar has errors" not in page


def test_cli_says_when_an_ebnf_file_reads_as_gbnf(tmp_path: Path) -> None:
    path = tmp_path / "arr.ebnf"
    path.write_text(JSON_ARR_WS)
    result = CliRunner().invoke(main, ["diagram", str(path), "-o", str(tmp_path / "a.html")])
    assert result.exit_code == 1
    assert "GK101" in result.stderr and "GK173" in result.stderr
