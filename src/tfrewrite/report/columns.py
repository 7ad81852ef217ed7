"""Column units for report formats, and the suggestion each fix becomes.

Findings and text edits count columns in code points (1-based, end exclusive).
SARIF counts UTF-16 code units by default and reviewdog counts UTF-8 bytes, so
`😀` is one column for tfrewrite, two for SARIF and four for reviewdog. The
conversion needs the text of the line, which `ReportContext.sources` holds;
without it the code-point column is the best answer there is.

Lines are split on `\\n` only, as `tfrewrite.edits` does, so positions of
findings and edits mean the same thing here (a `\\r` of a `\\r\\n` ending stays
at the end of its line, after every column a finding can name).
"""

from __future__ import annotations

from dataclasses import dataclass

from tfrewrite.edits import apply_text_edits
from tfrewrite.findings import Applicability, Finding, Position, TextEdit


class SourceLines:
    """One file's lines, for converting code-point columns to other units."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self._lines = source.split("\n") if source is not None else None

    def _prefix(self, position: Position) -> str | None:
        if self._lines is None or not 1 <= position.line <= len(self._lines):
            return None
        return self._lines[position.line - 1][: max(position.column - 1, 0)]

    def utf16_column(self, position: Position) -> int:
        """1-based column in UTF-16 code units (SARIF's default unit)."""
        prefix = self._prefix(position)
        if prefix is None:
            return position.column
        return len(prefix.encode("utf-16-le")) // 2 + 1

    def utf8_column(self, position: Position) -> int:
        """1-based column in UTF-8 bytes (reviewdog's unit)."""
        prefix = self._prefix(position)
        if prefix is None:
            return position.column
        return len(prefix.encode("utf-8")) + 1

    def offset(self, position: Position) -> int:
        """Code-point offset of a position in the source (which must be known)."""
        assert self.source is not None and self._lines is not None
        if position.line > len(self._lines):
            return len(self.source)
        before = sum(len(text) + 1 for text in self._lines[: position.line - 1])
        return before + position.column - 1


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
      sys`), or whose suggestions would overlap, become one suggestion carried
      by the first of their findings; the others say which finding carries it.
    - A fix whose edits overlap a different edit of an earlier fix gets no
      suggestion: `tfrewrite fix` applies it in a later round, on the result.
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
                    f"{findings[clash].start.line}; `tfrewrite fix` applies it in a later round"
                )
        _plan_group(findings, kept, lines, plans)
    return plans


def _edits_of(findings: list[Finding], group: list[int]) -> list[TextEdit]:
    """The distinct edits of the fixes of `group` (a shared import counts once)."""
    edits = {e for i in group for e in findings[i].fix.edits}  # type: ignore[union-attr]
    return sorted(edits, key=lambda e: (e.start, e.end))


def _overlapping_groups(findings: list[Finding], candidates: list[int]) -> list[list[int]]:
    """Partition `candidates` so that no two groups' regions overlap."""
    groups = [[i] for i in candidates]
    merged = True
    while merged:
        merged = False
        spans = [_span(_edits_of(findings, g)) for g in groups]
        for a in range(len(groups)):
            b = next((b for b in range(a + 1, len(groups)) if _overlap(spans[a], spans[b])), None)
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
