"""GitHub Actions workflow commands: one `::warning` per finding, which
GitHub shows as an annotation on the pull request's changed line."""

from __future__ import annotations

from tfrewrite.findings import FileError, Finding
from tfrewrite.report import ReportContext, register


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@register("github")
def render_github(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    lines = []
    for error in errors:
        props = f"file={escape_property(error.path)}"
        if error.line is not None:
            props += f",line={error.line}"
            if error.column is not None:
                props += f",col={error.column}"
        props += f",title={escape_property('tfrewrite (error)')}"
        lines.append(f"::error {props}::{escape_data(error.message)}")
    for f in findings:
        props = ",".join(
            [
                f"file={escape_property(f.path)}",
                f"line={f.start.line}",
                f"col={f.start.column}",
                f"endLine={f.end.line}",
                f"endColumn={f.end.column}",
                f"title={escape_property(f'tfrewrite ({f.code})')}",
            ]
        )
        lines.append(f"::warning {props}::{escape_data(f'{f.code} {f.message}')}")
    return "\n".join(lines)
