"""The pipeline: discover -> index (pass 1) -> project facts -> rules (pass 2)
-> fix -> report.

Pass 1 indexes files with the standard `ast` parser; files whose bytes name
neither TensorFlow nor Keras are indexed only when a traced function or a
`compile(...)` call refers into them. Pass 2 parses with LibCST only the files
where some selected rule can fire (most rules look only inside traced
functions), and computes positions only for files with findings. Both passes
run in a process pool when there is enough work.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path

import libcst as cst

from tfrewrite import rules as rule_registry
from tfrewrite.analysis.index import ModuleIndex, build_index, module_name_for
from tfrewrite.analysis.project import ProjectFacts, TracedFunction, compute_facts
from tfrewrite.context import RuleContext
from tfrewrite.edits import text_edits
from tfrewrite.findings import Applicability, FileError, FileResult, Finding, FixInfo, Position
from tfrewrite.fixer import apply_fixes
from tfrewrite.positions import node_ranges
from tfrewrite.rules.base import Rule, Violation
from tfrewrite.sources import decode_source, read_source
from tfrewrite.suppression import NoqaMap, file_is_exempt
from tfrewrite.syntax import newer_python_hint

# Bytes that mark a file as TensorFlow code worth indexing up front.
PREFILTER_TOKENS = (b"tensorflow", b"keras", b"tf.")
MAX_FIX_ROUNDS = 10
# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 16


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


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    indexed: int = 0
    parsed: int = 0

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    @property
    def errors(self) -> list[FileError]:
        return [r.error for r in self.files if r.error is not None]

    @property
    def fixes_applied(self) -> list[Finding]:
        return [f for r in self.files for f in r.fixes_applied]


def _relative(path: str, root: str) -> str:
    try:
        return Path(path).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return Path(path).as_posix()


# -- pass 1 ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Deferred:
    """A file whose bytes name neither TensorFlow nor Keras: indexed later,
    only if traced code refers into it."""

    path: str


def _index_job(args: tuple[str, str, str | None, bool]) -> ModuleIndex | FileError | _Deferred:
    """Read a file once, apply the byte prefilter (when asked), and index it."""
    path, root, source, prefilter = args
    try:
        if source is None:
            data = Path(path).read_bytes()
            if prefilter and not any(token in data for token in PREFILTER_TOKENS):
                return _Deferred(path)
            source = decode_source(data).text
    except OSError as err:
        return FileError(path, f"cannot read: {err.strerror or err}")
    except UnicodeDecodeError as err:
        return FileError(path, f"cannot decode as {err.encoding}: {err.reason} at byte {err.start}")
    except (SyntaxError, ValueError) as err:  # a bad coding cookie; a binary file
        return FileError(path, f"cannot read: {getattr(err, 'msg', None) or err}")
    index = build_index(source, path, module_name_for(Path(path), Path(root)))
    if index.syntax_error is not None and index.syntax_error[0] is not None:
        line, column, message = index.syntax_error
        index.syntax_error = (line, column, message + newer_python_hint(source))
    return index


def _references_from_traced_code(indexes: list[ModuleIndex], facts: ProjectFacts) -> set[str]:
    """Dotted names that traced code and tracing call sites refer to: a
    deferred file whose module could define one of them must be indexed."""
    refs: set[str] = set()
    for index in indexes:
        refs.update(site.target for site in index.traced_sites)
        for qualname in facts.for_path(index.path):
            refs.update(index.functions[qualname].calls)
    return refs


def _module_could_define(module: str, refs: set[str]) -> bool:
    return any(ref.startswith(module + ".") or ("." + module + ".") in ("." + ref) for ref in refs)


# -- pass 2 ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileJob:
    file: InputFile
    index: ModuleIndex
    traced: dict[str, TracedFunction]
    options: RunOptions


def _positions(module: cst.Module, nodes: Sequence[cst.CSTNode]) -> list[tuple[Position, Position]]:
    return [
        (
            Position(r.start.line, r.start.column + 1),
            Position(r.end.line, r.end.column + 1),
        )
        for r in node_ranges(module, nodes)
    ]


@dataclass(frozen=True)
class _Found:
    rule: Rule
    violation: Violation
    start: Position
    end: Position


def _find(rules: Sequence[Rule], ctx: RuleContext, noqa: NoqaMap) -> list[_Found]:
    """Run the rules; drop what `# noqa` suppresses. Positions are computed
    only when something was found."""
    pairs = [(rule, v) for rule in rules for v in rule.check(ctx)]
    if not pairs:
        return []
    spans = _positions(ctx.module, [v.node for _, v in pairs])
    return [
        _Found(rule, v, start, end)
        for (rule, v), (start, end) in zip(pairs, spans, strict=True)
        if not noqa.suppresses(start.line, rule.code)
    ]


def _to_finding(
    path: str, found: _Found, module: cst.Module, code: str, want_edits: bool
) -> Finding:
    fix = found.violation.fix
    fix_info = None
    if fix is not None:
        edits: tuple = ()
        if want_edits:
            fixed, applied = apply_fixes(module, [fix])
            if applied:
                edits = text_edits(code, fixed.code)
        fix_info = FixInfo(fix.applicability, fix.message, edits)
    rule = found.rule
    return Finding(
        rule.code, rule.name, found.violation.message, path, found.start, found.end, fix_info
    )


def _reindex(
    code: str, previous: ModuleIndex, traced: dict[str, TracedFunction]
) -> tuple[ModuleIndex, dict[str, TracedFunction]]:
    """Index a file again after a fix round. Facts only the whole project
    could derive (a loss decorated in another module, a loop elsewhere that
    calls a step) are carried over from the previous round; fixes never stop
    a function from running traced, and may make new ones traced (a decorated
    train step)."""
    index = build_index(code, previous.path, previous.module)
    local = compute_facts([index]).for_path(previous.path)
    index.looped_functions = {**previous.looped_functions, **index.looped_functions}
    index.loss_decorator_options = {
        **previous.loss_decorator_options,
        **index.loss_decorator_options,
    }
    carried = {k: v for k, v in traced.items() if k in index.functions}
    return index, {**local, **carried}


def process_file(job: FileJob) -> FileResult:
    """Run the selected rules over one file; in fix mode, apply fixes until
    nothing changes. Never raises: problems become the file's `error`."""
    path = job.file.path
    result = FileResult(path)
    try:
        source = job.file.source
        if source is None:
            source = read_source(Path(path)).text
        result.source = source
        options = job.options
        ignored = options.ignored_prefixes(path)
        traced_names = set(job.traced)
        rules = [
            r
            for r in options.rules()
            if not r.code.startswith(ignored) and r.applies_to(job.index, traced_names)
        ]
        if not rules or file_is_exempt(source):
            return result
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError as err:
            result.error = FileError(
                path, f"syntax error: {err.message}", err.raw_line, err.raw_column + 1
            )
            return result
        result.parsed = True
        index, traced = job.index, job.traced
        code = source  # the text of `module`, kept to avoid regenerating it
        for _round in range(MAX_FIX_ROUNDS):
            ctx = RuleContext(path, module, index, traced, dict(options.rule_settings))
            found = _find(rules, ctx, NoqaMap(code))
            fixable = [
                f
                for f in found
                if f.violation.fix is not None and options.allows(f.violation.fix.applicability)
            ]
            applied: list[int] = []
            if options.fix and fixable:
                new_module, applied = apply_fixes(module, [f.violation.fix for f in fixable])  # type: ignore[misc]
            if not applied:
                result.findings = [
                    _to_finding(path, f, module, code, options.want_edits) for f in found
                ]
                break
            result.fixes_applied.extend(
                _to_finding(path, fixable[i], module, code, False) for i in applied
            )
            new_code = new_module.code
            try:
                module = cst.parse_module(new_code)
                code = new_code
            except cst.ParserSyntaxError as err:
                result.error = FileError(
                    path,
                    "internal error: the fixes produced code that does not parse "
                    f"({err.message}); file left unchanged",
                )
                result.fixed_source = None
                result.fixes_applied = []
                return result
            result.fixed_source = new_code
            index, traced = _reindex(new_code, index, traced)
        else:  # fixes did not settle: report what is left
            ctx = RuleContext(path, module, index, traced, dict(options.rule_settings))
            result.findings = [
                _to_finding(path, f, module, code, options.want_edits)
                for f in _find(rules, ctx, NoqaMap(code))
            ]
        return result
    except RecursionError:
        result.error = FileError(path, "internal error: file too deeply nested to analyse")
        return result
    except Exception as err:  # noqa: BLE001 - one file's failure never stops the run
        result.error = FileError(path, f"internal error: {type(err).__name__}: {err}")
        return result


