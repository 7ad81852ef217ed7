"""GitHub Actions workflow commands: one `::warning` per finding, which
GitHub shows as an annotation on the pull request's changed line.

Escaping follows the Actions toolkit: the message (the command's data) escapes
`%`, `\\r` and `\\n`; property values also escape `:` and `,`, which would
otherwise end the value. Paths are relative to the current folder (the
workspace, when run from the checkout's root), where GitHub looks for them.
GitHub keeps columns only for a single-line range, so a finding spanning
several lines is annotated by lines alone.
"""

from __future__ import annotations

from tfrewrite.findings import FileError, Finding
from tfrewrite.report.base import ReportContext, register
from tfrewrite.workspace.diffs import display_path


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _finding_properties(finding: Finding) -> list[str]:
    props = [f"file={escape_property(display_path(finding.path))}", f"line={finding.start.line}"]
    same_line = finding.start.line == finding.end.line
    if same_line:
        props.append(f"col={finding.start.column}")
    props.append(f"endLine={finding.end.line}")
    if same_line:
        props.append(f"endColumn={finding.end.column}")
    props.append(f"title={escape_property(f'tfrewrite ({finding.code})')}")
    return props


@register("github")
def render_github(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    lines = []
    for error in errors:
        props = f"file={escape_property(display_path(error.path))}"
        if error.line is not None:
            props += f",line={error.line}"
            if error.column is not None:
                props += f",col={error.column}"
        props += f",title={escape_property('tfrewrite (error)')}"
        lines.append(f"::error {props}::{escape_data(error.message)}")
    for f in findings:
        props = ",".join(_finding_properties(f))
        lines.append(f"::warning {props}::{escape_data(f'{f.code} {f.message}')}")
    return "\n".join(lines)
