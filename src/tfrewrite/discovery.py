"""Which files a run looks at: the given paths, minus `.gitignore`d and
excluded ones: Python sources and Jupyter notebooks (`exclude = ["*.ipynb"]`
turns notebooks off)."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

PYTHON_SUFFIXES = (".py", ".pyi", ".ipynb")


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


def _matches_exclude(path: Path, root: Path, patterns: Iterable[str]) -> bool:
    try:
        rel = path.resolve().relative_to(root).as_posix()
    except ValueError:
        rel = path.as_posix()
    name = path.name
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(rel, pattern):
            return True
        if fnmatch.fnmatch(rel, pattern + "/*"):
            return True
    return False


def discover(paths: Iterable[Path], root: Path, exclude: Iterable[str]) -> Iterator[Path]:
    """Python files under `paths`, sorted within each folder. A file named
    explicitly is always included (as Ruff does), even if excluded."""
    exclude = tuple(exclude)
    root = root.resolve()
    seen: set[Path] = set()
    for path in paths:
        if path.is_file():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        ignores = _gitignores_above(path.resolve())
        yield from _walk(path, root, exclude, ignores, seen)


def _gitignores_above(folder: Path) -> list[GitIgnore]:
    result = []
    for parent in reversed([folder, *folder.parents]):
        candidate = parent / ".gitignore"
        if candidate.is_file():
            result.append(GitIgnore(parent, _read_lines(candidate)))
        if (parent / ".git").exists():
            result = [g for g in result if g.base == parent or parent in g.base.parents]
    return result


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _is_ignored(path: Path, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = False
    resolved = path.resolve()
    for ignore in ignores:
        result = ignore.ignored(resolved, is_dir)
        if result is not None:
            verdict = result
    return verdict


def _walk(
    folder: Path, root: Path, exclude: tuple[str, ...], ignores: list[GitIgnore], seen: set[Path]
) -> Iterator[Path]:
    local = folder / ".gitignore"
    if local.is_file() and all(g.base != folder.resolve() for g in ignores):
        ignores = [*ignores, GitIgnore(folder.resolve(), _read_lines(local))]
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        is_dir = entry.is_dir(follow_symlinks=False)
        if _matches_exclude(path, root, exclude) or _is_ignored(path, is_dir, ignores):
            continue
        if is_dir:
            yield from _walk(path, root, exclude, ignores, seen)
        elif entry.name.endswith(PYTHON_SUFFIXES) and path not in seen:
            seen.add(path)
            yield path
