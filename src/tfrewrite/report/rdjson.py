"""reviewdog's diagnostic format: `rdjsonl` (one `Diagnostic` per line) and
`rdjson` (one `DiagnosticResult`), so that

    tfrewrite check --output-format rdjsonl | reviewdog -f=rdjsonl -reporter=github-pr-review

posts each finding as a review comment with its fix as a suggested change.

Positions are 1-based lines and 1-based columns in UTF-8 bytes, end exclusive.
A diagnostic carries a suggestion only for a fix that `tfrewrite fix` with the
same `--unsafe-fixes` setting would apply, so accepting every suggestion gives
what `tfrewrite fix` writes. Each suggestion stands alone: a fix that edits
several places is offered as one suggestion over the region from its first
edit to its last (see `columns.suggestion_for`), and the message says so;
reviewdog posts one suggestion per comment, over the same lines.
"""

from __future__ import annotations

import json
from typing import Any

from tfrewrite.diffs import display_path
from tfrewrite.findings import Applicability, FileError, Finding, Position
from tfrewrite.report import ReportContext, register
from tfrewrite.report.columns import SourceLines, fix_is_applicable, joint_note, suggestion_for

SOURCE = {"name": "tfrewrite"}


def _position(position: Position, lines: SourceLines) -> dict[str, int]:
    return {"line": position.line, "column": lines.utf8_column(position)}


def _range(start: Position, end: Position, lines: SourceLines) -> dict[str, Any]:
    return {"start": _position(start, lines), "end": _position(end, lines)}


def diagnostic(finding: Finding, lines: SourceLines, unsafe_fixes: bool) -> dict[str, Any]:
    """One finding as a reviewdog `Diagnostic`."""
    message = finding.message
    suggestions = []
    fix = finding.fix
    if fix is not None and fix_is_applicable(finding, unsafe_fixes):
        suggestion = suggestion_for(finding, lines)
        if suggestion is None:
            message += " (no suggestion: the fix edits several places and the source was not available)"
        else:
            suggestions.append(
                {"range": _range(suggestion.start, suggestion.end, lines), "text": suggestion.text}
            )
            if suggestion.joint:
                message += f" ({joint_note(suggestion, fix.edits)})"
            if fix.applicability is Applicability.UNSAFE:
                message += " (unsafe fix: check the behaviour before accepting)"
    elif fix is not None and fix.applicability is Applicability.UNSAFE and fix.edits:
        message += " (an unsafe fix is available with `--unsafe-fixes`)"
    result: dict[str, Any] = {
        "message": message,
        "location": {
            "path": display_path(finding.path),
            "range": _range(finding.start, finding.end, lines),
        },
        "severity": "WARNING",
        "source": SOURCE,
        "code": {"value": finding.code},
    }
    if suggestions:
        result["suggestions"] = suggestions
    return result


def error_diagnostic(error: FileError, lines: SourceLines) -> dict[str, Any]:
    location: dict[str, Any] = {"path": display_path(error.path)}
    if error.line is not None:
        start = {"line": error.line}
        if error.column is not None:
            start["column"] = lines.utf8_column(Position(error.line, error.column))
        location["range"] = {"start": start}
    return {"message": error.message, "location": location, "severity": "ERROR", "source": SOURCE}


def diagnostics(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> list[dict[str, Any]]:
    lines: dict[str, SourceLines] = {}

    def lines_of(path: str) -> SourceLines:
        if path not in lines:
            lines[path] = SourceLines(ctx.sources.get(path))
        return lines[path]

    return [error_diagnostic(e, lines_of(e.path)) for e in errors] + [
        diagnostic(f, lines_of(f.path), ctx.unsafe_fixes) for f in findings
    ]


@register("rdjsonl", with_edits=True)
def render_rdjsonl(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    return "\n".join(json.dumps(d, ensure_ascii=False) for d in diagnostics(findings, errors, ctx))


@register("rdjson", with_edits=True)
def render_rdjson(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    result = {
        "source": SOURCE,
        "severity": "WARNING",
        "diagnostics": diagnostics(findings, errors, ctx),
    }
    return json.dumps(result, indent=2, ensure_ascii=False)
