"""Which files a run looks at: the given paths, minus `.gitignore`d and
excluded ones, and the paths that cannot be looked at.

Files are Python sources and Jupyter notebooks (`exclude = ["*.ipynb"]` turns
notebooks off). Every path that cannot be read becomes a `FileError` (one
line, exit 2) and the walk goes on: a missing path, a symbolic link loop or a
broken link, a folder that cannot be listed (mode 000 or 111), a path inside
one, and a `.py` name that is not a regular file (a FIFO, a socket, a device,
or a link to one). Those are judged by `stat` alone and never opened: reading
a FIFO waits forever for a writer, and `/dev/zero` never ends.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tfrewrite.findings import FileError
from tfrewrite.workspace.sources import file_kind, special_file_message

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    # Files named on the command line: always parsed, TensorFlow or not.
    explicit: set[Path] = field(default_factory=set)
    errors: list[FileError] = field(default_factory=list)


class GitIgnore:
    """The subset of gitignore semantics projects use: globs, `**`, leading
    `/` anchors, trailing `/` for folders only, and `!` negation."""

    def __init__(self, base: Path, lines: Iterable[str]) -> None:
        self.base = base
        self.patterns: list[tuple[re.Pattern[str], bool, bool]] = []
        for raw in lines:
            line = raw.rstrip("\n").rstrip()
            if not line or line.startswith("#"):
                continue
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            anchored = "/" in line
            line = line.lstrip("/")
            regex = _glob_to_regex(line)
            if not anchored:
                regex = f"(?:.*/)?{regex}"
            self.patterns.append((re.compile(f"^{regex}$"), negate, dir_only))

    def ignored(self, path: Path, is_dir: bool) -> bool | None:
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return None
        result: bool | None = None
        for pattern, negate, dir_only in self.patterns:
            if dir_only and not is_dir:
                continue
            if pattern.match(rel):
                result = not negate
        return result


def _glob_to_regex(glob: str) -> str:
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return "".join(out)


class _Excludes:
    """`exclude` patterns compiled once: a pattern matches an entry's name,
    its path relative to the root, or a folder above it (`build` excludes
    `build/x.py`)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        stripped = [p.rstrip("/") for p in patterns]
        self.empty = not stripped
        self.by_name = _any_of(fnmatch.translate(p) for p in stripped)
        self.by_path = _any_of(
            regex for p in stripped for regex in (fnmatch.translate(p), fnmatch.translate(p + "/*"))
        )

    def match(self, path: Path, root: Path, located: Path | None = None) -> bool:
        """`located` is `_located(path)` when the caller knows it already (the
        walk resolves each folder once, not each entry)."""
        if self.empty:
            return False
        try:
            rel = (located or _located(path)).relative_to(root).as_posix()
        except ValueError:
            rel = path.as_posix()
        return bool(self.by_name.match(path.name) or self.by_path.match(rel))


def _any_of(regexes: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(f"(?:{r})" for r in regexes)
    return re.compile(alternatives or "(?!)")


def _describe_os_error(path: Path, err: OSError) -> str:
    if err.errno == errno.ELOOP:
        return "symbolic link loop"
    if err.errno == errno.ENOENT:
        return "broken symbolic link" if os.path.islink(path) else "no such file or folder"
    if err.errno == errno.EACCES:
        return "permission denied"
    return err.strerror or str(err)


def _located(path: Path) -> Path:
    """The absolute path of an entry: its folder resolved, the entry itself
    not (a symbolic link loop must not stop the walk; a link is matched by
    its own name)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _is_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def discover(paths: Iterable[Path], root: Path, exclude: Iterable[str]) -> Iterator[Path]:
    """The files `find_files` finds, without its errors."""
    yield from find_files(paths, root, exclude).files


def find_files(paths: Iterable[Path], root: Path, exclude: Iterable[str]) -> Discovery:
    """Python files under `paths`, sorted within each folder, and the paths
    that could not be read. A file named explicitly is always included (as
    Ruff does), even if excluded."""
    excludes = _Excludes(exclude)
    root = root.resolve()
    found = Discovery()
    seen: set[Path] = set()
    # One file named twice (a symbolic link and its target, two hard links) is
    # checked and written once: a second write would see the first as a change.
    files: set[tuple[int, int]] = set()

    def add(path: Path, info: os.stat_result, explicit: bool) -> None:
        kind = file_kind(info.st_mode)
        if kind is not None:
            found.errors.append(FileError(str(path), special_file_message(kind)))
            return
        if (info.st_dev, info.st_ino) in files:
            return
        files.add((info.st_dev, info.st_ino))
        found.files.append(path)
        if explicit:
            found.explicit.add(path)

    for path in paths:
        try:
            info = os.stat(path)
        except OSError as err:
            found.errors.append(FileError(str(path), _describe_os_error(path, err)))
            continue
        if not stat.S_ISDIR(info.st_mode):
            if path not in seen:
                seen.add(path)
                add(path, info, explicit=True)
            continue
        ignores = _gitignores_above(path.resolve())
        for item in _walk(path, root, excludes, ignores, seen):
            if isinstance(item, FileError):
                found.errors.append(item)
                continue
            try:
                add(item, os.stat(item), explicit=False)
            except OSError as err:
                found.errors.append(FileError(str(item), _describe_os_error(item, err)))
    return found


def _gitignores_above(folder: Path) -> list[GitIgnore]:
    result = []
    for parent in reversed([folder, *folder.parents]):
        candidate = parent / ".gitignore"
        if _is_file(candidate):
            result.append(GitIgnore(parent, _read_lines(candidate)))
        if (parent / ".git").exists():
            result = [g for g in result if g.base == parent or parent in g.base.parents]
    return result


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _is_ignored(
    path: Path, is_dir: bool, ignores: list[GitIgnore], located: Path | None = None
) -> bool:
    verdict = False
    resolved = located or _located(path)
    for ignore in ignores:
        result = ignore.ignored(resolved, is_dir)
        if result is not None:
            verdict = result
    return verdict


def _walk(
    folder: Path, root: Path, exclude: _Excludes, ignores: list[GitIgnore], seen: set[Path]
) -> Iterator[Path | FileError]:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as err:
        yield FileError(str(folder), f"cannot read folder: {_describe_os_error(folder, err)}")
        return
    # Resolved once per folder: resolving every entry (a `realpath` walks
    # every component) was most of the time of a warm run.
    resolved_folder = Path(os.path.realpath(folder))
    local = folder / ".gitignore"
    if _is_file(local) and all(g.base != resolved_folder for g in ignores):
        ignores = [*ignores, GitIgnore(resolved_folder, _read_lines(local))]
    for entry in entries:
        path = Path(entry.path)
        located = resolved_folder / entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if exclude.match(path, root, located) or _is_ignored(path, is_dir, ignores, located):
            continue
        if is_dir:
            yield from _walk(path, root, exclude, ignores, seen)
        elif entry.name.endswith(PYTHON_SUFFIXES) and path not in seen:
            seen.add(path)
            yield path
