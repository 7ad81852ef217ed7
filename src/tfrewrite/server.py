"""`tfrewrite server`: a Language Server over standard input and output.

An editor gets tfrewrite's findings as diagnostics while the user types, each
fix as a quick fix (safe fixes are marked preferred, unsafe ones say so), a
"fix all" source action, and the rule's documentation on hover. Settings come
from the `pyproject.toml` nearest the document, as on the command line.

Diagnostics come first: a check computes no fix's edits, and the quick fixes
of a finding are computed when the editor asks for code actions on it.
Checks run on one worker thread, so the server keeps reading the editor's
messages while it checks: an edit made while the text rests is checked at
once, and the edits of a burst that arrive during a check are checked once,
at their newest version, when that check ends (a result an edit has made
stale is not published).

The server checks one document at a time, from the editor's buffer: facts
that need other files (a loss compiled in another module) are those the
command line sees; in the editor, a function is known to run traced from
what its own file shows. Like `check`, it never imports TensorFlow.

Requires the `lsp` extra (`pip install 'tfrewrite[lsp]'`, which brings pygls).
"""

from __future__ import annotations

import asyncio
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from tfrewrite import __version__
from tfrewrite.config import ConfigError, Settings, find_config, load_settings
from tfrewrite.facts.index import build_index, module_name_for
from tfrewrite.facts.project import compute_facts
from tfrewrite.findings import Applicability, Finding
from tfrewrite.pipeline.rule_pass import process_file
from tfrewrite.pipeline.run_options import FileJob, InputFile, RunOptions
from tfrewrite.rules import RULES_BY_CODE, select_rules

if TYPE_CHECKING:
    from collections.abc import Callable

    from tfrewrite.findings import FileResult

SOURCE = "tfrewrite"
FIX_ALL = "source.fixAll.tfrewrite"
_CODE_RE = re.compile(r"TFR\d{3}")


@dataclass(frozen=True)
class _Checked:
    version: int | None
    findings: list[Finding]
    with_edits: bool = False  # the fixes' edits computed (for quick fixes)


@dataclass(frozen=True)
class _Text:
    """A document's text as one version had it: what a check reads, taken
    in the server's thread, since the editor's next edit changes the open
    document in place while the check runs."""

    uri: str
    version: int | None
    source: str

    @classmethod
    def of(cls, document: TextDocument) -> _Text:
        return cls(document.uri, document.version, document.source)


class TfrewriteServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__)
        self.checked: dict[str, _Checked] = {}
        # One thread runs every check, in order: the rules keep per-process
        # state (the last fix rounds), and a check must not hold up the
        # messages that tell the server its result is stale.
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tfrewrite-check")
        self.checking: set[str] = set()  # uris whose newest text a check is on its way to

    async def in_checker(self, work: Callable[[], _Checked | FileResult | None]):  # type: ignore[no-untyped-def]
        """Run `work` on the checking thread and wait for it without
        blocking the server's messages."""
        return await asyncio.get_running_loop().run_in_executor(self.checker, work)

    def settings_for(self, path: Path) -> Settings:
        try:
            return load_settings(find_config(path.parent))
        except ConfigError as err:
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Error, f"tfrewrite: {err}")
            )
            return load_settings(None)

    def run_rules(
        self,
        text: _Text,
        fix: bool,
        unsafe: bool | None = None,
        want_edits: bool = False,
    ) -> FileResult | None:
        """Check (or fix) one version of a document's text with its settings;
        with `want_edits`, each finding's fix carries its edits."""
        path = Path(to_fs_path(text.uri) or text.uri)
        settings = self.settings_for(path)
        rules = select_rules(list(settings.select), list(settings.ignore))
        options = RunOptions(
            rule_codes=tuple(r.code for r in rules),
            root=str(settings.root),
            per_file_ignores=tuple(settings.per_file_ignores.items()),
            fix=fix,
            unsafe_fixes=settings.unsafe_fixes if unsafe is None else unsafe,
            want_edits=want_edits and not fix,
        )
        index = build_index(text.source, str(path), module_name_for(path, settings.root))
        if index.syntax_error is not None:
            return None
        traced = compute_facts([index]).for_path(str(path))
        return process_file(FileJob(InputFile(str(path), text.source), index, traced, options))

    def check(self, text: _Text, want_edits: bool = False) -> _Checked:
        result = self.run_rules(text, fix=False, want_edits=want_edits)
        findings = [] if result is None or result.error is not None else result.findings
        return _Checked(text.version, findings, want_edits)

    async def with_edits(self, document: TextDocument) -> _Checked:
        """The document's findings with their fixes' edits, checked again
        only when the last check left the edits out or the text changed."""
        checked = self.checked.get(document.uri)
        if checked is not None and checked.version == document.version:
            if checked.with_edits or not any(f.fix is not None for f in checked.findings):
                return checked
        text = _Text.of(document)
        checked = await self.in_checker(lambda: self.check(text, want_edits=True))
        if self.workspace.get_text_document(document.uri).version == text.version:
            self.checked[document.uri] = checked
        return checked

    async def publish_latest(self, uri: str) -> None:
        """Check the newest text of `uri` and publish its diagnostics. Edits
        that come while a check runs only mark the text newer: when the
        check ends, the newest version is checked once more, and a result
        an edit has made stale is never published."""
        if uri in self.checking:
            return  # the check under way picks up the newest text when it ends
        self.checking.add(uri)
        try:
            while uri in self.workspace.text_documents:
                text = _Text.of(self.workspace.get_text_document(uri))
                checked = await self.in_checker(lambda text=text: self.check(text))  # type: ignore[misc]
                document = self.workspace.text_documents.get(uri)
                if document is None or document.version != text.version:
                    continue  # closed (the loop ends) or edited meanwhile
                self.checked[uri] = checked
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(
                        uri=uri,
                        version=text.version,
                        diagnostics=[_diagnostic(document, f) for f in checked.findings],
                    )
                )
                return
        finally:
            self.checking.discard(uri)


