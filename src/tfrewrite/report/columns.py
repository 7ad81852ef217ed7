"""Column units for report formats.

Findings and text edits count columns in code points (1-based, end exclusive).
SARIF counts UTF-16 code units by default and reviewdog counts UTF-8 bytes, so
`😀` is one column for tfrewrite, two for SARIF and four for reviewdog. The
conversion needs the text of the line, which `ReportContext.sources` holds;
without it the code-point column is the best answer there is.

Lines are split on `\\n` only, as `tfrewrite.report.edits` does, so positions of
findings and edits mean the same thing here (a `\\r` of a `\\r\\n` ending stays
at the end of its line, after every column a finding can name).
"""

from __future__ import annotations

from tfrewrite.findings import Position


class SourceLines:
    """One file's lines, for converting code-point columns to other units."""

    def __init__(self, source: str | None) -> None:
        self.source = source
        self._lines = source.split("\n") if source is not None else None
        self._starts: list[int] | None = None  # offset of each line, built on first use

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
        if self._starts is None:
            self._starts = [0]
            for text in self._lines:
                self._starts.append(self._starts[-1] + len(text) + 1)
        return self._starts[position.line - 1] + position.column - 1
