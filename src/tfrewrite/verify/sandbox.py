"""Run the user's code in a working directory of its own, never in the project.

Scripts read and write relative to where they run: `np.load("data/x.npy")`,
`plt.savefig("./result/epoch_1.png")`, `model.save("model.keras")`. Verify
runs them from a temporary directory that mirrors the script's folder: its
folders are recreated as real folders (so a file the code creates lands in
the temporary tree) and its files are symbolic links (so relative reads see
the project's data). The directory is removed when the request is done.

A Python-level write that would reach the project anyway (through a link,
an absolute path, a folder too large to mirror) is caught by an audit hook
(`sys.addaudithook`): writing to a linked file first replaces the link by a
copy of the file in the temporary tree (copy on write), anything else that
would change the project raises `PermissionError`. Writes from native code
(TensorFlow's file system, HDF5) are not audited: they are safe for relative
paths whose folders were mirrored, and for files replaced by renaming
(TensorFlow's checkpoints), not for an absolute path into the project.
Every refused write is remembered (`refused_writes`): verify reports which
project files the code tried to change.

Standard library only: it runs inside verification workers.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

MIRRORED = 5000  # folders and files recreated at most; larger folders are linked whole
_SKIP = frozenset({"__pycache__"})

# The active sandbox, read by the audit hook: (temporary dir, guarded folders).
_active: tuple[str, tuple[str, ...]] | None = None
_in_hook = False
_hook_installed = False
# Project paths the code tried to change in the active sandbox, in order.
_refused: list[str] = []

_OPEN_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# event -> indexes of the path arguments it changes
_CHANGING = {
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.truncate": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.utime": (0,),
    "shutil.rmtree": (0,),
}


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _path_text(value: Any) -> str | None:
    if isinstance(value, int) or value is None:
        return None  # a file descriptor: already open
    try:
        text = os.fsdecode(os.fspath(value))
    except TypeError:
        return None
    return text


def _writes(mode: Any, flags: Any) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _OPEN_WRITE_FLAGS)


def _guard(path: str) -> None:
    """Raise unless a change to `path` stays out of the project; a linked
    file inside the temporary tree is first replaced by a copy."""
    assert _active is not None
    temp, guarded = _active
    absolute = os.path.abspath(path)
    real = os.path.realpath(absolute)
    if _inside(real, temp) or not any(_inside(real, g) for g in guarded):
        return
    if _inside(absolute, temp) and os.path.islink(absolute) and os.path.isfile(real):
        os.unlink(absolute)  # copy on write: the project's file stays as it is
        shutil.copy2(real, absolute)
        return
    if real not in _refused:
        _refused.append(real)
    raise PermissionError(
        f"tfrewrite verify does not let the code it runs change the project: {path!r} "
        f"is {real!r}; the code runs in a temporary copy of the script's folder ({temp}), "
        "where relative paths are writable"
    )


def _hook(event: str, args: tuple[Any, ...]) -> None:
    global _in_hook
    if _active is None or _in_hook:
        return
    if event == "open":
        if len(args) < 3 or not _writes(args[1], args[2]):
            return
        places: tuple[int, ...] = (0,)
    else:
        places = _CHANGING.get(event, ())
        if not places:
            return
    _in_hook = True
    try:
        for i in places:
            path = _path_text(args[i]) if i < len(args) else None
            if path is not None:
                _guard(path)
    finally:
        _in_hook = False


def _mirror(source: str, target: str, budget: list[int]) -> None:
    """Recreate `source`'s folders under `target`, linking its files."""
    try:
        entries = sorted(os.scandir(source), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name in _SKIP:
            continue
        place = os.path.join(target, entry.name)
        budget[0] -= 1
        if entry.is_dir(follow_symlinks=False) and budget[0] > 0:
            os.mkdir(place)
            _mirror(entry.path, place, budget)
        else:
            os.symlink(os.path.realpath(entry.path), place)


@contextmanager
def isolated(folder: str, guarded: list[str]) -> Iterator[str]:
    """Run the body in a temporary mirror of `folder` (the current
    directory while it runs), with Python-level changes to `guarded` folders
    refused; yields the temporary directory, removed afterwards."""
    global _active, _hook_installed, _refused
    if not _hook_installed:
        sys.addaudithook(_hook)
        _hook_installed = True
    # Inside the worker's scratch folder when it has one: removed by the pool
    # even when the worker is killed on a timeout.
    scratch = os.environ.get("TFREWRITE_VERIFY_SCRATCH")
    place = scratch if scratch and os.path.isdir(scratch) else None
    temp = os.path.realpath(tempfile.mkdtemp(prefix="tfrewrite-verify-", dir=place))
    previous_dir = os.getcwd()
    previous = _active
    if os.path.isdir(folder):
        _mirror(folder, temp, [MIRRORED])
    roots = {os.path.realpath(g) for g in [folder, *guarded] if g and os.path.isdir(g)}
    # A folder that holds the system's temporary folder is not guarded: the
    # code's own temporary files (`tempfile.mkdtemp()`) go there.
    system_temp = os.path.realpath(tempfile.gettempdir())
    roots = {r for r in roots if not _inside(system_temp, r)}
    os.chdir(temp)
    _active = (temp, tuple(sorted(roots)))
    previous_refused, _refused = _refused, []
    try:
        yield temp
    finally:
        _active = previous
        _refused = previous_refused
        os.chdir(previous_dir)
        shutil.rmtree(temp, ignore_errors=True)


def current() -> str | None:
    """The temporary directory the code runs in, if any."""
    return _active[0] if _active is not None else None


def refused_writes() -> list[str]:
    """The project paths the code run in the active sandbox tried to change
    (each once, in order); empty outside a sandbox."""
    return list(_refused) if _active is not None else []


def refusal_warnings(paths: list[str]) -> list[str]:
    """One warning per refused path, for the verification result."""
    return [
        f"the code tried to write {path} in the project; refused (verify runs it in a "
        "temporary copy of the script's folder, where relative paths are writable)"
        for path in paths
    ]


def write_beside(name: str, text: str) -> str | None:
    """A file in the working directory holding `text`, named after the
    script (`name`, as `.py`) so `os.path.dirname(__file__)` is the mirror of
    its folder: the linked original is replaced, or a numbered name is used
    when another version already took it. None outside a sandbox."""
    global _in_hook
    temp = current()
    if temp is None:
        return None
    stem = os.path.splitext(name)[0]
    candidates = [f"{stem}.py", *(f"{stem}.{n}.py" for n in range(1, 1000))]
    _in_hook = True  # our own files: not the code's writes
    try:
        for candidate in candidates:
            place = os.path.join(temp, candidate)
            if os.path.islink(place):
                os.unlink(place)
            elif os.path.exists(place):
                with open(place, encoding="utf-8") as handle:
                    if handle.read() == text:
                        return place
                continue
            with open(place, "w", encoding="utf-8") as handle:
                handle.write(text)
            return place
    finally:
        _in_hook = False
    return None
