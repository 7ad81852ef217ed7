"""The `tfrewrite` command line, following Ruff's conventions.

Exit codes: 0 nothing found (or everything fixed), 1 findings remain or
`--diff` has a diff, 2 bad usage, bad configuration, a file that could not be
read or parsed, files left unchecked by a worker that died, or an internal
error; 130 interrupted (Ctrl-C), 143 terminated (SIGTERM). `--exit-zero` turns
only the 1 into 0.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from tfrewrite import __version__
from tfrewrite import rules as rule_registry
from tfrewrite.config import DEFAULT_EXCLUDE, ConfigError, Settings, find_config, load_settings
from tfrewrite.findings import FileError, FileResult
from tfrewrite.pipeline.cache import CACHE_DIR_NAME, Cache
from tfrewrite.pipeline.cache import clean as clean_cache
from tfrewrite.pipeline.engine import RunResult, input_from_stdin, run
from tfrewrite.pipeline.run_options import InputFile, RunOptions
from tfrewrite.report import FORMATS, FORMATS_WITH_EDITS, ReportContext
from tfrewrite.report.text import render_statistics, summary
from tfrewrite.rules import UnknownRuleError, select_codes, validate_selectors
from tfrewrite.verify.command import register as register_verify
from tfrewrite.workspace.diffs import display_path, file_diff
from tfrewrite.workspace.discovery import find_files
from tfrewrite.workspace.sources import WriteRefused, encode_source, write_fixed

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

app = typer.Typer(
    name="tfrewrite",
    help="Find TensorFlow code that changes behaviour under @tf.function tracing, "
    "rewrite it into graph-safe TensorFlow, and verify the rewrite.\n\n"
    "Settings are read from `[tool.tfrewrite]` in the nearest pyproject.toml "
    "(or the file given with --config).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help: rich markup would eat `[tool.tfrewrite]` and print `<bool>` after flags.
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

OutputFormat = Enum(  # type: ignore[misc]
    "OutputFormat", {name.replace("-", "_"): name for name in FORMATS}, type=str
)

PathsArg = Annotated[
    Optional[list[Path]],
    typer.Argument(
        help="Files or folders to check; `-` reads standard input.",
        show_default=False,
        metavar="PATHS",
    ),
]
SelectOpt = Annotated[
    Optional[str],
    typer.Option(
        "--select",
        metavar="CODES",
        help="Comma-separated rule codes or prefixes to enable (e.g. TFR1,TFR301).",
    ),
]
IgnoreOpt = Annotated[
    Optional[str],
    typer.Option(
        "--ignore", metavar="CODES", help="Comma-separated rule codes or prefixes to disable."
    ),
]
FormatOpt = Annotated[
    Optional[OutputFormat],  # type: ignore[valid-type]
    typer.Option(
        "--output-format",
        metavar="FORMAT",
        help=f"How to print findings: {', '.join(FORMATS)}.",
        case_sensitive=False,
    ),
]
StatisticsOpt = Annotated[bool, typer.Option("--statistics", help="Show counts per rule.")]
ExitZeroOpt = Annotated[
    bool,
    typer.Option("--exit-zero", help="Exit 0 even when findings remain (errors still exit 2)."),
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option(
        "--config",
        metavar="PATH",
        help="Read settings from this pyproject.toml ([tool.tfrewrite] table) or from a TOML "
        "file of those keys (default: the nearest pyproject.toml with [tool.tfrewrite]).",
        show_default=False,
    ),
]
JobsOpt = Annotated[
    Optional[int],
    typer.Option("--jobs", "-j", min=1, metavar="N", help="Worker processes (default: all cores)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Print findings only, no summary.")]
NoCacheOpt = Annotated[
    bool, typer.Option("--no-cache", help="Neither read nor write the cache (.tfrewrite_cache/).")
]
StdinOpt = Annotated[
    Optional[str],
    typer.Option(
        "--stdin-filename", metavar="NAME", help="Name of the file read from standard input."
    ),
]
UnsafeOpt = Annotated[
    Optional[bool],
    typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also apply (or show) unsafe fixes."),
]
ShowFixesOpt = Annotated[bool, typer.Option("--show-fixes", help="List the fixes applied.")]
DiffOpt = Annotated[
    bool,
    typer.Option(
        "--diff", help="Print a unified diff of the fixes and write nothing (exit 1 if any)."
    ),
]


def _split(value: str | None) -> list[str]:
    return [part.strip().upper() for part in (value or "").split(",") if part.strip()]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"tfrewrite: error: {message}", err=True)
    return typer.Exit(EXIT_ERROR)


def _settings(config: Path | None, paths: list[Path]) -> Settings:
    if config is not None:
        if not os.path.isfile(config):
            raise _fail(f"configuration file not found: {config}")
        return load_settings(config)
    start = next((p for p in paths if str(p) != "-"), Path.cwd())
    return load_settings(find_config(start if os.path.exists(start) else Path.cwd()), paths)


@dataclass
class _Inputs:
    """What a run reads: the files, and the paths that failed before any
    file was read (reported with the run's other errors)."""

    files: list[InputFile]
    options: RunOptions
    settings: Settings
    errors: list[FileError] = field(default_factory=list)
    stdin_bytes: bytes | None = None  # standard input that could not be decoded


def _read_stdin(name: str, inputs: _Inputs) -> None:
    data = sys.stdin.buffer.read()
    try:
        inputs.files.append(input_from_stdin(data, name))
        return
    except (UnicodeDecodeError, SyntaxError) as err:  # SyntaxError: from the cookie check
        problem = (
            "standard input is not UTF-8 and has no coding cookie; add one such as "
            "`# -*- coding: latin-1 -*-`"
        )
        if "unknown encoding" in str(err):
            problem = f"cannot read standard input: {err}"
    except ValueError as err:  # binary data
        problem = f"cannot read standard input: {err}"
    inputs.errors.append(FileError(name, problem))
    inputs.stdin_bytes = data


def _prepare(
    paths: list[Path] | None,
    select: str | None,
    ignore: str | None,
    config: Path | None,
    stdin_filename: str | None,
    unsafe_fixes: bool | None,
    fix: bool,
    want_edits: bool,
) -> _Inputs:
    paths = paths or [Path(".")]
    try:
        settings = _settings(config, paths)
        selected = _split(select) or list(settings.select)
        ignored = [*settings.ignore, *_split(ignore)]
        validate_selectors([*selected, *ignored])
        for codes in settings.per_file_ignores.values():
            validate_selectors(codes)
    except (ConfigError, UnknownRuleError) as err:
        raise _fail(str(err)) from err
    exclude = (*DEFAULT_EXCLUDE, *settings.exclude, *settings.extend_exclude)
    found = find_files([p for p in paths if str(p) != "-"], settings.root, exclude)
    options = RunOptions(
        rule_codes=tuple(select_codes(selected, ignored)),
        root=str(settings.root),
        per_file_ignores=tuple(settings.per_file_ignores.items()),
        fix=fix,
        unsafe_fixes=settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes,
        want_edits=want_edits,
        rule_settings=(("print-output-stream", settings.print_output_stream),),
    )
    inputs = _Inputs([], options, settings, list(found.errors))
    if any(str(p) == "-" for p in paths):
        _read_stdin(stdin_filename or "<stdin>", inputs)
    inputs.files.extend(InputFile(str(p), explicit=p in found.explicit) for p in found.files)
    return inputs


# Runs over more files than this get a progress bar (on a terminal).
PROGRESS_THRESHOLD = 200

Progress = Callable[[str, int, int], None]


def _color() -> bool:
    """Colour on a terminal, unless `NO_COLOR` is set (https://no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@contextmanager
def _progress_bar(files: int, quiet: bool) -> Iterator[Progress | None]:
    """A progress bar on standard error for large runs on a terminal: one row
    per phase (indexing, checking, writing), each advancing as files finish."""
    if quiet or files < PROGRESS_THRESHOLD or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")))
    with Bar(*columns, console=console, transient=True) as bar:
        tasks: dict[str, object] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase.capitalize(), total=total)
            bar.update(tasks[phase], completed=done, total=total)  # type: ignore[arg-type]

        yield update


def _execute(
    inputs: _Inputs, jobs: int | None, progress: Progress | None, cache: Cache | None = None
) -> RunResult:
    """Run the engine; errors found before it ran join the result's errors.
    Files a dead worker left unchecked are named on one line of standard
    error (the exit code is then 2)."""
    result = run(
        inputs.files, inputs.options, jobs, progress=progress, cache=cache, fresh_workers=True
    )
    if result.unchecked:
        n = len(result.unchecked)
        names = ", ".join(display_path(path) for path in result.unchecked)
        typer.echo(
            f"tfrewrite: error: a worker process died; {n} file{'s' if n != 1 else ''} "
            f"not checked: {names}",
            err=True,
        )
    if inputs.errors:
        result.files.extend(FileResult(e.path, error=e) for e in inputs.errors)
        result.files.sort(key=lambda r: r.path)
    return result


def _report(
    result: RunResult,
    output_format: str,
    options: RunOptions,
    *,
    quiet: bool,
    statistics: bool,
    show_fixes: bool = False,
    fix_mode: bool = False,
) -> None:
    findings = result.findings
    errors = result.errors
    # After `fix`, remaining findings point into the fixed text.
    ctx = ReportContext(
        sources={
            r.path: r.fixed_source if fix_mode and r.fixed_source is not None else r.source
            for r in result.files
            if r.source is not None
        },
        cells={r.path: r.cells for r in result.files if r.cells is not None},
        color=_color(),
        show_fixes=show_fixes,
        unsafe_fixes=options.unsafe_fixes,
        files_checked=len(result.files),
        fix_mode=fix_mode,
        fixes_applied=result.fixes_applied,
    )
    if statistics:
        # As Ruff: the counts, then the summary line; errors on standard error.
        for error in errors:
            typer.echo(f"error: {error.describe()}", err=True)
        if findings:
            typer.echo(render_statistics(findings, options.unsafe_fixes))
        if not quiet:
            typer.echo(summary(findings, errors, ctx))
        return
    text = FORMATS[output_format](findings, errors, ctx)
    if quiet and output_format in ("text", "concise"):
        text = "\n".join(text.splitlines()[:-1])
    if text:
        typer.echo(text)


def _exit_code(result: RunResult, exit_zero: bool, findings_count: int | None = None) -> int:
    if result.errors or result.unchecked:
        return EXIT_ERROR
    remaining = len(result.findings) if findings_count is None else findings_count
    return EXIT_FINDINGS if remaining and not exit_zero else EXIT_CLEAN


@app.command()
def check(
    paths: PathsArg = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    output_format: FormatOpt = None,
    statistics: StatisticsOpt = False,
    exit_zero: ExitZeroOpt = False,
    config: ConfigOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    stdin_filename: StdinOpt = None,
    unsafe_fixes: UnsafeOpt = None,
    apply_fixes: Annotated[
        bool, typer.Option("--fix", help="Apply fixes, as `tfrewrite fix` does (Ruff's spelling).")
    ] = False,
    diff: Annotated[
        bool,
        typer.Option("--diff", help="Print the fixes as a diff and write nothing (implies --fix)."),
    ] = False,
    show_fixes: ShowFixesOpt = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Report tracing hazards; write nothing (unless --fix)."""
    if apply_fixes or diff:
        fix(
            paths=paths,
            diff=diff,
            unsafe_fixes=unsafe_fixes,
            show_fixes=show_fixes,
            select=select,
            ignore=ignore,
            output_format=output_format,
            statistics=statistics,
            exit_zero=exit_zero,
            config=config,
            jobs=jobs,
            quiet=quiet,
            stdin_filename=stdin_filename,
            verify=False,
        )
    fmt = output_format.value if output_format else "text"
    inputs = _prepare(
        paths,
        select,
        ignore,
        config,
        stdin_filename,
        unsafe_fixes,
        False,
        fmt in FORMATS_WITH_EDITS,
    )
    cache = None if no_cache else Cache(_cache_dir(inputs.settings), inputs.options)
    with _progress_bar(len(inputs.files), quiet) as progress:
        result = _execute(inputs, jobs, progress, cache)
    _report(result, fmt, inputs.options, quiet=quiet, statistics=statistics)
    raise typer.Exit(_exit_code(result, exit_zero))


@app.command()
def fix(
    paths: PathsArg = None,
    diff: DiffOpt = False,
    unsafe_fixes: UnsafeOpt = None,
    show_fixes: ShowFixesOpt = False,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    output_format: FormatOpt = None,
    statistics: StatisticsOpt = False,
    exit_zero: ExitZeroOpt = False,
    config: ConfigOpt = None,
    jobs: JobsOpt = None,
    quiet: QuietOpt = False,
    stdin_filename: StdinOpt = None,
    verify: Annotated[
        bool,
        typer.Option("--verify", help="Apply only fixes whose functions verify (runs your code)."),
    ] = False,
    no_cache: NoCacheOpt = False,
) -> None:
    """Apply fixes in place (`--diff` prints them instead)."""
    fmt = output_format.value if output_format else "text"
    if diff and fmt not in ("text", "concise"):
        _report_pending_fixes(
            paths, select, ignore, config, stdin_filename, unsafe_fixes, fmt, jobs, quiet, exit_zero
        )
    inputs = _prepare(
        paths, select, ignore, config, stdin_filename, unsafe_fixes, True, fmt in FORMATS_WITH_EDITS
    )
    options, settings = inputs.options, inputs.settings
    stdin_files = {f.path: f for f in inputs.files if f.source is not None}
    with _progress_bar(len(inputs.files), quiet) as progress:
        result = _execute(inputs, jobs, progress)
        if verify:
            from tfrewrite.verify.gate import run_gate

            run_gate(result, settings, jobs, quiet)
        changed = [r for r in result.files if r.changed]
        if not diff:
            _write_fixes([r for r in changed if r.path not in stdin_files], progress)
            changed = [r for r in changed if r.error is None]
            if not stdin_files and changed and _unsafe_left(result, options):
                cache = None if no_cache else Cache(_cache_dir(settings), _check_options(options))
                _judge_as_check(result, inputs, jobs, cache)

    if diff:
        for file_result in changed:
            typer.echo(
                file_diff(
                    file_result.path, file_result.source or "", file_result.fixed_source or ""
                ),
                nl=False,
            )
        for error in result.errors:
            typer.echo(f"error: {error.describe()}", err=True)
        if not quiet:
            n = len(result.fixes_applied)
            typer.echo(
                f"Would fix {n} finding{'s' if n != 1 else ''} in {len(changed)} "
                f"file{'s' if len(changed) != 1 else ''}.",
                err=True,
            )
        if result.errors or result.unchecked:
            raise typer.Exit(EXIT_ERROR)
        raise typer.Exit(EXIT_FINDINGS if changed and not exit_zero else EXIT_CLEAN)

    if stdin_files or inputs.stdin_bytes is not None:
        _echo_stdin(result, stdin_files, inputs.stdin_bytes)
        for error in result.errors:
            typer.echo(f"error: {error.describe()}", err=True)
        for finding in result.findings:
            typer.echo(
                f"{finding.location}: {finding.code} {finding.message}",
                err=True,
            )
    else:
        _report(
            result,
            fmt,
            options,
            quiet=quiet,
            statistics=statistics,
            show_fixes=show_fixes,
            fix_mode=True,
        )
    raise typer.Exit(_exit_code(result, exit_zero))


def _unsafe_left(result: RunResult, options: RunOptions) -> bool:
    """Whether the summary after `fix` will say "N more with
    `--unsafe-fixes`": findings remain and unsafe fixes were not applied."""
    return not options.unsafe_fixes and bool(result.findings)


def _check_options(options: RunOptions) -> RunOptions:
    import dataclasses

    return dataclasses.replace(options, fix=False)


def _judge_as_check(
    result: RunResult, inputs: _Inputs, jobs: int | None, cache: Cache | None
) -> None:
    """Replace the findings left after `fix` by what `check` finds in the
    files as written, so that "N more with `--unsafe-fixes`" is what `fix
    --unsafe-fixes` then fixes. The fix rounds judge the findings left in
    their last round each on its own; `check` also counts a finding that
    another fix resolves along ("fixed along with the fix on line N"). The
    files are analysed once more; the cache keeps the answer, so the next
    `check` is immediate."""
    again = run(
        [f for f in inputs.files if f.source is None],
        _check_options(inputs.options),
        jobs,
        cache=cache,
        fresh_workers=True,
    )
    if again.errors or again.unchecked:
        return  # keep what the fix run found: it is complete
    found = {r.path: r.findings for r in again.files}
    for file_result in result.files:
        if file_result.error is None and file_result.path in found:
            file_result.findings = found[file_result.path]


def _write_fixes(changed: list[FileResult], progress: Progress | None) -> None:
    """Write each fixed file; a file that cannot be written safely keeps its
    content and becomes an error (its fixes are not counted as applied)."""
    for done, file_result in enumerate(changed, 1):
        problem = None
        try:
            write_fixed(
                Path(file_result.path), file_result.source or "", file_result.fixed_source or ""
            )
        except WriteRefused as err:
            problem = str(err)
        except OSError as err:
            problem = f"cannot write: {err.strerror or err}"
        if problem is not None:
            file_result.error = FileError(display_path(file_result.path), problem)
            file_result.fixed_source = None
            file_result.fixes_applied = []
            file_result.findings = []
        if progress is not None:
            progress("writing", done, len(changed))


def _echo_stdin(result: RunResult, stdin_files: dict[str, InputFile], raw: bytes | None) -> None:
    """As Ruff: the fixed source goes to standard output, in the input's own
    encoding; input that could not be fixed (a syntax error, bytes that do not
    decode) comes back unchanged, so an editor filtering its buffer through
    `tfrewrite fix -` never loses it."""
    out = sys.stdout.buffer
    if raw is not None:
        out.write(raw)
    by_path = {r.path: r for r in result.files}
    for path, given in stdin_files.items():
        file_result = by_path.get(path)
        text = given.source or ""
        if file_result is not None and file_result.error is None and file_result.fixed_source:
            text = file_result.fixed_source
        out.write(encode_source(text, given.encoding))
    out.flush()


def _report_pending_fixes(
    paths: list[Path] | None,
    select: str | None,
    ignore: str | None,
    config: Path | None,
    stdin_filename: str | None,
    unsafe_fixes: bool | None,
    fmt: str,
    jobs: int | None,
    quiet: bool,
    exit_zero: bool,
) -> None:
    """`fix --diff` in a machine format: the findings whose fixes `fix` would
    apply, each with its edits against the files as they are (for CI
    suggestions). Exits like `--diff`: 1 when there is something to fix."""
    inputs = _prepare(paths, select, ignore, config, stdin_filename, unsafe_fixes, False, True)
    options = inputs.options
    with _progress_bar(len(inputs.files), quiet) as progress:
        result = _execute(inputs, jobs, progress)
    fixable = [
        f
        for f in result.findings
        if f.fix is not None and f.fix.edits and options.allows(f.fix.applicability)
    ]
    ctx = ReportContext(
        sources={r.path: r.source for r in result.files if r.source is not None},
        unsafe_fixes=options.unsafe_fixes,
        files_checked=len(result.files),
    )
    text = FORMATS[fmt](fixable, result.errors, ctx)
    if text:
        typer.echo(text)
    if result.errors or result.unchecked:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if fixable and not exit_zero else EXIT_CLEAN)


