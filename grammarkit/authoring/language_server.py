"""``grammarkit lsp``: a language server for ``.ebnf`` grammars (stdio; extra ``lsp``).

Diagnostics as you type (every GK code, debounced, the hint as related information), formatting,
go to definition, find references, rename, hover, completion of rule and macro names, document
symbols and quick fixes. The answers come from :class:`~grammarkit.authoring.document.
GrammarDocument`; this module converts offsets to protocol positions and wires the requests.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from grammarkit import __version__
from grammarkit.authoring.document import DocumentHistory, Edit, GrammarDocument
from grammarkit.diagnostics import Diagnostic, Severity
from grammarkit.ebnf.ast import Span

DEBOUNCE_SECONDS = 0.01
"""Diagnostics run this long after the first change of a burst, and then for the latest text.

Changes that arrive while diagnostics are waiting join them; changes that arrive while they are
computed (the server is busy: they queue) are taken by the next run, which then starts at once.
So a burst (a paste, key repeat at ~30 ms, one change per character of a completion) costs at
most one run more than it needs, and a single edit waits only for the work itself, which
:class:`~grammarkit.authoring.document.DocumentHistory` keeps to the rules the edit touched
plus the whole-grammar lint rules: 40-95 ms of CPU for a 1,000-line grammar
(``benchmarks/lsp_latency.py``), within the 200 ms an editor user perceives as immediate.
"""

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
}


class GrammarLanguageServer(LanguageServer):
    """The server: a pygls ``LanguageServer`` that keeps a :class:`GrammarDocument` per URI."""

    def __init__(self) -> None:
        super().__init__("grammarkit", __version__)
        self._documents: dict[str, tuple[int | None, GrammarDocument]] = {}
        self._histories: dict[str, DocumentHistory] = {}
        self._pending: dict[str, asyncio.Task[None]] = {}

    def grammar(self, uri: str) -> tuple[TextDocument, GrammarDocument]:
        """The open document and its analysis (recomputed only when its text changed)."""
        text_document = self.workspace.get_text_document(uri)
        cached = self._documents.get(uri)
        if cached is None or cached[0] != text_document.version \
                or cached[1].text != text_document.source:
            history = self._histories.setdefault(uri, DocumentHistory())
            cached = (text_document.version,
                      GrammarDocument(text_document.source, text_document.path, history=history))
            self._documents[uri] = cached
        return text_document, cached[1]

    def schedule_diagnostics(self, uri: str, delay: float = DEBOUNCE_SECONDS) -> None:
        """Publish diagnostics for ``uri`` after ``delay``; a run still waiting takes this
        change too (it reads the document when it starts)."""
        pending = self._pending.get(uri)
        if pending is not None and not pending.done():
            return
        self._pending[uri] = asyncio.get_running_loop().create_task(self._publish(uri, delay))

    async def _publish(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        text_document, document = self.grammar(uri)
        diagnostics = [_diagnostic(text_document, d) for d in document.diagnostics]
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=text_document.version, diagnostics=diagnostics))

    def forget(self, uri: str) -> None:
        """Drop what is kept for a closed document, and clear its diagnostics."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._documents.pop(uri, None)
        self._histories.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


server = GrammarLanguageServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: GrammarLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule_diagnostics(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: GrammarLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule_diagnostics(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: GrammarLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.schedule_diagnostics(params.text_document.uri, delay=0)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: GrammarLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: GrammarLanguageServer, params: types.DocumentFormattingParams
               ) -> list[types.TextEdit] | None:
    text_document, document = ls.grammar(params.text_document.uri)
    formatted = document.formatted()
    if formatted is None or formatted == document.text:
        return None
    return [_text_edit(text_document, Edit(0, len(document.text), formatted))]


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: GrammarLanguageServer, params: types.DefinitionParams
               ) -> types.Location | None:
    text_document, document = ls.grammar(params.text_document.uri)
    name = document.name_at(text_document.offset_at_position(params.position))
    span = document.definitions.get(name) if name is not None else None
    if span is None:
        return None
    return types.Location(uri=params.text_document.uri, range=_range(text_document, span))


@server.feature(types.TEXT_DOCUMENT_REFERENCES)
def references(ls: GrammarLanguageServer, params: types.ReferenceParams
               ) -> list[types.Location] | None:
    text_document, document = ls.grammar(params.text_document.uri)
    name = document.name_at(text_document.offset_at_position(params.position))
    if name is None:
        return None
    spans = document.occurrences(name, params.context.include_declaration)
    return [types.Location(uri=params.text_document.uri, range=_range(text_document, span))
            for span in spans]