# -- orchestration ------------------------------------------------------------------


def _map(
    func: Callable,
    items: list,
    jobs: int,
    progress: Callable[[int], None] | None = None,  # type: ignore[type-arg]
) -> list:  # type: ignore[type-arg]
    """`map` over a process pool (fork where available) when there is enough
    work, in order; `progress(1)` after each item."""
    tick = progress or (lambda n: None)
    if jobs <= 1 or len(items) < PARALLEL_THRESHOLD:
        results = []
        for item in items:
            results.append(func(item))
            tick(1)
        return results
    import multiprocessing

    context = multiprocessing.get_context("fork") if hasattr(os, "fork") else None
    chunksize = max(1, min(16, len(items) // (jobs * 8)))
    results = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for outcome in pool.map(func, items, chunksize=chunksize):
            results.append(outcome)
            tick(1)
    return results


def run(
    files: Iterable[InputFile],
    options: RunOptions,
    jobs: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> RunResult:
    """Check (and in fix mode, fix in memory) `files`. `progress(phase, done,
    total)` is called as files finish, for a progress bar."""
    files = list(files)
    jobs = jobs or os.cpu_count() or 1
    by_path = {f.path: f for f in files}

    # Pass 1: index files that mention TensorFlow; defer the others.
    deferred: dict[str, InputFile] = {}
    indexes: list[ModuleIndex] = []
    errors: dict[str, FileError] = {}

    counts: dict[str, list[int]] = {}  # phase -> [done, total], across passes

    def ticker(phase: str, total: int) -> Callable[[int], None] | None:
        if progress is None:
            return None
        count = counts.setdefault(phase, [0, 0])
        count[1] += total

        def tick(n: int) -> None:
            count[0] += n
            progress(phase, count[0], count[1])

        return tick

    def index_files(batch: list[InputFile], prefilter: bool) -> None:
        items = [(f.path, options.root, f.source, prefilter and not f.explicit) for f in batch]
        # Each pass is its own progress phase, so every bar runs from 0 to its total.
        phase = "indexing" if prefilter else "indexing referenced files"
        for outcome in _map(_index_job, items, jobs, ticker(phase, len(items))):
            if isinstance(outcome, _Deferred):
                deferred[outcome.path] = by_path[outcome.path]
            elif isinstance(outcome, FileError):
                errors[outcome.path] = outcome
            else:
                indexes.append(outcome)

    index_files(files, prefilter=True)
    facts = compute_facts(indexes)
    while deferred:
        refs = _references_from_traced_code(indexes, facts)
        wanted = [
            f
            for f in deferred.values()
            if _module_could_define(module_name_for(Path(f.path), Path(options.root)), refs)
        ]
        if not wanted:
            break
        for f in wanted:
            del deferred[f.path]
        index_files(wanted, prefilter=False)
        facts = compute_facts(indexes)

    result = RunResult(indexed=len(indexes))
    # Syntax errors found by the indexer are reported without a LibCST parse.
    jobs_list: list[FileJob] = []
    for index in indexes:
        if index.syntax_error is not None:
            line, column, message = index.syntax_error
            errors[index.path] = FileError(index.path, f"syntax error: {message}", line, column)
            continue
        jobs_list.append(FileJob(by_path[index.path], index, facts.for_path(index.path), options))
    outcomes = _map(process_file, jobs_list, jobs, ticker("checking", len(jobs_list)))
    result.files = [*outcomes, *(FileResult(path, error=e) for path, e in errors.items())]
    result.files.extend(FileResult(path) for path in deferred)
    result.parsed = sum(1 for r in result.files if r.parsed)
    result.files.sort(key=lambda r: r.path)
    return result


def input_from_stdin(data: bytes, name: str) -> InputFile:
    text = decode_source(data)
    return InputFile(name, text.text, text.encoding)