@app.command()
def rule(
    code: Annotated[Optional[str], typer.Argument(help="A rule code such as TFR101.")] = None,
    all_rules: Annotated[bool, typer.Option("--all", help="List every rule.")] = False,
    output_format: Annotated[str, typer.Option("--output-format", help="text or json.")] = "text",
) -> None:
    """Print a rule's documentation (or list every rule with --all)."""
    import json

    if all_rules or code is None:
        if output_format == "json":
            typer.echo(json.dumps([_rule_json(r) for r in rule_registry.ALL_RULES], indent=2))
        else:
            for r in rule_registry.ALL_RULES:
                fix = {"safe": "[*]", "unsafe": "[U]", "none": "   "}[r.fix_applicability.value]
                typer.echo(f"{r.code} {fix} {r.name:<40} {r.summary}")
        raise typer.Exit(EXIT_CLEAN)
    selected = rule_registry.RULES_BY_CODE.get(code.upper())
    if selected is None:
        raise _fail(f"unknown rule `{code}` (see `tfrewrite rule --all`)")
    if output_format == "json":
        typer.echo(json.dumps(_rule_json(selected), indent=2))
    else:
        typer.echo(selected.render_doc())


def _rule_json(r) -> dict:  # type: ignore[no-untyped-def]
    return {
        "code": r.code,
        "name": r.name,
        "summary": r.summary,
        "fix": r.fix_applicability.value,
        "explanation": r.render_doc(),
    }


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tfrewrite {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Show the version."
        ),
    ] = False,
) -> None:
    pass


