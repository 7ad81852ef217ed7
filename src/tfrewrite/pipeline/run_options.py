"""What a run is given: its options and its input files, and what pass 2 is
given for one file (`FileJob`).

These are plain values that every stage of the pipeline reads (`engine`
schedules the jobs, `rule_pass` runs one, `fix_rounds` and
`decoration_gate` consult the options), so they live below all of them:
no stage needs another to know what it was asked to do.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING

from tfrewrite import rules as rule_registry
from tfrewrite.findings import Applicability

if TYPE_CHECKING:
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction
    from tfrewrite.rules.base import Rule


@dataclass(frozen=True)
class RunOptions:
    rule_codes: tuple[str, ...]
    root: str
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fix: bool = False
    unsafe_fixes: bool = False
    want_edits: bool = False
    # Settings rules read (`print-output-stream`), as (key, value) pairs.
    rule_settings: tuple[tuple[str, str], ...] = ()
    # Whether `check` parses only the code the rules can need (see
    # `pipeline/relevant_code.py`); off only to compare the two.
    prune_inert_code: bool = True

    def rules(self) -> list[Rule]:
        by_code = rule_registry.RULES_BY_CODE
        return [by_code[c] for c in self.rule_codes]

    def ignored_prefixes(self, path: str) -> tuple[str, ...]:
        """Codes or prefixes (`TFR2`) that `per-file-ignores` turns off for `path`."""
        rel = _relative(path, self.root)
        return tuple(
            code
            for pattern, codes in self.per_file_ignores
            if fnmatch(rel, pattern) or fnmatch(Path(rel).name, pattern)
            for code in codes
        )

    def allows(self, applicability: Applicability) -> bool:
        return applicability is Applicability.SAFE or (
            applicability is Applicability.UNSAFE and self.unsafe_fixes
        )


@dataclass
class InputFile:
    path: str  # as shown to the user
    source: str | None = None  # given for standard input; read lazily otherwise
    encoding: str = "utf-8"
    # Named on the command line: always parsed (no byte prefilter), so its
    # syntax errors are reported whether it uses TensorFlow or not.
    explicit: bool = False


@dataclass(frozen=True)
class FileJob:
    """One file for pass 2, with the facts pass 1 derived about it."""

    file: InputFile
    index: ModuleIndex
    traced: dict[str, TracedFunction]
    options: RunOptions


def _relative(path: str, root: str) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()
