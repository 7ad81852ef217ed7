"""Lines a message names, named the way its finding's position is named.

Rules and facts read the Python a file holds: for a notebook, its code
cells joined into one module. A finding's own position is placed back in
its cell (`cell 3:4:9`), and a message that names another line ("line 9
calls Python `float()`") must name it the same way, or a notebook user is
sent to line 9 of a cell that has five. So a message names lines through
`line_name` / `line_names`, which mark the numbers, and `place_lines`
turns the marks into words once the file is known: "line 9" in a `.py`
file, "cell 3, line 4" in a notebook. The marks are characters of
Unicode's private use area, which no message text holds otherwise.

Where a line of another file is named (a value reference "at line 12 of
train.ipynb"), the fact is rendered with that file's own cells
(`CellStarts`) when it is made, not with the finding's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# (cell number from 1, 0-based line of the Python view where the cell starts),
# in view order: empty for a plain Python file.
CellStarts = tuple[tuple[int, int], ...]

_OPEN = "\ue000"
_CLOSE = "\ue001"
# A line of the rewrite's view (verify compares a notebook before and after
# a fix, whose cells then hold other lines).
_OPEN_REWRITE = "\ue002"
_MARKED = re.compile(f"([{_OPEN}{_OPEN_REWRITE}])([0-9,]+){_CLOSE}")


def line_name(line: int) -> str:
    """Marked text that reads "line 9" (or "cell 3, line 4") once placed."""
    return f"{_OPEN}{line}{_CLOSE}"


def line_names(lines: Iterable[int]) -> str:
    """Marked text for several lines: "line 9", or "lines 3-5, 9" (runs of
    consecutive lines as ranges), per cell in a notebook."""
    ordered = sorted(set(lines))
    return f"{_OPEN}{','.join(map(str, ordered))}{_CLOSE}"


def rewrite_line_name(line: int) -> str:
    """`line_name` for a line of the rewritten source (`verify`)."""
    return f"{_OPEN_REWRITE}{line}{_CLOSE}"


def cell_position(starts: CellStarts, line: int) -> tuple[int | None, int]:
    """(cell number or None for a plain file, line within it) of a 1-based
    line of the Python view."""
    for cell, start in reversed(starts):
        if line - 1 >= start:
            return cell, line - start
    if starts:
        return starts[0][0], line
    return None, line


def place_lines(
    text: str, starts: CellStarts = (), rewrite_starts: CellStarts | None = None
) -> str:
    """`text` with every marked line named for a reader of the file whose
    view `starts` describes (plain line numbers when it is empty); lines of
    the rewrite by `rewrite_starts` (default: `starts`)."""
    if _OPEN not in text and _OPEN_REWRITE not in text:
        return text

    def words(match: re.Match[str]) -> str:
        view = starts if match.group(1) == _OPEN or rewrite_starts is None else rewrite_starts
        return _words([int(n) for n in match.group(2).split(",")], view)

    return _MARKED.sub(words, text)


def named_line(line: int, starts: CellStarts = ()) -> str:
    """ "line 9", or "cell 3, line 4" in the notebook `starts` describes: for a
    fact that names a line of its own file, read in other files' messages."""
    return _words([line], starts)


def path_line(path: str, line: int, starts: CellStarts = ()) -> str:
    """`path:line`, or `path:cell N:line` in a notebook (as findings are shown)."""
    cell, in_cell = cell_position(starts, line)
    return f"{path}:cell {cell}:{in_cell}" if cell is not None else f"{path}:{line}"


def _words(lines: list[int], starts: CellStarts) -> str:
    by_cell: dict[int | None, list[int]] = {}
    for line in lines:
        cell, in_cell = cell_position(starts, line)
        by_cell.setdefault(cell, []).append(in_cell)
    parts = []
    for cell, cell_lines in by_cell.items():
        noun = "line" if len(cell_lines) == 1 else "lines"
        named = f"{noun} {_ranges(cell_lines)}"
        parts.append(named if cell is None else f"cell {cell}, {named}")
    return " and ".join(parts)


def _ranges(lines: list[int]) -> str:
    """`[3, 4, 5, 9]` -> "3-5, 9"."""
    runs: list[list[int]] = []
    for line in lines:
        if runs and line == runs[-1][-1] + 1:
            runs[-1].append(line)
        else:
            runs.append([line])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
