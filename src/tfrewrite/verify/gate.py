"""`tfrewrite fix --verify`: keep only the fixes whose functions verify.

After the engine has fixed every file, each changed function is verified. A
function whose verdict is not `equivalent` gets its original text back (the
rest of the file keeps its fixes), and the findings whose fixes were withheld
are reported again with the reason. Imports a withheld fix added stay: an
unused import is harmless, and removing it could break another fix.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

from tfrewrite.config import Settings
from tfrewrite.facts.index import module_name_for
from tfrewrite.findings import FileResult, Finding, Position
from tfrewrite.pipeline.engine import RunResult
from tfrewrite.verify.module_slice import find_definition, is_main_guard
from tfrewrite.verify.report import branch_place, location
from tfrewrite.verify.run import verify_targets
from tfrewrite.verify.settings import verify_settings_of
from tfrewrite.verify.targets import pair_targets
from tfrewrite.workspace.notebook import NOTEBOOK_SUFFIX, cells_of, python_of


def _span(tree: ast.Module, qualname: str) -> tuple[int, int]:
    """First and last line (1-based, inclusive) of a function with its decorators."""
    node = find_definition(tree, qualname)
    start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return start, node.end_lineno or node.lineno


def restore_functions(original: str, fixed: str, qualnames: set[str]) -> str | None:
    """`fixed` with the given functions' text taken from `original`; None when
    that cannot be done cleanly (then the whole file keeps its original text)."""
    try:
        before_tree, after_tree = ast.parse(original), ast.parse(fixed)
        spans = sorted(
            ((_span(after_tree, q), _span(before_tree, q)) for q in qualnames), reverse=True
        )
    except Exception:
        return None
    before_lines = original.splitlines(keepends=True)
    after_lines = fixed.splitlines(keepends=True)
    for (a_start, a_end), (b_start, b_end) in spans:
        after_lines[a_start - 1 : a_end] = before_lines[b_start - 1 : b_end]
    text = "".join(after_lines)
    try:
        ast.parse(text)
    except SyntaxError:
        return None
    return text


def enclosing_function(tree: ast.Module, line: int) -> str | None:
    """Qualified name of the outermost function or method containing `line`."""

    def visit(body: list[ast.stmt], prefix: str) -> str | None:
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
                if start <= line <= (stmt.end_lineno or stmt.lineno):
                    return prefix + stmt.name
            elif isinstance(stmt, ast.ClassDef) and stmt.lineno <= line <= (
                stmt.end_lineno or stmt.lineno
            ):
                return visit(stmt.body, f"{prefix}{stmt.name}.")
            elif not prefix and is_main_guard(stmt):
                # Functions a script defines in its `__main__` block are
                # module-level names too (`module_slice.function_sources`).
                found = visit(stmt.body, prefix)  # type: ignore[attr-defined]
                if found is not None:
                    return found
        return None

    return visit(tree.body, "")


def _why(result: dict[str, Any]) -> str:
    failed = next((c for c in result.get("checks") or [] if not c["ok"]), None)
    if failed:
        return f"{failed['name']}: {failed['detail']}"
    if result.get("needs_package"):
        return str(result["needs_package"])
    if result.get("error"):
        return str(result["error"]).strip().splitlines()[-1]
    uncovered = [b for b in result.get("branches") or [] if not (b["true"] and b["false"])]
    if uncovered:
        return f"a branch of the tf.cond on {branch_place(uncovered[0])} was never taken"
    return "; ".join(result.get("warnings") or []) or "not proven"


def gate_fixes(
    result: RunResult, settings: Settings, jobs: int | None = None, python: str | None = None
) -> list[dict[str, Any]]:
    """Verify every fixed file and withhold the fixes of functions that do
    not verify. Mutates `result`; returns the verification results. Raises
    `ConfigError` or `pool.EnvironmentProblem`."""
    vs = verify_settings_of(settings)
    changed = [r for r in result.files if r.changed and r.source is not None]
    targets = []
    for r in changed:
        module = module_name_for(Path(r.path), settings.root)
        targets.extend(
            t
            for t in pair_targets(
                r.path,
                module,
                python_of(r.path, r.source or ""),
                python_of(r.path, r.fixed_source or ""),
                vs,
                cells=(cells_of(r.path, r.source or ""), cells_of(r.path, r.fixed_source or "")),
            )
            if t.rewrite_source
        )
    verdicts = verify_targets(targets, vs, settings.root, jobs, python)
    rejected: dict[
        str, dict[str, dict[str, Any]]
    ] = {}  # path -> changed function -> failing result
    for target, outcome in zip(targets, verdicts, strict=True):
        if outcome["verdict"] != "equivalent":
            for name in target.covers:
                rejected.setdefault(target.path, {}).setdefault(name, outcome)
    for r in changed:
        _withhold(r, rejected.get(r.path, {}))
    return verdicts


def _withhold(r: FileResult, rejected: dict[str, dict[str, Any]]) -> None:
    if not rejected:
        return
    if r.path.endswith(NOTEBOOK_SUFFIX):  # cells are not restored one function at a time
        reason = next(iter(rejected.values()))
        for finding in r.fixes_applied:
            message = (
                f"{finding.message} (fix not applied: verification {reason['verdict']} "
                f"in this notebook: {_why(reason)})"
            )
            r.findings.append(dataclasses.replace(finding, message=message))
        r.fixes_applied = []
        r.fixed_source = r.source
        r.findings.sort(key=Finding.sort_key)
        return
    restored = restore_functions(r.source or "", r.fixed_source or "", set(rejected))
    tree = ast.parse(r.source or "")
    final_tree = ast.parse(restored) if restored is not None else tree
    kept: list[Finding] = []
    for finding in r.fixes_applied:
        where = enclosing_function(tree, finding.start.line)
        outcome = rejected.get(where) if where else None
        if restored is None or outcome is not None:
            reason = outcome or next(iter(rejected.values()))
            message = (
                f"{finding.message} (fix not applied: verification "
                f"{reason['verdict']}: {_why(reason)})"
            )
            # Findings point into the text as written: the restored function may have moved.
            shift = _span(final_tree, where)[0] - _span(tree, where)[0] if where else 0
            r.findings.append(
                dataclasses.replace(
                    finding,
                    message=message,
                    start=Position(finding.start.line + shift, finding.start.column),
                    end=Position(finding.end.line + shift, finding.end.column),
                )
            )
        else:
            kept.append(finding)
    r.fixes_applied = kept
    r.fixed_source = restored if restored is not None else r.source
    r.findings.sort(key=Finding.sort_key)


def run_gate(
    result: RunResult, settings: Settings, jobs: int | None = None, quiet: bool = False
) -> None:
    """`fix --verify` on the command line: verify, withhold, and say what
    happened on standard error. Exits 2 when verification cannot run."""
    import typer

    from tfrewrite.config import ConfigError
    from tfrewrite.verify.pool import EnvironmentProblem

    try:
        verdicts = gate_fixes(result, settings, jobs)
    except (ConfigError, EnvironmentProblem) as err:
        typer.echo(f"tfrewrite: error: fix --verify: {err}", err=True)
        raise typer.Exit(2) from err
    if quiet:
        return
    for outcome in verdicts:
        where = location(outcome)
        line = f"verify: {where}: {outcome['function']}: {outcome['verdict']}"
        if outcome["verdict"] != "equivalent":
            line += f" ({_why(outcome)}); its fixes were not applied"
        typer.echo(line, err=True)
