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


@dataclass(frozen=True)
class Suggestion:
    """One replacement a reviewer can accept on its own (code points)."""

    start: Position
    end: Position
    text: str
    joint: bool = False  # covers several edits of one fix and the text between them


def suggestion_for(finding: Finding, lines: SourceLines) -> Suggestion | None:
    """The fix of `finding` as one standalone replacement.

    A fix with one edit is that edit. A fix with several edits (an added import
    and the call that needs it, say) is one replacement of the region from its
    first edit to its last, holding the fixed text: accepting it applies the
    whole fix at once, so the result is exactly what `tfrewrite fix` produces
    for this finding and parses as Python. Splitting such a fix into one
    suggestion per edit would let a reviewer accept the call without its import.
    None when the fix has no edits or the source is unknown.
    """
    if finding.fix is None or not finding.fix.edits:
        return None
    edits = sorted(finding.fix.edits, key=lambda e: (e.start, e.end))
    if len(edits) == 1:
        edit = edits[0]
        return Suggestion(edit.start, edit.end, edit.content)
    if lines.source is None:
        return None
    start, end = edits[0].start, max(e.end for e in edits)
    source = lines.source
    begin, stop = lines.offset(start), lines.offset(end)
    fixed = apply_text_edits(source, edits)
    text = fixed[begin : len(fixed) - (len(source) - stop)]
    return Suggestion(start, end, text, joint=True)


def joint_note(suggestion: Suggestion, edits: tuple[TextEdit, ...]) -> str:
    """What a finding says when its suggestion spans several edits."""
    if suggestion.start.line == suggestion.end.line:
        where = f"line {suggestion.start.line}"
    else:
        where = f"lines {suggestion.start.line}-{suggestion.end.line}"
    return f"the suggested change covers {where}: the fix edits {len(edits)} places together"
