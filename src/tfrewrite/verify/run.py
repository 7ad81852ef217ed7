"""Turn targets into worker requests and collect one result per target.

Shared by `tfrewrite verify` and `tfrewrite fix --verify`. No TensorFlow here:
it is imported only by the worker processes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tfrewrite.facts.index import build_index, module_name_for
from tfrewrite.facts.project import compute_facts
from tfrewrite.verify.pool import run_requests
from tfrewrite.verify.project_imports import import_roots, package_of
from tfrewrite.verify.settings import VerifySettings
from tfrewrite.verify.targets import Target


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
        "options": settings.worker_options(),
        "sys_path": list(
            dict.fromkeys([*before, import_root, folder, *after, str(root.resolve())])
        ),
    }


def verify_targets(
    targets: list[Target],
    settings: VerifySettings,
    root: Path,
    jobs: int | None = None,
    python: str | None = None,
    timeout: float | None = None,
) -> list[dict[str, Any]]:
    """One result per target, in target order. Targets that cannot be run
    (no inputs) are "not proven" without starting a worker. Raises
    `pool.EnvironmentProblem` when TensorFlow cannot be used at all."""
    runnable = [t for t in targets if t.problem is None]
    jobs = jobs or min(os.cpu_count() or 1, 4)
    answers = run_requests(
        [_payload(t, settings, root) for t in runnable],
        jobs,
        python or settings.python,
        timeout if timeout is not None else settings.timeout,
    )
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
        }
        data.update({"path": t.path, "line": t.line, "reason": t.reason, "function": t.qualname})
        data.setdefault("mode", "rewrite" if t.rewrite_source is not None else "original")
        results.append(data)
    return results
