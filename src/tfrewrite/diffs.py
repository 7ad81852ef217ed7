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
