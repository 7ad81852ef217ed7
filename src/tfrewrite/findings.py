"""The one finding model every rule produces and every report format reads.

Positions are 1-based lines and 1-based columns counted in code points; report
formats convert columns to the unit they define (UTF-16 for SARIF, UTF-8 bytes
for rdjson) from the source line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Applicability(str, Enum):
    """How safe a fix is, following Ruff: safe fixes apply by default, unsafe
    ones only with `--unsafe-fixes`, and `none` means the rule never fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"
    NONE = "none"


@dataclass(frozen=True, order=True)
class Position:
    line: int
    column: int


@dataclass(frozen=True)
class TextEdit:
    """Replace the text from `start` (inclusive) to `end` (exclusive) with `content`."""

    start: Position
    end: Position
    content: str


@dataclass(frozen=True)
class FixInfo:
    """A fix as reports see it: what it does, how safe it is, and (when the
    output format needs them) the text edits that make it."""

    applicability: Applicability
    message: str
    edits: tuple[TextEdit, ...] = ()


@dataclass(frozen=True)
class Finding:
    code: str
    rule_name: str
    message: str
    path: str
    start: Position
    end: Position
    fix: FixInfo | None = None
    # In a notebook: the cell (numbered from 1) whose lines `start`/`end` count.
    cell: int | None = None

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def location(self) -> str:
        """`path:line:column`, or `path:cell N:line:column` in a notebook (as Ruff writes it)."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.start.line}:{self.start.column}"

    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.start.line, self.start.column, self.code)


@dataclass(frozen=True)
class FileError:
    """A file tfrewrite could not read, parse or fix. Never fatal to the run."""

    path: str
    message: str
    line: int | None = None
    column: int | None = None

    def describe(self) -> str:
        where = self.path
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


@dataclass
class FileResult:
    """Everything one file produced in one run."""

    path: str
    source: str | None = None
    findings: list[Finding] = field(default_factory=list)
    fixed_source: str | None = None
    fixes_applied: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    parsed: bool = False
    # A notebook's code cells (number -> source) as the findings see them.
    cells: dict[int, str] | None = None
    # What other files' train steps need from this file's first round
    # (`pipeline.step_reconciliation`): the qualnames of its steps whose
    # decoration was withheld, and its hazards that no fix rewrites in code
    # traced only once another file's step is decorated, as (step path,
    # step qualname, what and where).
    withheld_steps: list[str] = field(default_factory=list)
    step_blockers: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed_source is not None and self.fixed_source != self.source
