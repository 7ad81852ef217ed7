"""reviewdog's diagnostic format: `rdjsonl` (one `Diagnostic` per line) and
`rdjson` (one `DiagnosticResult`), so that

    tfrewrite check --output-format rdjsonl | reviewdog -f=rdjsonl -reporter=github-pr-review

posts each finding as a review comment with its fix as a suggested change.

Positions are 1-based lines and 1-based columns in UTF-8 bytes, end exclusive.
A diagnostic carries a suggestion only for a fix that `tfrewrite fix` with the
same `--unsafe-fixes` setting would apply, so accepting every suggestion gives
what `tfrewrite fix` writes (when its fixes all apply in one round: a fix that
only applies once another one did shows up at the next check). Each
suggestion stands alone and none overlap (see `plan_suggestions`): a fix that
edits several places is one suggestion over the region from its first edit to
its last, fixes that share an edit (the same added import) are one suggestion
carried by the first of their findings, and each message says so. reviewdog
posts a diagnostic's suggestion on the comment it makes for it, over the
suggestion's lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tfrewrite.findings import Applicability, FileError, Finding, Position, TextEdit
from tfrewrite.report.base import ReportContext, register
from tfrewrite.report.columns import SourceLines
from tfrewrite.report.edits import apply_text_edits
from tfrewrite.workspace.diffs import display_path

SOURCE = {"name": "tfrewrite"}


# -- suggestions ------------------------------------------------------------------


def fix_is_applicable(finding: Finding, unsafe_fixes: bool) -> bool:
    """Whether `tfrewrite fix` (with or without `--unsafe-fixes`) would apply
    this finding's fix: the fixes a suggestion may offer."""
    fix = finding.fix
    if fix is None or not fix.edits:
        return False
    return fix.applicability is Applicability.SAFE or (
        fix.applicability is Applicability.UNSAFE and unsafe_fixes
    )


Span = tuple[Position, Position]


def _overlap(a: Span, b: Span) -> bool:
    """Whether two replacements cannot be applied independently: their ranges
    intersect, or both start at the same place (two insertions there, or an
    insertion at the start of a replacement, have no defined order)."""
    return a[0] == b[0] or (a[0] < b[1] and b[0] < a[1])


@dataclass(frozen=True)
class Suggestion:
    """One replacement a reviewer can accept on its own (code points)."""

    start: Position
    end: Position
    text: str
    edits: int  # distinct text edits it applies
    findings: tuple[int, ...]  # indices of the findings it fixes, the carrier first


@dataclass(frozen=True)
class SuggestionPlan:
    """What one finding gets: a suggestion (only the first finding of those it
    fixes carries it) and a note to append to its message."""

    suggestion: Suggestion | None = None
    note: str = ""


def _span(edits: list[TextEdit]) -> Span:
    return min(e.start for e in edits), max(e.end for e in edits)


def _clashes(edits: set[TextEdit], other: Finding) -> bool:
    """Whether some edit differs from, and overlaps, an edit of `other`'s fix
    (an identical edit, such as the same added import, is shared, not a clash)."""
    assert other.fix is not None
    return any(
        e != k and _overlap((e.start, e.end), (k.start, k.end))
        for e in edits
        for k in other.fix.edits
    )


def _lines(span: Span) -> str:
    first, last = span[0].line, span[1].line
    return f"line {first}" if first == last else f"lines {first}-{last}"


