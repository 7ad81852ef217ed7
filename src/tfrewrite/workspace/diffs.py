"""Unified diffs that `git apply` and `patch -p1` accept."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

_NO_NEWLINE = "\\ No newline at end of file\n"


def display_path(path: str) -> str:
    """The path relative to the current folder when inside it, with `/`."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path.cwd())).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def unified_diff(path: str, old: str, new: str) -> str:
    rel = display_path(path)
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + _NO_NEWLINE)
    return "".join(out)


def notebook_diff(path: str, old: str, new: str) -> str:
    """A notebook's changes as one unified diff per changed cell, headed
    `a/path:cell N`, as Ruff shows them: a reviewer reads cells, not JSON."""
    from tfrewrite.workspace.notebook import Notebook

    rel = display_path(path)
    before, after = Notebook.parse(old).cell_sources(), Notebook.parse(new).cell_sources()
    out = []
    for number, text in before.items():
        changed = after.get(number, text)
        if changed == text:
            continue
        # A cell's last line has no newline (Jupyter writes none): compare
        # lines, not line endings.
        out.extend(
            difflib.unified_diff(
                [line.rstrip("\n") + "\n" for line in text.splitlines()],
                [line.rstrip("\n") + "\n" for line in changed.splitlines()],
                fromfile=f"a/{rel}:cell {number}",
                tofile=f"b/{rel}:cell {number}",
            )
        )
    return "".join(out)


def file_diff(path: str, old: str, new: str) -> str:
    """The diff `fix --diff` prints for one file."""
    if path.endswith(".ipynb"):
        return notebook_diff(path, old, new)
    return unified_diff(path, old, new)
