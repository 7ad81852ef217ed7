"""`tfrewrite server`: a Language Server over standard input and output.

An editor gets tfrewrite's findings as diagnostics while the user types, each
fix as a quick fix (safe fixes are marked preferred, unsafe ones say so), a
"fix all" source action, and the rule's documentation on hover. Settings come
from the `pyproject.toml` nearest the document, as on the command line.

Diagnostics come first: a check computes no fix's edits, and the quick fixes
of a finding are computed when the editor asks for code actions on it. A
burst of edits is checked once, after the typing pauses (`DEBOUNCE_SECONDS`).

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
from dataclasses import dataclass
from pathlib import Path

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

SOURCE = "tfrewrite"
FIX_ALL = "source.fixAll.tfrewrite"
_CODE_RE = re.compile(r"TFR\d{3}")
# How long the text must rest after an edit before it is checked: typing
# sends an edit per keystroke, and only the last one's findings matter.
DEBOUNCE_SECONDS = 0.15


@dataclass(frozen=True)
class _Checked:
    version: int | None
    findings: list[Finding]
    with_edits: bool = False  # the fixes' edits computed (for quick fixes)


class TfrewriteServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(SOURCE, __version__)
        self.checked: dict[str, _Checked] = {}
        self.latest_edit: dict[str, int] = {}  # uri -> version of the newest edit

    def settings_for(self, path: Path) -> Settings:
        try:
            return load_settings(find_config(path.parent))
        except ConfigError as err:
            self.window_show_message(
                types.ShowMessageParams(types.MessageType.Error, f"tfrewrite: {err}")
            )
            return load_settings(None)

    def run_rules(  # type: ignore[no-untyped-def]
        self,
        document: TextDocument,
        fix: bool,
        unsafe: bool | None = None,
        want_edits: bool = False,
    ):
        """Check (or fix) the editor's text of `document` with its settings;
        with `want_edits`, each finding's fix carries its edits."""
        path = Path(to_fs_path(document.uri) or document.uri)
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
        source = document.source
        index = build_index(source, str(path), module_name_for(path, settings.root))
        if index.syntax_error is not None:
            return None
        traced = compute_facts([index]).for_path(str(path))
        return process_file(FileJob(InputFile(str(path), source), index, traced, options))

    def check(self, document: TextDocument, want_edits: bool = False) -> _Checked:
        result = self.run_rules(document, fix=False, want_edits=want_edits)
        findings = [] if result is None or result.error is not None else result.findings
        checked = _Checked(document.version, findings, want_edits)
        self.checked[document.uri] = checked
        return checked

    def with_edits(self, document: TextDocument) -> _Checked:
        """The document's findings with their fixes' edits, checked again
        only when the last check left the edits out or the text changed."""
        checked = self.checked.get(document.uri)
        if checked is not None and checked.version == document.version and checked.with_edits:
            return checked
        if checked is not None and checked.version == document.version:
            if not any(f.fix is not None for f in checked.findings):
                return checked
        return self.check(document, want_edits=True)

    def publish(self, document: TextDocument) -> None:
        findings = self.check(document).findings
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=document.uri,
                version=document.version,
                diagnostics=[_diagnostic(document, f) for f in findings],
            )
        )


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
def did_open(ls: TfrewriteServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.publish(ls.workspace.get_text_document(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: TfrewriteServer, params: types.DidChangeTextDocumentParams) -> None:
    uri, version = params.text_document.uri, params.text_document.version
    ls.latest_edit[uri] = version
    await asyncio.sleep(DEBOUNCE_SECONDS)
    if ls.latest_edit.get(uri) != version:
        return  # a newer edit came while the text rested: its own call checks
    ls.publish(ls.workspace.get_text_document(uri))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: TfrewriteServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.publish(ls.workspace.get_text_document(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: TfrewriteServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.checked.pop(params.text_document.uri, None)
    ls.latest_edit.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
    )


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL]),
)
def code_action(ls: TfrewriteServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    checked = ls.with_edits(document)
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
        result = ls.run_rules(document, fix=True)
        if result is not None and result.fixed_source not in (None, document.source):
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
