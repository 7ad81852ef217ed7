"""reviewdog's diagnostic format: `rdjsonl` (one `Diagnostic` per line) and
`rdjson` (one `DiagnosticResult`), so that

    tfrewrite check --output-format rdjsonl | reviewdog -f=rdjsonl -reporter=github-pr-review

posts each finding as a review comment with its fix as a suggested change.

Positions are 1-based lines and 1-based columns in UTF-8 bytes, end exclusive.
A diagnostic carries a suggestion only for a fix that `tfrewrite fix` with the
same `--unsafe-fixes` setting would apply, so accepting every suggestion gives
what `tfrewrite fix` writes. Each suggestion stands alone and none overlap
(see `columns.plan_suggestions`): a fix that edits several places is one
suggestion over the region from its first edit to its last, fixes that share
an edit (the same added import) are one suggestion carried by the first of
their findings, and each message says so. reviewdog posts a diagnostic's
suggestion on the comment it makes for it, over the suggestion's lines.
"""

from __future__ import annotations

import json
from typing import Any

from tfrewrite.diffs import display_path
from tfrewrite.findings import Applicability, FileError, Finding, Position
from tfrewrite.report import ReportContext, register
from tfrewrite.report.columns import SourceLines, SuggestionPlan, plan_suggestions

SOURCE = {"name": "tfrewrite"}


def _position(position: Position, lines: SourceLines) -> dict[str, int]:
    return {"line": position.line, "column": lines.utf8_column(position)}


def _range(start: Position, end: Position, lines: SourceLines) -> dict[str, Any]:
    return {"start": _position(start, lines), "end": _position(end, lines)}


def diagnostic(finding: Finding, plan: SuggestionPlan, lines: SourceLines) -> dict[str, Any]:
    """One finding as a reviewdog `Diagnostic`, with its planned suggestion."""
    message = finding.message
    suggestion = plan.suggestion
    if (
        suggestion is not None
        and finding.fix is not None
        and finding.fix.applicability is Applicability.UNSAFE
    ):
        message += " (unsafe fix: check the behaviour before accepting it)"
    if plan.note:
        message += f" ({plan.note})"
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
    if suggestion is not None:
        result["suggestions"] = [
            {"range": _range(suggestion.start, suggestion.end, lines), "text": suggestion.text}
        ]
    return result


def error_diagnostic(error: FileError, lines: SourceLines) -> dict[str, Any]:
    location: dict[str, Any] = {"path": display_path(error.path)}
    if error.line is not None:
        start = {"line": error.line}
        if error.column is not None:
            start["column"] = lines.utf8_column(Position(error.line, error.column))
        location["range"] = {"start": start}
    return {"message": error.message, "location": location, "severity": "ERROR", "source": SOURCE}


def diagnostics(
    findings: list[Finding], errors: list[FileError], ctx: ReportContext
) -> list[dict[str, Any]]:
    """Errors first, then findings in the order given; suggestions are planned
    per file, over all of that file's findings together."""
    by_path: dict[str, list[int]] = {}
    for i, finding in enumerate(findings):
        by_path.setdefault(finding.path, []).append(i)
    lines = {
        path: SourceLines(ctx.sources.get(path)) for path in {*by_path, *(e.path for e in errors)}
    }
    plans: list[SuggestionPlan] = [SuggestionPlan()] * len(findings)
    for path, indices in by_path.items():
        planned = plan_suggestions([findings[i] for i in indices], lines[path], ctx.unsafe_fixes)
        for i, plan in zip(indices, planned, strict=True):
            plans[i] = plan
    return [error_diagnostic(e, lines[e.path]) for e in errors] + [
        diagnostic(f, plan, lines[f.path]) for f, plan in zip(findings, plans, strict=True)
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