def plan_suggestions(
    findings: list[Finding], lines: SourceLines, unsafe_fixes: bool
) -> list[SuggestionPlan]:
    """Turn the fixes of one file's findings into suggestions that each stand
    alone and never overlap, so accepting any of them leaves the fixed code a
    `tfrewrite fix` would write for those findings (valid Python), and
    accepting all of them gives exactly what `tfrewrite fix` writes.

    - A fix with one edit is that edit.
    - A fix with several edits (an added import and the call that needs it) is
      one replacement from its first edit to its last, holding the fixed text:
      one suggestion per edit would let a reviewer accept the call without
      its import.
    - Fixes that share an edit (two `print` rewrites that both add `import
      sys`), or whose regions share a line, become one suggestion carried by
      the first of their findings; the others say which finding carries it.
    - A fix whose edits overlap a different edit of an earlier fix gets no
      suggestion (`tfrewrite fix` also applies only one of two overlapping
      fixes per round, then runs the rules again on the result).
    """
    plans = [SuggestionPlan() for _ in findings]
    candidates = []
    for i, finding in enumerate(findings):
        fix = finding.fix
        if fix_is_applicable(finding, unsafe_fixes):
            candidates.append(i)
        elif fix is not None and fix.applicability is Applicability.UNSAFE and fix.edits:
            plans[i] = SuggestionPlan(note="an unsafe fix is available with `--unsafe-fixes`")
    for group in _overlapping_groups(findings, candidates):
        kept: list[int] = []
        for i in group:
            own = set(findings[i].fix.edits)  # type: ignore[union-attr]
            clash = next((j for j in kept if _clashes(own, findings[j])), None)
            if clash is None:
                kept.append(i)
            else:
                plans[i] = SuggestionPlan(
                    note=f"no suggestion: its fix overlaps the fix on line "
                    f"{findings[clash].start.line}; run `tfrewrite fix` once that one is in"
                )
        _plan_group(findings, kept, lines, plans)
    return plans


def _edits_of(findings: list[Finding], group: list[int]) -> list[TextEdit]:
    """The distinct edits of the fixes of `group` (a shared import counts once)."""
    edits = {e for i in group for e in findings[i].fix.edits}  # type: ignore[union-attr]
    return sorted(edits, key=lambda e: (e.start, e.end))


def _lines_meet(a: Span, b: Span) -> bool:
    """Whether two regions touch a common line. Review tools turn a suggestion
    into a replacement of whole lines (the line of its end included, even at
    column 1), and two suggestions on a common line conflict once one is
    accepted."""
    return a[0].line <= b[1].line and b[0].line <= a[1].line


def _overlapping_groups(findings: list[Finding], candidates: list[int]) -> list[list[int]]:
    """Partition `candidates` so that no two groups' regions share a line
    (fixes that share an edit, such as one added import, always do)."""
    groups = [[i] for i in candidates]
    merged = True
    while merged:
        merged = False
        spans = [_span(_edits_of(findings, g)) for g in groups]
        for a in range(len(groups)):
            b = next(
                (b for b in range(a + 1, len(groups)) if _lines_meet(spans[a], spans[b])), None
            )
            if b is not None:
                groups[a] = sorted(groups[a] + groups.pop(b))
                merged = True
                break
    return groups


def _plan_group(
    findings: list[Finding], kept: list[int], lines: SourceLines, plans: list[SuggestionPlan]
) -> None:
    """One suggestion for the fixes of `kept`, carried by its first finding."""
    edits = _edits_of(findings, kept)
    start, end = _span(edits)
    if len(edits) == 1:
        text = edits[0].content
    elif lines.source is None:
        for i in kept:
            plans[i] = SuggestionPlan(
                note="no suggestion: the fix edits several places and the source is unknown"
            )
        return
    else:
        source = lines.source
        fixed = apply_text_edits(source, edits)
        text = fixed[lines.offset(start) : len(fixed) - (len(source) - lines.offset(end))]
    carrier, others = kept[0], kept[1:]
    notes = []
    if len(edits) > 1:
        where = _lines((start, end))
        notes.append(f"the suggested change covers {where} and makes {len(edits)} edits together")
    if others:
        plural = "s" if len(others) > 1 else ""
        where = ", ".join(str(findings[i].start.line) for i in others)
        notes.append(f"it also fixes the finding{plural} on line{plural} {where}")
    suggestion = Suggestion(start, end, text, len(edits), tuple(kept))
    plans[carrier] = SuggestionPlan(suggestion, "; ".join(notes))
    carrier_line = findings[carrier].start.line
    for i in others:
        plans[i] = SuggestionPlan(
            note=f"fixed by the suggested change on the finding at line {carrier_line}"
        )


# -- the format -------------------------------------------------------------------


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
