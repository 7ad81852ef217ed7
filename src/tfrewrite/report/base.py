"""The report model every format shares: what a format is given besides the
findings (`ReportContext`), and the registry of formats (`register`,
`FORMATS`).

The formats import this module, never the package: the package imports the
formats to register them, so a format that imported the package would
depend on a module still being imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tfrewrite.findings import FileError, Finding


@dataclass
class ReportContext:
    sources: dict[str, str] = field(default_factory=dict)  # path -> source text
    color: bool = False
    show_fixes: bool = False
    unsafe_fixes: bool = False
    files_checked: int = 0
    fix_mode: bool = False
    fixes_applied: list[Finding] = field(default_factory=list)
    cells: dict[str, dict[int, str]] = field(default_factory=dict)  # notebook path -> cells
    _lines: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def lines(self, path: str) -> list[str] | None:
        """The lines of a file's source, split once per file (not once per
        finding: a large file with many findings must stay linear)."""
        if path not in self._lines:
            source = self.sources.get(path)
            if source is None:
                return None
            self._lines[path] = source.splitlines()
        return self._lines[path]

    def source_lines(self, finding: Finding) -> list[str] | None:
        """The lines `finding`'s positions count: its file's, or its cell's."""
        if finding.cell is None:
            return self.lines(finding.path)
        cell_text = self.cells.get(finding.path, {}).get(finding.cell)
        return None if cell_text is None else cell_text.splitlines()


Formatter = Callable[[list[Finding], list[FileError], ReportContext], str]
FORMATS: dict[str, Formatter] = {}
# Formats whose output carries the text edits of each fix.
FORMATS_WITH_EDITS: set[str] = set()


def register(name: str, with_edits: bool = False) -> Callable[[Formatter], Formatter]:
    def decorate(func: Formatter) -> Formatter:
        FORMATS[name] = func
        if with_edits:
            FORMATS_WITH_EDITS.add(name)
        return func

    return decorate
