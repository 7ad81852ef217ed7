"""SARIF 2.1.0, for GitHub code scanning and SARIF viewers.

One run. `tool.driver.rules` describes every rule that has a result: its
summary as the short description, the first paragraph of its explanation as
the full description, and the documentation `tfrewrite rule CODE` prints as
its help (text and Markdown). Each result points at its region; each finding
with a fix carries it as `fixes[0]`, one `artifactChange` whose `replacements`
hold every edit of the fix (an added import and the call that needs it are
one fix). Columns count UTF-16 code
units, SARIF's default (`run.columnKind`); regions end exclusively, as ours do.
Files tfrewrite could not read or parse become error notifications of the
invocation, which then did not execute successfully.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any
from urllib.parse import quote

from tfrewrite import __version__
from tfrewrite import rules as rule_registry
from tfrewrite.findings import Applicability, FileError, Finding, Position
from tfrewrite.report.base import ReportContext, register
from tfrewrite.report.columns import SourceLines
from tfrewrite.workspace.diffs import display_path

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SARIF_VERSION = "2.1.0"


def artifact_uri(path: str) -> str:
    """A relative URI (from the current folder, `/`-separated, escaped), the
    form code scanning resolves against the repository checkout."""
    return quote(display_path(path), safe="/")


def _region(start: Position, end: Position, lines: SourceLines) -> dict[str, int]:
    return {
        "startLine": start.line,
        "startColumn": lines.utf16_column(start),
        "endLine": end.line,
        "endColumn": lines.utf16_column(end),
    }


def first_paragraph(markdown: str) -> str:
    """The first paragraph of a rule's explanation, headings left out: the
    rule's full description, shown at the top of an alert (the whole
    documentation is the help, shown below it)."""
    for paragraph in textwrap.dedent(markdown).strip().split("\n\n"):
        text = "\n".join(line for line in paragraph.splitlines() if not line.startswith("#"))
        if text.strip():
            return text.strip()
    return ""


def _rule_descriptor(code: str, findings: list[Finding]) -> dict[str, Any]:
    rule = rule_registry.RULES_BY_CODE.get(code)  # loaded on first use
    if rule is None:  # a finding from a rule that is not registered here
        name = next(f.rule_name for f in findings if f.code == code)
        return {"id": code, "name": name, "defaultConfiguration": {"level": "warning"}}
    doc = rule.render_doc()
    description = first_paragraph(rule.explanation) or rule.summary
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": description, "markdown": description},
        "help": {"text": doc, "markdown": doc},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"fixApplicability": rule.fix_applicability.value},
    }


def _fix(finding: Finding, uri: str, lines: SourceLines) -> dict[str, Any] | None:
    fix = finding.fix
    if fix is None or not fix.edits:
        return None
    description = fix.message
    if fix.applicability is Applicability.UNSAFE:
        description += " (unsafe: applied by `tfrewrite fix --unsafe-fixes`)"
    replacements = [
        {
            "deletedRegion": _region(edit.start, edit.end, lines),
            "insertedContent": {"text": edit.content},
        }
        for edit in sorted(fix.edits, key=lambda e: (e.start, e.end))
    ]
    return {
        "description": {"text": description},
        "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": replacements}],
        "properties": {"applicability": fix.applicability.value},
    }


def _result(finding: Finding, rule_index: int, lines: SourceLines) -> dict[str, Any]:
    uri = artifact_uri(finding.path)
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": uri},
                    "region": _region(finding.start, finding.end, lines),
                }
            }
        ],
    }
    fix = _fix(finding, uri, lines)
    if fix is not None:
        result["fixes"] = [fix]
    return result


def _notification(error: FileError, lines: SourceLines) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": artifact_uri(error.path)}}
    if error.line is not None:
        region: dict[str, int] = {"startLine": error.line}
        if error.column is not None:
            region["startColumn"] = lines.utf16_column(Position(error.line, error.column))
        location["region"] = region
    return {
        "level": "error",
        "message": {"text": error.message},
        "locations": [{"physicalLocation": location}],
    }


def sarif_log(
    findings: list[Finding], errors: list[FileError], ctx: ReportContext
) -> dict[str, Any]:
    """The SARIF log as a JSON-ready dictionary."""
    codes = sorted({f.code for f in findings})
    rule_index = {code: i for i, code in enumerate(codes)}
    lines: dict[str, SourceLines] = {}

    def lines_of(path: str) -> SourceLines:
        if path not in lines:
            lines[path] = SourceLines(ctx.sources.get(path))
        return lines[path]

    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "tfrewrite",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_rule_descriptor(code, findings) for code in codes],
            }
        },
        "invocations": [
            {
                "executionSuccessful": not errors,
                "toolExecutionNotifications": [_notification(e, lines_of(e.path)) for e in errors],
            }
        ],
        "columnKind": "utf16CodeUnits",
        "results": [_result(f, rule_index[f.code], lines_of(f.path)) for f in findings],
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


@register("sarif", with_edits=True)
def render_sarif(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    return json.dumps(sarif_log(findings, errors, ctx), indent=2, ensure_ascii=False)
