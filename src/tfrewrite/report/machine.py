"""Machine-readable formats: `json` (one array) and `json-lines` (one object
per line), with every fix, its applicability and its edits, as Ruff's JSON."""

from __future__ import annotations

import json
from typing import Any

from tfrewrite.findings import FileError, Finding
from tfrewrite.report.base import ReportContext, register


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    fix = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.applicability.value,
            "message": finding.fix.message,
            "edits": [
                {
                    "content": e.content,
                    "location": {"row": e.start.line, "column": e.start.column},
                    "end_location": {"row": e.end.line, "column": e.end.column},
                }
                for e in finding.fix.edits
            ],
        }
    return {
        "code": finding.code,
        "name": finding.rule_name,
        "message": finding.message,
        "filename": finding.path,
        "location": {"row": finding.start.line, "column": finding.start.column},
        "end_location": {"row": finding.end.line, "column": finding.end.column},
        "fix": fix,
        "url": None,
        "cell": finding.cell,
    }


def error_to_dict(error: FileError) -> dict[str, Any]:
    return {
        "code": None,
        "name": "file-error",
        "message": error.message,
        "filename": error.path,
        "location": {"row": error.line, "column": error.column},
        "end_location": None,
        "fix": None,
        "url": None,
    }


@register("json", with_edits=True)
def render_json(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    items = [error_to_dict(e) for e in errors] + [finding_to_dict(f) for f in findings]
    return json.dumps(items, indent=2, ensure_ascii=False)


@register("json-lines", with_edits=True)
def render_json_lines(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    items = [error_to_dict(e) for e in errors] + [finding_to_dict(f) for f in findings]
    return "\n".join(json.dumps(item, ensure_ascii=False) for item in items)