@server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: GrammarLanguageServer, params: types.PrepareRenameParams
                   ) -> types.Range | None:
    text_document, document = ls.grammar(params.text_document.uri)
    offset = text_document.offset_at_position(params.position)
    name = document.name_at(offset)
    if name is None:
        return None
    span = next(s for s in document.occurrences(name) if s.start <= offset <= s.end)
    return _range(text_document, span)


@server.feature(types.TEXT_DOCUMENT_RENAME)
def rename(ls: GrammarLanguageServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
    text_document, document = ls.grammar(params.text_document.uri)
    offset = text_document.offset_at_position(params.position)
    try:
        edits = document.rename(offset, params.new_name)
    except ValueError as exc:
        raise _invalid_params(str(exc)) from None
    if edits is None:
        return None
    return types.WorkspaceEdit(changes={
        params.text_document.uri: [_text_edit(text_document, edit) for edit in edits]})


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: GrammarLanguageServer, params: types.HoverParams) -> types.Hover | None:
    text_document, document = ls.grammar(params.text_document.uri)
    text = document.hover(text_document.offset_at_position(params.position))
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


@server.feature(types.TEXT_DOCUMENT_COMPLETION,
                types.CompletionOptions(trigger_characters=[" ", "|", "("]))
def completion(ls: GrammarLanguageServer, params: types.CompletionParams
               ) -> types.CompletionList:
    _, document = ls.grammar(params.text_document.uri)
    kinds = {"rule": types.CompletionItemKind.Reference,
             "macro": types.CompletionItemKind.Function}
    items = [types.CompletionItem(label=label, kind=kinds[kind], detail=kind)
             for label, kind in document.completions()]
    return types.CompletionList(is_incomplete=False, items=items)


@server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbols(ls: GrammarLanguageServer, params: types.DocumentSymbolParams
                     ) -> list[types.DocumentSymbol]:
    text_document, document = ls.grammar(params.text_document.uri)
    symbols = []
    for rule in document.rules:
        if rule.span is None or rule.name_span is None:
            continue
        symbols.append(types.DocumentSymbol(
            name=rule.name, kind=types.SymbolKind.Function,
            range=_range(text_document, rule.span),
            selection_range=_range(text_document, rule.name_span)))
    return symbols


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
def code_actions(ls: GrammarLanguageServer, params: types.CodeActionParams
                 ) -> list[types.CodeAction]:
    text_document, document = ls.grammar(params.text_document.uri)
    start = text_document.offset_at_position(params.range.start)
    end = text_document.offset_at_position(params.range.end)
    actions = []
    for fix in document.fixes():
        span = fix.diagnostic.span
        if span is None or span.end < start or span.start > end:
            continue
        actions.append(types.CodeAction(
            title=fix.title, kind=types.CodeActionKind.QuickFix,
            diagnostics=[_diagnostic(text_document, fix.diagnostic)],
            is_preferred=True,
            edit=types.WorkspaceEdit(changes={params.text_document.uri: [
                _text_edit(text_document, edit) for edit in fix.edits]})))
    return actions


def _range(text_document: TextDocument, span: Span) -> types.Range:
    return types.Range(start=text_document.client_position_at_offset(span.start),
                       end=text_document.client_position_at_offset(span.end))


def _text_edit(text_document: TextDocument, edit: Edit) -> types.TextEdit:
    return types.TextEdit(range=_range(text_document, Span(edit.start, edit.end)),
                          new_text=edit.new_text)


def _diagnostic(text_document: TextDocument, diagnostic: Diagnostic) -> types.Diagnostic:
    span = diagnostic.span or Span(0, 0)
    where = _range(text_document, span)
    related = None
    if diagnostic.hint:
        related = [types.DiagnosticRelatedInformation(
            location=types.Location(uri=text_document.uri, range=where),
            message=f"help: {diagnostic.hint}")]
    return types.Diagnostic(
        range=where, message=diagnostic.message, code=diagnostic.code, source="grammarkit",
        severity=_SEVERITIES.get(diagnostic.severity, types.DiagnosticSeverity.Information),
        related_information=related)


def _invalid_params(message: str) -> Any:
    from pygls.exceptions import JsonRpcInvalidParams

    return JsonRpcInvalidParams(message)


def run() -> None:
    """Serve over standard input and output until the client exits."""
    server.start_io()