def _range(document: TextDocument, start_line: int, start_col: int, end_line: int, end_col: int):  # type: ignore[no-untyped-def]
    """An LSP range (0-based, the client's code units) from 1-based code points."""
    server_range = types.Range(
        types.Position(start_line - 1, start_col - 1), types.Position(end_line - 1, end_col - 1)
    )
    return document.position_codec.range_to_client_units(document.lines, server_range)


def _diagnostic(document: TextDocument, finding: Finding) -> types.Diagnostic:
    fixable = ""
    if finding.fix is not None:
        fixable = " (fix available)" if finding.fix.applicability is Applicability.SAFE else ""
    return types.Diagnostic(
        range=_range(
            document, finding.start.line, finding.start.column, finding.end.line, finding.end.column
        ),
        message=finding.message + fixable,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        source=SOURCE,
    )


def _quick_fix(document: TextDocument, finding: Finding) -> types.CodeAction | None:
    fix = finding.fix
    if fix is None or not fix.edits:
        return None
    safe = fix.applicability is Applicability.SAFE
    edits = [
        types.TextEdit(
            _range(document, e.start.line, e.start.column, e.end.line, e.end.column), e.content
        )
        for e in fix.edits
    ]
    return types.CodeAction(
        title=f"{fix.message} ({finding.code}{'' if safe else ', unsafe'})",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[_diagnostic(document, finding)],
        is_preferred=safe,
        edit=types.WorkspaceEdit(changes={document.uri: edits}),
    )


def _overlaps(finding: Finding, selection: types.Range) -> bool:
    start = (finding.start.line - 1, finding.start.column - 1)
    end = (finding.end.line - 1, finding.end.column - 1)
    return not (
        end < (selection.start.line, selection.start.character)
        or start > (selection.end.line, selection.end.character)
    )


def _whole_document(document: TextDocument) -> types.Range:
    lines = document.lines
    end = types.Position(len(lines), 0)
    return types.Range(types.Position(0, 0), end)


server = TfrewriteServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: TfrewriteServer, params: types.DidOpenTextDocumentParams) -> None:
    await ls.publish_latest(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TfrewriteServer, params: types.DidChangeTextDocumentParams) -> None:
    await ls.publish_latest(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: TfrewriteServer, params: types.DidSaveTextDocumentParams) -> None:
    await ls.publish_latest(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TfrewriteServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.checked.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
async def code_action(
    ls: TfrewriteServer, params: types.CodeActionParams
) -> list[types.CodeAction]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    checked = await ls.with_edits(document)
    wanted = params.context.only
    actions: list[types.CodeAction] = []
    if not wanted or types.CodeActionKind.QuickFix in wanted:
        for finding in checked.findings:
            if _overlaps(finding, params.range):
                action = _quick_fix(document, finding)
                if action is not None:
                    actions.append(action)
    if any(f.fix is not None for f in checked.findings) and (
        not wanted or any(FIX_ALL.startswith(k) for k in wanted)
    ):
        text = _Text.of(document)
        result = await ls.in_checker(lambda: ls.run_rules(text, fix=True))
        if result is not None and result.fixed_source not in (None, text.source):
            actions.append(
                types.CodeAction(
                    title="Fix all tfrewrite findings (safe fixes)",
                    kind=FIX_ALL,
                    edit=types.WorkspaceEdit(
                        changes={
                            document.uri: [
                                types.TextEdit(_whole_document(document), result.fixed_source)
                            ]
                        }
                    ),
                )
            )
    return actions


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: TfrewriteServer, params: types.HoverParams) -> types.Hover | None:
    """The rule's documentation, over a finding or over a code (`# noqa: TFR101`)."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    position = params.position
    codes: list[str] = []
    line = document.lines[position.line] if position.line < len(document.lines) else ""
    for match in _CODE_RE.finditer(line):
        if match.start() <= position.character <= match.end():
            codes.append(match.group())
    checked = ls.checked.get(document.uri)
    if not codes and checked is not None:
        point = types.Range(position, position)
        codes = [f.code for f in checked.findings if _overlaps(f, point)]
    docs = [RULES_BY_CODE[c].render_doc() for c in dict.fromkeys(codes) if c in RULES_BY_CODE]
    if not docs:
        return None
    return types.Hover(
        contents=types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(docs))
    )


def main() -> None:
    """Serve until the client says `exit`, closes standard input, or is
    gone: an editor that crashed may leave standard input open (held by
    another of its processes), and the server must not outlive it."""
    import threading

    from tfrewrite.pipeline.workers import exit_with_process

    client = os.getppid()
    if client > 1:  # 1: started already orphaned (a detached launcher)
        threading.Thread(
            target=exit_with_process, args=(client,), name="tfrewrite-client-watch", daemon=True
        ).start()
    try:
        server.start_io()
    except BrokenPipeError:  # the client went while a reply was written
        os._exit(0)