def _cache_dir(settings: Settings) -> Path:
    return settings.cache_dir or settings.root / CACHE_DIR_NAME


@app.command()
def clean(config: ConfigOpt = None) -> None:
    """Remove the cache folder (`.tfrewrite_cache/`, or `cache-dir`)."""
    try:
        settings = _settings(config, [Path(".")])
    except ConfigError as err:
        raise _fail(str(err)) from err
    directory = _cache_dir(settings)
    if clean_cache(directory):
        typer.echo(f"Removed {display_path(str(directory))}")


@app.command()
def server() -> None:
    """Run the Language Server over standard input/output (needs the `lsp` extra)."""
    try:
        from tfrewrite.server import main as serve
    except ImportError as err:  # the optional `lsp` extra is not installed
        raise _fail(
            f"`tfrewrite server` needs pygls: pip install 'tfrewrite[lsp]' ({err})"
        ) from None
    serve()


# `verify` lives in its own subpackage; it imports TensorFlow only in its
# worker processes, never here.
register_verify(app)


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM, raised in the main thread wherever it was. Not a
    `KeyboardInterrupt`, which the command-line framework turns into a
    silent exit 130 for both; a `BaseException`, so that no `except
    Exception` swallows it, while every `finally` (the worker pool's
    shutdown, a write's temporary file) runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_interrupted(signum: int, frame: object) -> None:
    """The handler of SIGINT and SIGTERM: the first one stops the run
    (cleanly, through `Interrupted`); a second one, while that cleanup
    runs, ends the process at once, as the signal does by default."""
    import signal

    for each in (signal.SIGINT, signal.SIGTERM):
        signal.signal(each, signal.SIG_DFL)
    raise Interrupted(signum)


def _handle_signals() -> None:
    import signal

    for each in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(each) is not signal.SIG_IGN:  # ignored by the parent: stays so
            signal.signal(each, _raise_interrupted)


def main() -> None:
    """The `tfrewrite` command. Interrupted (Ctrl-C, SIGTERM), it stops its
    workers, removes what it was writing, says so on one line and exits
    128 + the signal's number; an internal error exits 2."""
    import signal

    _handle_signals()
    try:
        app()
    except Interrupted as stop:
        what = "interrupted" if stop.signum == signal.SIGINT else "terminated"
        typer.echo(f"tfrewrite: {what}", err=True)
        sys.exit(128 + stop.signum)
    except Exception:
        import traceback

        traceback.print_exc()
        typer.echo("tfrewrite: error: internal error (the traceback above)", err=True)
        sys.exit(EXIT_ERROR)
