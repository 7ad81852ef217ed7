"""Small projects written to a temporary folder and checked as a user runs
`tfrewrite check .` there: the facts several modules give together."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.findings import Finding
from tfrewrite.pipeline.engine import InputFile, RunOptions, run


def write_project(root: Path, files: dict[str, str]) -> None:
    """Write `files` (path -> source, dedented) under `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())


def check_project(root: Path, files: dict[str, str], codes: tuple[str, ...]) -> list[Finding]:
    """Write `files` under `root` and return what the rules `codes` find in
    them, the folder as the project's root."""
    write_project(root, files)
    options = RunOptions(rule_codes=codes, root=str(root))
    return run([InputFile(str(root / name)) for name in files], options, jobs=1).findings


def fix_project(root: Path, files: dict[str, str], codes: tuple[str, ...]) -> dict[str, str]:
    """Write `files` under `root`, fix them with the rules `codes` as `fix
    .` does there, and return the fixed source of each file changed, by name."""
    write_project(root, files)
    options = RunOptions(rule_codes=codes, root=str(root), fix=True)
    result = run([InputFile(str(root / name)) for name in files], options, jobs=1)
    return {Path(r.path).name: r.fixed_source for r in result.files if r.fixed_source}


def found_lines(findings: list[Finding]) -> list[tuple[str, int]]:
    """(file name, line) of each finding, in order."""
    return sorted((Path(f.path).name, f.start.line) for f in findings)
