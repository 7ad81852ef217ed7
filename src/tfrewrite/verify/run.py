"""Turn targets into worker requests and collect one result per target.

Shared by `tfrewrite verify` and `tfrewrite fix --verify`, whichever
scheduler runs the requests (the local pool, a Ray cluster: `scheduler`).
No TensorFlow here: it is imported only by the workers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfrewrite.facts.index import build_index, module_name_for
from tfrewrite.facts.project import compute_facts
from tfrewrite.verify.pool import LocalPool, run_requests
from tfrewrite.verify.progress import ProgressLine
from tfrewrite.verify.project_imports import import_roots, package_of
from tfrewrite.verify.results_file import ResultsFile, result_key
from tfrewrite.verify.scheduler import Scheduler, run_all
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.verify.targets import Target
from tfrewrite.workspace.line_names import CellStarts, cell_position, place_lines


def traced_functions(sources: dict[str, str], root: Path) -> dict[str, dict[str, str]]:
    """path -> {qualname: why it runs traced}, from the project's pass-1 index."""
    indexes = [
        build_index(src, path, module_name_for(Path(path), root)) for path, src in sources.items()
    ]
    facts = compute_facts([i for i in indexes if i.syntax_error is None])
    return {path: {q: t.reason for q, t in facts.for_path(path).items()} for path in sources}


def _payload(target: Target, settings: VerifySettings, root: Path) -> dict[str, Any]:
    folder = str(Path(target.path).resolve().parent)
    # Imported as the project imports it: inside its package, from the folder
    # above the outermost package (relative imports and the package's own
    # absolute imports both resolve), with the script's folder and the
    # project root on the path too. Outside any `__init__.py` package the
    # folders below the project root are namespace packages.
    package, import_root = package_of(target.path)
    package = package or target.module.rpartition(".")[0] or None
    before, after = import_roots(target.path, target.original_source)
    if before:  # the file's folder would shadow the package its imports name
        import_root = folder = before[0]
    return {
        "qualname": target.qualname,
        "original_source": target.original_source,
        "rewrite_source": target.rewrite_source,
        "path": target.path,
        "package": package,
        "specs": {k: v.to_json() for k, v in (target.specs or {}).items()},
        "config_key": f"{target.module}:{target.qualname}",
        "harness": target.harness,
        "loop": target.loop,
        "factory": target.factory,
        "caller": target.caller,
        "needs_autograph": target.needs_autograph,
        "stand_in_hint": target.stand_in_hint,
        "fixes": list(target.fixes),
        "options": settings.worker_options(),
        "sys_path": list(
            dict.fromkeys([*before, import_root, folder, *after, str(root.resolve())])
        ),
    }


@dataclass
class RunOptions:
    """How `verify_targets` runs what it runs, beyond the defaults of the
    API (`fix --verify`): which scheduler, where results stream, progress."""

    # Builds the scheduler for this many requests (default: the local pool).
    scheduler: Callable[[int], Scheduler] | None = None
    results: ResultsFile | None = None
    resume: bool = False
    progress: bool = False


def verify_targets(
    targets: list[Target],
    settings: VerifySettings,
    root: Path,
    jobs: int | None = None,
    python: str | None = None,
    timeout: float | None = None,
    run: RunOptions | None = None,
) -> list[dict[str, Any]]:
    """One result per target, in target order. Targets that cannot be run
    (no inputs) are "not proven" without starting a worker. Raises
    `pool.EnvironmentProblem` when TensorFlow cannot be used at all."""
    runnable = [t for t in targets if t.problem is None]
    jobs = jobs or min(os.cpu_count() or 1, 4)
    python = python or settings.python
    limit = timeout if timeout is not None else settings.timeout
    payloads = [_payload(t, settings, root) for t in runnable]
    if run is None:
        answers = run_requests(payloads, jobs, python, limit)
    else:
        scheduler = run.scheduler or (lambda n: LocalPool(min(jobs, n), python))
        answers = _stream(payloads, limit, run, scheduler)
    by_target = dict(zip(map(id, runnable), answers, strict=True))
    results = []
    for t in targets:
        data = by_target.get(id(t)) or {
            "function": t.qualname,
            "mode": "rewrite",
            "verdict": "not proven",
            "checks": [],
            "branches": [],
            "divergences": [],
            "warnings": [t.problem],
            "unproven": t.problem,
        }
        data = _placed(dict(data), t.cell_starts, t.rewrite_cell_starts)
        data.update(
            {
                "path": t.path,
                "line": t.line,
                "reason": place_lines(t.reason, t.cell_starts),
                "function": place_lines(t.qualname, t.cell_starts),
            }
        )
        if t.cell_starts:  # a notebook: positions in cells, as `check` gives them
            data["cell"], data["line"] = cell_position(t.cell_starts, t.line)
            for branch in data.get("branches") or []:
                branch["cell"], branch["line"] = cell_position(
                    t.rewrite_cell_starts, branch["line"]
                )
        data.setdefault("mode", "rewrite" if t.rewrite_source is not None else "original")
        results.append(data)
    return results


def _placed(value: Any, starts: CellStarts, rewrite_starts: CellStarts) -> Any:
    """`value` (a result, as the worker gives it) with the lines its texts
    name (`workspace.line_names`) named for the file's reader: "line 9" in a
    `.py` file, "cell 3, line 4" in a notebook."""
    if isinstance(value, str):
        return place_lines(value, starts, rewrite_starts)
    if isinstance(value, list):
        return [_placed(v, starts, rewrite_starts) for v in value]
    if isinstance(value, dict):
        return {k: _placed(v, starts, rewrite_starts) for k, v in value.items()}
    return value


def _stream(
    payloads: list[dict[str, Any]],
    limit: float,
    run: RunOptions,
    make_scheduler: Callable[[int], Scheduler],
) -> list[dict[str, Any]]:
    """The answers to `payloads`, reusing the results file's with `resume`,
    each new one appended to it (and counted on the progress line) as it
    finishes."""
    keys = [result_key(p) for p in payloads]
    store = run.results
    kept: dict[str, dict[str, Any]] = {}
    if store is not None:
        try:
            kept = store.start(run.resume, set(keys))
        except OSError as err:  # a read-only tree: verify anyway, keep nothing
            print(f"tfrewrite: warning: cannot write {store.path}: {err}", file=sys.stderr)
            store = None
    answers: list[dict[str, Any] | None] = [kept.get(k) for k in keys]
    todo = [i for i, a in enumerate(answers) if a is None]
    progress: ProgressLine | None = None
    try:
        if todo:
            scheduler = make_scheduler(len(todo))
            if run.progress:
                progress = ProgressLine(
                    len(payloads), len(payloads) - len(todo), scheduler.description
                )
                progress.show()

            def finished(j: int, answer: dict[str, Any]) -> None:
                i = todo[j]
                answers[i] = answer
                if store is not None:
                    store.add(keys[i], answer, payloads[i].get("path"))
                if progress is not None:
                    progress.advance()

            aborted = True
            try:
                run_all(scheduler, [payloads[i] for i in todo], limit, finished)
                aborted = False
            finally:
                scheduler.close(abort=aborted)
    finally:
        if progress is not None:
            progress.clear()
        if store is not None:
            store.close()
    return [a for a in answers if a is not None]
