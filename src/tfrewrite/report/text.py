"""Human formats: `text` (Ruff's full format, with the source line and a
caret under the finding) and `concise` (one line per finding)."""

from __future__ import annotations

from collections import Counter

from tfrewrite.findings import Applicability, FileError, Finding
from tfrewrite.report.base import ReportContext, register

_BOLD, _RED, _CYAN, _DIM, _RESET = "\x1b[1m", "\x1b[31m", "\x1b[36m", "\x1b[2m", "\x1b[0m"


def _style(text: str, code: str, ctx: ReportContext) -> str:
    return f"{code}{text}{_RESET}" if ctx.color else text


def _fix_marker(finding: Finding, ctx: ReportContext) -> str:
    if finding.fix is None:
        return ""
    if finding.fix.applicability is Applicability.SAFE or ctx.unsafe_fixes:
        return "[*] "
    return ""


def _headline(finding: Finding, ctx: ReportContext) -> str:
    location = _style(f"{finding.location}:", _BOLD, ctx)
    code = _style(finding.code, _RED + _BOLD, ctx)
    return f"{location} {code} {_fix_marker(finding, ctx)}{finding.message}"


def _snippet(finding: Finding, ctx: ReportContext) -> list[str]:
    lines = ctx.source_lines(finding)
    if lines is None:
        return []
    if not 1 <= finding.start.line <= len(lines):
        return []
    number = str(finding.start.line)
    gutter = " " * len(number)
    text = lines[finding.start.line - 1].expandtabs(1)
    start = finding.start.column - 1
    end = finding.end.column - 1 if finding.end.line == finding.start.line else len(text)
    width = max(1, end - start)
    out = [
        f"{gutter} |",
        f"{number} | {text}",
        f"{gutter} | {' ' * start}{_style('^' * width, _RED, ctx)} {finding.code}",
        f"{gutter} |",
    ]
    if finding.fix is not None:
        # An unsafe fix's message usually says why ("(unsafe: ...)"); say it once.
        safe = finding.fix.applicability is Applicability.SAFE
        kind = "" if safe or "(unsafe" in finding.fix.message else " (unsafe)"
        out.append(f"{gutter} = help: {finding.fix.message}{kind}")
    return out


@register("text")
def render_text(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    out: list[str] = []
    for error in errors:
        out.append(_style("error: ", _RED + _BOLD, ctx) + error.describe())
    for finding in findings:
        out.append(_headline(finding, ctx))
        out.extend(_snippet(finding, ctx))
        out.append("")
    if ctx.show_fixes and ctx.fixes_applied:
        out.append(render_fixes(ctx.fixes_applied))
    out.append(summary(findings, errors, ctx))
    return "\n".join(out)


@register("concise")
def render_concise(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    out = [f"error: {e.describe()}" for e in errors]
    out.extend(_headline(f, ctx) for f in findings)
    if ctx.show_fixes and ctx.fixes_applied:
        out.append(render_fixes(ctx.fixes_applied))
    out.append(summary(findings, errors, ctx))
    return "\n".join(out)


def render_fixes(fixed: list[Finding]) -> str:
    """`--show-fixes`: what was fixed, per file."""
    by_file: dict[str, Counter[str]] = {}
    for finding in fixed:
        by_file.setdefault(finding.path, Counter())[finding.code] += 1
    lines = [f"Fixed {len(fixed)} finding{'s' if len(fixed) != 1 else ''}:"]
    for path, counts in sorted(by_file.items()):
        lines.append(f"- {path}:")
        for code, count in sorted(counts.items()):
            lines.append(f"    {count} x {code}")
    return "\n".join(lines) + "\n"


def summary(findings: list[Finding], errors: list[FileError], ctx: ReportContext) -> str:
    """The one summary line: findings, files, fixable, failed."""
    parts = []
    files = len({f.path for f in findings})
    if ctx.fix_mode and ctx.fixes_applied:
        n = len(ctx.fixes_applied)
        parts.append(f"Fixed {n} finding{'s' if n != 1 else ''}")
    if findings:
        n = len(findings)
        noun = "finding" if n == 1 else "findings"
        word = "remaining" if ctx.fix_mode else "in"
        parts.append(
            f"Found {n} {noun} {word} {files} file{'s' if files != 1 else ''}"
            if not ctx.fix_mode
            else f"{n} {noun} remaining in {files} file{'s' if files != 1 else ''}"
        )
        safe = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.SAFE)
        unsafe = sum(1 for f in findings if f.fix and f.fix.applicability is Applicability.UNSAFE)
        if ctx.unsafe_fixes:
            safe, unsafe = safe + unsafe, 0
        if safe and not ctx.fix_mode:
            command = "tfrewrite fix --unsafe-fixes" if ctx.unsafe_fixes else "tfrewrite fix"
            parts.append(f"{safe} fixable with `{command}`")
        if unsafe:
            parts.append(f"{unsafe} more with `--unsafe-fixes`")
    elif not errors and not (ctx.fix_mode and ctx.fixes_applied):
        parts.append(
            f"All checks passed ({ctx.files_checked} file{'s' if ctx.files_checked != 1 else ''})"
        )
    if errors:
        n = len(errors)
        parts.append(f"{n} file{'s' if n != 1 else ''} failed")
    return "; ".join(parts) + "."


def render_statistics(findings: list[Finding], unsafe_fixes: bool = False) -> str:
    """`--statistics`: count per rule, as Ruff does; `[*]` marks a rule with a
    fix this run would apply (safe, or unsafe under `--unsafe-fixes`)."""
    counts: Counter[str] = Counter(f.code for f in findings)
    names = {f.code: f.rule_name for f in findings}
    applicable = {Applicability.SAFE, *([Applicability.UNSAFE] if unsafe_fixes else [])}
    fixable = {f.code for f in findings if f.fix is not None and f.fix.applicability in applicable}
    width = max((len(str(c)) for c in counts.values()), default=1)
    return "\n".join(
        f"{count:>{width}}\t{code}\t{'[*] ' if code in fixable else '    '}{names[code]}"
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
