"""`tfrewrite verify`: prove rewrites by running eager against traced.

    tfrewrite verify PATH ...                 the pending rewrite of PATH vs PATH as it is
    tfrewrite verify --original OLD.py NEW.py an applied rewrite vs the file before it
    tfrewrite verify --base REV [PATH ...]    every changed .py file since git revision REV
    tfrewrite verify --ray ...                the same on Ray actors (`ray_cluster`)
    tfrewrite verify --ray-address auto ...   ... of an existing Ray cluster
    tfrewrite verify --resume ...             only what changed or did not finish last time

Exit codes: 0 everything equivalent (or consistent), 1 a mismatch, a
divergence or a function not proven, 2 an error (a function that cannot be
loaded or run, no TensorFlow, bad configuration).

It executes the user's code, in worker processes (`--python` picks their
interpreter) or Ray actors; this module itself never imports TensorFlow or
Ray. Results stream to a results file as they finish (`results_file`).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tfrewrite.config import DEFAULT_EXCLUDE, ConfigError, Settings, find_config, load_settings
from tfrewrite.verify.fix_kinds import AUTOGRAPH_RULES
from tfrewrite.verify.report import EXIT_ERROR, exit_code, render_json, render_text
from tfrewrite.workspace.line_names import named_line
from tfrewrite.workspace.notebook import NOTEBOOK_SUFFIX, cells_of, python_of
from tfrewrite.workspace.sources import read_source

# The command line imports this module to register `verify`: what only a
# verification needs (target discovery, the worker pool) loads when one runs,
# so `check` and `fix` do not pay for it.
if TYPE_CHECKING:
    import ast

    from tfrewrite.findings import FileError, FileResult
    from tfrewrite.verify.run import RunOptions
    from tfrewrite.verify.scheduler import Scheduler
    from tfrewrite.verify.settings import VerifySettings
    from tfrewrite.verify.targets import Target


LOCAL_RAY = "local"  # `--ray` without `--ray-address`


class VerifyFormat(str, Enum):
    text = "text"
    json = "json"


class UsageProblem(Exception):
    """Bad arguments, unreadable files, git failures: exit 2."""


def _fail(message: str) -> typer.Exit:
    typer.echo(f"tfrewrite: error: {message}", err=True)
    return typer.Exit(EXIT_ERROR)


def load_verify_settings(config: Path | None, start: Path) -> tuple[Settings, VerifySettings]:
    if config is not None:
        if not config.is_file():
            raise ConfigError(f"configuration file not found: {config}")
        settings = load_settings(config)
    else:
        settings = load_settings(find_config(start if start.exists() else Path.cwd()), [start])
    from tfrewrite.verify.settings import verify_settings_of

    return settings, verify_settings_of(settings)


def _read(path: Path) -> str:
    try:
        return read_source(path).text
    except (OSError, UnicodeDecodeError) as err:
        raise UsageProblem(f"{path}: cannot read: {err}") from err


def targets_for_paths(
    paths: list[Path],
    settings: Settings,
    vs: VerifySettings,
    file_errors: list[FileError] | None = None,
) -> list[Target]:
    """The pending rewrite of each file against the file as it is, plus
    divergence checks for traced functions the rewrite leaves alone. A file
    that cannot be read or parsed is left out and added to `file_errors`
    (the others are still verified), or, without that list, stops the run."""
    from tfrewrite.facts.index import module_name_for
    from tfrewrite.pipeline.engine import InputFile, RunOptions, run
    from tfrewrite.rules import select_rules
    from tfrewrite.verify.run import traced_functions
    from tfrewrite.verify.targets import pair_targets
    from tfrewrite.workspace.discovery import discover

    for path in paths:
        if not path.exists():
            raise UsageProblem(f"{path}: no such file or folder")
    exclude = (*DEFAULT_EXCLUDE, *settings.exclude, *settings.extend_exclude)
    files = [InputFile(str(p)) for p in discover(paths, settings.root, exclude)]
    rules = select_rules(list(settings.select), list(settings.ignore))
    options = RunOptions(
        rule_codes=tuple(r.code for r in rules),
        root=str(settings.root),
        per_file_ignores=tuple(settings.per_file_ignores.items()),
        fix=True,
        unsafe_fixes=settings.unsafe_fixes,
    )
    result = run(files, options)
    if result.errors and file_errors is None:
        raise UsageProblem("; ".join(e.describe() for e in result.errors))
    if file_errors is not None:
        file_errors.extend(result.errors)
    sources = {r.path: python_of(r.path, r.source) for r in result.files if r.source is not None}
    traced = traced_functions(sources, settings.root)
    targets: list[Target] = []
    for r in result.files:
        if r.source is None:
            continue
        module = module_name_for(Path(r.path), settings.root)
        fixed = r.fixed_source if r.fixed_source is not None else r.source
        rewrite, original = python_of(r.path, fixed), python_of(r.path, r.source)
        cells = (cells_of(r.path, r.source), cells_of(r.path, fixed))
        paired = pair_targets(r.path, module, original, rewrite, vs, traced.get(r.path, {}), cells)
        targets.extend(with_fixes(paired, r, original))
    return targets


def with_fixes(targets: list[Target], r: FileResult, original: str) -> list[Target]:
    """`targets` of one file, each with the fixes it vouches for: a fix
    takes the verdict of the target that runs its code (the function that
    holds it, the module-level loop replayed around it, the module-level
    statement it changed). Fixes no target runs get a "not proven" target of
    their own that names them, so the coverage line counts every fix."""

    from tfrewrite.verify.gate import enclosing_function
    from tfrewrite.verify.targets import Target, switches_graphs_off, syntax_tree

    if not r.fixes_applied or r.cells is not None:
        return targets  # a notebook's fixes name cell lines: counted by function
    tree = syntax_tree(original)
    held: dict[int, list[str]] = {}
    unchecked: list[str] = []
    for fix in r.fixes_applied:
        line = fix.start.line
        label = f"{fix.code} {named_line(line)}"
        name = enclosing_function(tree, line)
        top = None if name is not None else _top_level_statement(tree, line)

        def runs_it(t: Target, name: str | None = name, top: ast.stmt | None = top) -> bool:
            if t.rewrite_source is None:
                return False
            if name is not None:
                return name in t.covers
            if top is not None and switches_graphs_off(top):
                return t.problem is None  # checked through each traced function
            return (
                top is not None
                and t.line == top.lineno
                and (t.loop is not None or t.qualname.startswith("<module"))
            )

        owner = next((i for i, t in enumerate(targets) if runs_it(t)), None)
        if owner is None:
            unchecked.append(label)
        else:
            held.setdefault(owner, []).append(label)
    kept = _needs_autograph(r)
    result = [
        dataclasses.replace(
            t,
            fixes=tuple(held.get(i, t.fixes)),
            needs_autograph=next((why for name, why in kept if name in t.covers), None),
        )
        if i in held or any(name in t.covers for name, _ in kept)
        else t
        for i, t in enumerate(targets)
    ]
    if unchecked:
        first = min(f.start.line for f in r.fixes_applied)
        result.append(
            Target(
                r.path,
                "<fixes not run>",
                first,
                original,
                original,
                targets[0].module if targets else "",
                "fixes in code verify does not run",
                problem=f"{', '.join(unchecked)}: outside any function verify runs or "
                "training loop it replays; review these fixes",
                fixes=tuple(unchecked),
            )
        )
    return result


def _needs_autograph(r: FileResult) -> list[tuple[str, str]]:
    """(function, why) for each function of the rewrite that still holds a
    statement only AutoGraph runs traced (a tensor `if` a fix was refused)."""
    from tfrewrite.verify.gate import enclosing_function
    from tfrewrite.verify.targets import syntax_tree

    left = [f for f in r.findings if f.code in AUTOGRAPH_RULES]
    if not left or r.fixed_source is None or r.cells is not None:
        return []
    tree = syntax_tree(r.fixed_source)  # parsed already to pair the targets
    found = []
    for finding in left:
        name = enclosing_function(tree, finding.start.line)
        if name is not None:
            found.append((name, f"{named_line(finding.start.line)}: {finding.code} not rewritten"))
    return found


def _top_level_statement(tree: ast.Module, line: int) -> ast.stmt | None:
    """The module-level statement (or statement of the
    `if __name__ == "__main__":` block) that holds `line`."""
    from tfrewrite.verify.module_slice import is_main_guard

    for stmt in tree.body:
        body = stmt.body if is_main_guard(stmt) else [stmt]  # type: ignore[attr-defined]
        for inner in body:
            if inner.lineno <= line <= (inner.end_lineno or inner.lineno):
                return inner
    return None


def targets_for_pair(old: Path, new: Path, settings: Settings, vs: VerifySettings) -> list[Target]:
    from tfrewrite.facts.index import module_name_for
    from tfrewrite.verify.targets import pair_targets

    module = module_name_for(new, settings.root)
    before, after = _read(old), _read(new)
    original, rewrite = python_of(str(old), before), python_of(str(new), after)
    cells = (cells_of(str(old), before), cells_of(str(new), after))
    return pair_targets(str(new), module, original, rewrite, vs, cells=cells)


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as err:
        raise UsageProblem(f"cannot run git: {err.strerror}") from err
    if done.returncode != 0:
        raise UsageProblem(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def targets_for_base(
    rev: str, paths: list[Path], settings: Settings, vs: VerifySettings
) -> list[Target]:
    """Every Python file changed between `rev` and the working tree."""
    from tfrewrite.facts.index import module_name_for
    from tfrewrite.verify.targets import pair_targets

    cwd = Path.cwd()
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    names = _git(
        ["diff", "--name-only", "--diff-filter=M", rev, "--", *map(str, paths)], cwd
    ).splitlines()
    targets: list[Target] = []
    for name in names:
        if not name.endswith((".py", NOTEBOOK_SUFFIX)):
            continue
        path = top / name
        old = _git(["show", f"{rev}:{name}"], top)
        try:
            shown = str(path.relative_to(cwd))
        except ValueError:
            shown = str(path)
        new = _read(path)
        targets.extend(
            pair_targets(
                shown,
                module_name_for(path, settings.root),
                python_of(name, old),
                python_of(name, new),
                vs,
                cells=(cells_of(name, old), cells_of(name, new)),
            )
        )
    return targets


def project_folder(root: Path, targets: list[Target]) -> Path:
    """The folder shipped to a Ray cluster: the project root when it holds
    every verified file, else the folder the verified files share (files
    verified from outside the project found no configuration, and the root
    fell back to the working directory)."""
    root = root.resolve()
    files = [Path(t.path).resolve() for t in targets]
    if all(root in f.parents for f in files):
        return root
    shared = Path(os.path.commonpath([str(f.parent) for f in files]))
    return shared if len(shared.parts) > 2 else root  # never `/` or `/home`


def _run_options(
    targets: list[Target],
    settings: Settings,
    ray: str | None,
    jobs: int | None,
    results: Path | None,
    resume: bool,
    progress: bool | None,
    no_cache: bool = False,
) -> RunOptions:
    """Where the targets run (the local pool, or Ray), where their results
    stream (nowhere with `--no-cache` and no `--results`), and whether a
    progress line is drawn."""
    from tfrewrite.pipeline.cache import CACHE_DIR_NAME
    from tfrewrite.verify.results_file import ResultsFile, default_path
    from tfrewrite.verify.run import RunOptions

    cache_root = settings.cache_dir or settings.root / CACHE_DIR_NAME
    store: ResultsFile | None = None
    if results is not None:
        store = ResultsFile(results)
    elif not no_cache:
        store = ResultsFile(default_path(cache_root), cache_root)
    scheduler = None
    if ray is not None:

        def scheduler(requests: int) -> Scheduler:
            from tfrewrite.verify.ray_cluster import RayScheduler

            address = None if ray == LOCAL_RAY else ray
            return RayScheduler(address, project_folder(settings.root, targets), jobs, requests)

    show = sys.stderr.isatty() if progress is None else progress
    return RunOptions(scheduler=scheduler, results=store, resume=resume, progress=show)


def _keep_generated_harnesses(
    targets: list[Target], results: list[dict[str, Any]], settings: Settings
) -> None:
    """Write each harness verify wrote for a train step (`stand_ins`) to the
    cache folder, where the user can take it from, and say where."""
    from tfrewrite.pipeline.cache import CACHE_DIR_NAME

    folder = (settings.cache_dir or settings.root / CACHE_DIR_NAME) / "verify" / "harnesses"
    for target, result in zip(targets, results, strict=True):
        source = result.get("generated_harness")
        if not source:
            continue
        path = folder / (f"{target.module}_{target.qualname}".replace(".", "_") + "_harness.py")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(source, encoding="utf-8")
        except OSError:
            continue
        result.setdefault("warnings", []).append(
            f"the harness verify wrote is {path}: copy it beside your code, build your model in "
            f'it and set [tool.tfrewrite.verify] harness."{target.module}:{target.qualname}" = '
            f'"{path.stem}:build"'
        )


def register(app: typer.Typer) -> None:
    """Add the `verify` command to the command line."""

    @app.command()
    def verify(
        paths: Annotated[
            list[Path] | None,
            typer.Argument(help="Files or folders (with --original: the rewritten file)."),
        ] = None,
        original: Annotated[
            Path | None,
            typer.Option("--original", help="The file before an applied rewrite; PATH is after."),
        ] = None,
        base: Annotated[
            str | None,
            typer.Option("--base", help="Verify every .py file changed since this git revision."),
        ] = None,
        output_format: Annotated[
            VerifyFormat,
            typer.Option("--output-format", help="text or json.", case_sensitive=False),
        ] = VerifyFormat.text,
        timeout: Annotated[
            float | None,
            typer.Option("--timeout", min=0.1, help="Seconds per function before it is killed."),
        ] = None,
        jobs: Annotated[
            int | None, typer.Option("--jobs", "-j", min=1, help="Worker processes.")
        ] = None,
        python: Annotated[
            str | None,
            typer.Option("--python", help="Interpreter for the workers (a venv with TensorFlow)."),
        ] = None,
        config: Annotated[
            Path | None, typer.Option("--config", help="pyproject.toml to read.")
        ] = None,
        xla: Annotated[
            bool | None,
            typer.Option("--xla/--no-xla", help="Also try jit_compile=True (default: on)."),
        ] = None,
        unsafe_fixes: Annotated[
            bool | None,
            typer.Option(
                "--unsafe-fixes/--no-unsafe-fixes",
                help="Verify the pending rewrite with unsafe fixes too (PATH mode).",
            ),
        ] = None,
        ray: Annotated[
            bool,
            typer.Option(
                "--ray",
                help=(
                    "Run the targets on Ray actors: a Ray instance started on this "
                    "machine for the run, or the cluster of --ray-address (or of "
                    "RAY_ADDRESS). Needs pip install 'tfrewrite[ray]'."
                ),
            ),
        ] = False,
        ray_address: Annotated[
            str | None,
            typer.Option(
                "--ray-address",
                metavar="ADDRESS",
                help=(
                    "An existing Ray cluster (implies --ray): `auto` (the one "
                    "`ray start` runs here), host:6379 or ray://host:10001. "
                    "The project folder is shipped to it."
                ),
            ),
        ] = None,
        results_file: Annotated[
            Path | None,
            typer.Option(
                "--results",
                metavar="FILE",
                help=(
                    "Stream results to FILE (JSON lines) as they finish "
                    "(default: .tfrewrite_cache/verify/verify-results.jsonl)."
                ),
            ),
        ] = None,
        resume: Annotated[
            bool,
            typer.Option(
                "--resume",
                help=(
                    "Reuse the results file's verdicts for targets whose source, "
                    "rewrite and options did not change; run only the rest."
                ),
            ),
        ] = False,
        progress: Annotated[
            bool | None,
            typer.Option(
                "--progress/--no-progress",
                help="A progress line on stderr (default: when stderr is a terminal).",
            ),
        ] = None,
        no_cache: Annotated[
            bool,
            typer.Option(
                "--no-cache",
                help="Write no results file in the cache folder (--results still names one).",
            ),
        ] = False,
    ) -> None:
        """Prove rewrites: the original run eagerly against the rewrite traced.

        Inputs are synthesised, found by search, configured, built by a
        harness, or captured from the code that calls the function (its
        file's `main()` or `__main__` block, or a test after `setUp`)."""
        from tfrewrite.verify.pool import EnvironmentProblem
        from tfrewrite.verify.run import verify_targets

        paths = paths or []
        file_errors: list[FileError] = []
        try:
            settings, vs = load_verify_settings(config, paths[0] if paths else Path.cwd())
            if unsafe_fixes is not None:
                settings = dataclasses.replace(settings, unsafe_fixes=unsafe_fixes)
            if original is not None:
                if len(paths) != 1:
                    raise UsageProblem(
                        "--original OLD.py takes exactly one PATH: the rewritten file"
                    )
                if base is not None:
                    raise UsageProblem("--original and --base cannot be combined")
                targets = targets_for_pair(original, paths[0], settings, vs)
            elif base is not None:
                targets = targets_for_base(base, paths, settings, vs)
            else:
                targets = targets_for_paths(paths or [Path(".")], settings, vs, file_errors)
        except (ConfigError, UsageProblem) as err:
            raise _fail(str(err)) from err
        for error in file_errors:  # reported, left out; the other files are verified
            typer.echo(f"error: {error.describe()}", err=True)
        if xla is not None:
            vs = dataclasses.replace(vs, xla=xla)
        if resume and no_cache and results_file is None:
            raise _fail("--resume reads the results file: give --results FILE with --no-cache")
        cluster = ray_address if ray_address is not None else (LOCAL_RAY if ray else None)
        run = _run_options(
            targets, settings, cluster, jobs, results_file, resume, progress, no_cache
        )
        try:
            results = verify_targets(targets, vs, settings.root, jobs, python, timeout, run)
        except EnvironmentProblem as err:
            raise _fail(str(err)) from err
        for target, result in zip(targets, results, strict=True):
            if target.fixes:
                result["fixes"] = list(target.fixes)
        if not no_cache:
            _keep_generated_harnesses(targets, results, settings)
        typer.echo(
            render_json(results) if output_format == VerifyFormat.json else render_text(results)
        )
        raise typer.Exit(EXIT_ERROR if file_errors else exit_code(results))
