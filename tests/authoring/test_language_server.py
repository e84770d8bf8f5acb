"""``grammarkit lsp`` end to end: a real LSP client (pytest-lsp) talking to the server process."""

from __future__ import annotations

import sys
import time

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

URI = "file:///work/g.ebnf"
TEXT = 'root ::= "[" valu "]"\nvalue ::= [0-9]+ | "x" value\n'


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "grammarkit", "lsp"]))
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, text: str = TEXT, uri: str = URI) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="ebnf", version=1, text=text)))


async def diagnostics_for(client: LanguageClient, uri: str = URI) -> list[types.Diagnostic]:
    """The diagnostics of the next publication for ``uri``."""
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def doc() -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=URI)


@pytest.mark.asyncio
async def test_diagnostics_with_hint_and_quick_fix(client: LanguageClient) -> None:
    open_document(client)
    (diagnostic,) = await diagnostics_for(client)
    assert diagnostic.code == "GK103"
    assert diagnostic.message == "rule `valu` is not defined"
    assert diagnostic.range == types.Range(start=at(0, 13), end=at(0, 17))
    assert diagnostic.related_information[0].message == "help: did you mean `value`?"
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=doc(), range=diagnostic.range,
        context=types.CodeActionContext(diagnostics=[diagnostic])))
    (action,) = actions
    assert action.title == "Replace with `value`"
    (edit,) = action.edit.changes[URI]
    assert (edit.range, edit.new_text) == (diagnostic.range, "value")


@pytest.mark.asyncio
async def test_edits_are_debounced_and_rechecked(client: LanguageClient) -> None:
    open_document(client)
    await diagnostics_for(client)
    fixed = TEXT.replace("valu ", "value ")
    started = time.perf_counter()
    for version, text in enumerate(["root ::= ", "root ::= (", fixed], start=2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    assert await diagnostics_for(client) == []
    assert time.perf_counter() - started < 5


@pytest.mark.asyncio
async def test_definition_references_and_rename(client: LanguageClient) -> None:
    open_document(client, TEXT.replace("valu ", "value "))
    await diagnostics_for(client)
    location = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(), position=at(0, 15)))
    assert location.range == types.Range(start=at(1, 0), end=at(1, 5))
    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=doc(), position=at(1, 2),
        context=types.ReferenceContext(include_declaration=False)))
    assert [r.range.start for r in refs] == [at(0, 13), at(1, 23)]
    edit = await client.text_document_rename_async(types.RenameParams(
        text_document=doc(), position=at(1, 1), new_name="number"))
    assert sorted((e.range.start.line, e.range.start.character, e.new_text)
                  for e in edit.changes[URI]) == [(0, 13, "number"), (1, 0, "number"),
                                                  (1, 23, "number")]


@pytest.mark.asyncio
async def test_hover_completion_symbols_and_formatting(client: LanguageClient) -> None:
    open_document(client, 'root   ::=  "[" value  "]"\nvalue ::= [0-9]+ | "x" value\n')
    await diagnostics_for(client)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc(), position=at(1, 2)))
    assert 'value ::= [0-9]+ | "x" value' in hover.contents.value
    assert "nullable: no" in hover.contents.value
    assert "first characters: `[0-9x]`" in hover.contents.value
    completions = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc(), position=at(0, 12)))
    labels = {item.label for item in completions.items}
    assert {"root", "value", "TagDispatch", "Regex"} <= labels
    symbols = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=doc()))
    assert [s.name for s in symbols] == ["root", "value"]
    edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
        text_document=doc(), options=types.FormattingOptions(tab_size=4, insert_spaces=True)))
    assert edits[0].new_text == 'root ::= "[" value "]"\nvalue ::= [0-9]+ | "x" value\n'


@pytest.mark.asyncio
async def test_half_typed_grammars_never_crash_the_server(client: LanguageClient) -> None:
    text = TEXT.replace("valu ", "value ") + "".join(
        f'rule{i} ::= "a" rule{i + 1} | [b-c]{{1,3}}\n' for i in range(1000))
    text += 'rule1000 ::= "z"\n'
    open_document(client, text)
    assert await diagnostics_for(client) is not None
    for version, cut in enumerate((len(text) - 5, len(text) // 2, 17, 3, 0), start=2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text[:cut])]))
        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=doc(), position=at(0, 2)))
        assert hover is None or "root" in hover.contents.value
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=9),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="root ::= (")]))
    (diagnostic,) = await diagnostics_for(client)
    assert diagnostic.code == "GK101"


def thousand_line_grammar() -> str:
    lines = ['root ::= ws "{" ws r1 ws ("," ws r2)* ws "}" ws', "ws ::= [ \\t\\n]{0,8}"]
    lines += [f'r{k} ::= "key_{k}" ws ":" ws ( r{k * 7 % 998 + 1} | [a-z0-9_]+ ) '
              f'("," ws r{k * 13 % 998 + 1}){{0,2}}' for k in range(1, 999)]
    return "\n".join(lines) + "\n"


@pytest.mark.asyncio
async def test_incremental_edits_of_a_thousand_line_grammar_are_rechecked(
        client: LanguageClient) -> None:
    text = thousand_line_grammar()
    assert text.count("\n") == 1000
    open_document(client, text)
    assert await diagnostics_for(client) == []
    line = 500
    column = text.splitlines()[line].index("( r") + 2
    name = text.splitlines()[line][column:].split(" ")[0]
    for version, (old, new) in enumerate([(name, name + "x"), (name + "x", name)], start=2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(start=at(line, column), end=at(line, column + len(old))),
                text=new)]))
        found = await diagnostics_for(client)
        if new == name:
            assert found == []
        else:
            (diagnostic,) = found
            assert diagnostic.code == "GK103"
            assert diagnostic.message == f"rule `{new}` is not defined"
            assert diagnostic.range == types.Range(start=at(line, column),
                                                   end=at(line, column + len(new)))
