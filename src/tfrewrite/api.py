"""Single-file entry points: the library API, the LibCST codemod commands and
the tests use these; the command line uses `engine.run` over many files.

One file is indexed on its own, so facts that need other files (a loss
compiled in another module) are not seen here; `engine.run` sees them.
"""

from __future__ import annotations

from collections.abc import Iterable

from tfrewrite.facts.index import build_index
from tfrewrite.facts.project import compute_facts
from tfrewrite.findings import FileResult, Finding
from tfrewrite.pipeline.rule_pass import process_file
from tfrewrite.pipeline.run_options import FileJob, InputFile, RunOptions
from tfrewrite.rules import select_rules


def _process(
    source: str,
    path: str,
    select: Iterable[str] | None,
    fix: bool,
    unsafe_fixes: bool,
    want_edits: bool,
) -> FileResult:
    rules = select_rules(list(select) if select else ["TFR"], [])
    module_name = path.rsplit("/", 1)[-1].removesuffix(".py")
    index = build_index(source, path, module_name)
    if index.syntax_error is not None:
        line, _, message = index.syntax_error
        raise SyntaxError(f"{path}:{line}: {message}")
    traced = compute_facts([index]).for_path(path)
    options = RunOptions(
        rule_codes=tuple(r.code for r in rules),
        root=".",
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        want_edits=want_edits,
    )
    result = process_file(FileJob(InputFile(path, source), index, traced, options))
    if result.error is not None:
        raise RuntimeError(result.error.describe())
    return result


def check_source(
    source: str,
    path: str = "example.py",
    select: Iterable[str] | None = None,
    want_edits: bool = False,
) -> list[Finding]:
    """Findings for one source text."""
    return _process(source, path, select, False, False, want_edits).findings


def fix_source(
    source: str,
    path: str = "example.py",
    select: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
) -> str:
    """The source with every applicable fix applied (unchanged if none)."""
    result = _process(source, path, select, True, unsafe_fixes, False)
    return result.fixed_source if result.fixed_source is not None else source


def fix_source_with_findings(
    source: str,
    path: str = "example.py",
    select: Iterable[str] | None = None,
    unsafe_fixes: bool = False,
) -> tuple[str, list[Finding], list[Finding]]:
    """(fixed source, findings fixed, findings remaining)."""
    result = _process(source, path, select, True, unsafe_fixes, False)
    fixed = result.fixed_source if result.fixed_source is not None else source
    return fixed, result.fixes_applied, result.findings
