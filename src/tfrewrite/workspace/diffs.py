"""Unified diffs that `git apply` and `patch -p1` accept.

A diff is made of the bytes a file holds and the bytes `fix` would write:
the file's own encoding (a latin-1 file diffs in latin-1), its BOM, and its
line endings. Lines are split at `\\n` only, as `git` and `patch` split them:
a CR-only file is one line to them, and a form feed or a Unicode line
separator inside a line does not end it. A file whose last line has no
newline gets the `\\ No newline at end of file` marker both tools expect.

A notebook's diff is a diff of its JSON text as `fix` will write it (only
the changed cells' `source` values change), so it applies like any other;
each hunk header names the cells it changes (`@@ -40,7 +40,7 @@ cell 4`),
in the place `git diff` puts a function name and `git apply` ignores.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path

from tfrewrite.workspace.sources import decode_source, encode_source, read_file_bytes

_NO_NEWLINE = b"\\ No newline at end of file\n"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def display_path(path: str) -> str:
    """The path relative to the current folder when inside it, with `/`."""
    try:
        return Path(os.path.relpath(Path(path).resolve(), Path.cwd())).as_posix()
    except ValueError:  # another drive on Windows
        return Path(path).as_posix()


def unified_diff(path: str, old: str, new: str) -> str:
    """The diff of two texts of `path`, as text (for texts in UTF-8: what
    `file_diff` gives for a file without a BOM)."""
    return _byte_diff(path, old.encode("utf-8"), new.encode("utf-8")).decode("utf-8")


def file_diff(path: str, old: str, new: str) -> bytes:
    """The diff `fix --diff` prints for one file: `old` is the text that was
    analysed, `new` the text `fix` would write, both encoded as the file is."""
    encoding = _encoding_of(path, old)
    before, after = encode_source(old, encoding), encode_source(new, encoding)
    diff = _byte_diff(path, before, after)
    if path.endswith(".ipynb"):
        return _name_cells(diff, old)
    return diff


def _encoding_of(path: str, text: str) -> str:
    """The encoding the file at `path` is in, when it still holds `text`
    (the file `fix` would write); UTF-8 otherwise (standard input)."""
    try:
        stored = decode_source(read_file_bytes(path))
    except (OSError, ValueError):
        return "utf-8"
    return stored.encoding if stored.text == text else "utf-8"


def _byte_diff(path: str, old: bytes, new: bytes) -> bytes:
    rel = os.fsencode(display_path(path))
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        _lines(old),
        _lines(new),
        fromfile=b"a/" + rel,
        tofile=b"b/" + rel,
        lineterm=b"\n",
    )
    out = []
    for line in lines:
        out.append(line)
        if not line.endswith(b"\n"):
            out.append(b"\n" + _NO_NEWLINE)
    return b"".join(out)


def _lines(data: bytes) -> list[bytes]:
    """Lines as `git` and `patch` see them: each ends at `\\n` (kept)."""
    lines = data.split(b"\n")
    last = lines.pop()
    out = [line + b"\n" for line in lines]
    if last:
        out.append(last)
    return out


def _name_cells(diff: bytes, old: str) -> bytes:
    """Each hunk header of a notebook's diff, followed by the cells whose
    `source` its old lines touch."""
    from tfrewrite.workspace.notebook import Notebook, NotebookError

    try:
        spans = Notebook.parse(old).source_lines()
    except NotebookError:
        return diff
    out = []
    for line in _lines(diff):
        match = _HUNK.match(line)
        if match:
            start, count = int(match.group(1)), int(match.group(2) or 1)
            end = start + max(count, 1) - 1
            cells = [n for n, (first, last) in spans.items() if first <= end and start <= last]
            if cells:
                label = "cell " if len(cells) == 1 else "cells "
                names = label + ", ".join(str(n) for n in cells)
                line = match.group(0) + b" " + names.encode() + b"\n"
        out.append(line)
    return b"".join(out)
