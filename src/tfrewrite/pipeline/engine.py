"""The pipeline: discover -> index (pass 1) -> project facts -> rules (pass 2)
-> fix -> report.

Pass 1 indexes files with the standard `ast` parser; files whose bytes name
neither TensorFlow nor Keras are indexed only when a traced function or a
`compile(...)` call refers into them. Pass 2 runs the selected rules over
each file with the facts about it (`rule_pass`); a file where no selected
rule can fire is settled here from its index, without being parsed. Both
passes run in a process pool when there is enough work, the costliest files
first; a check reuses what the cache says did not change.

This module decides which files are indexed and which reach pass 2, and
runs them; what pass 2 does to one file is `rule_pass`.
"""

from __future__ import annotations

import dataclasses
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tfrewrite.findings import FileError, FileResult, Finding
from tfrewrite.pipeline.cache import DEFERRED, Cache
from tfrewrite.pipeline.rule_pass import (
    applicable_codes,
    check_file,
    process_file,
    python_text,
    python_view,
)
from tfrewrite.pipeline.run_options import FileJob, InputFile, RunOptions
from tfrewrite.pipeline.workers import (
    PARALLEL_THRESHOLD,
    map_in_workers,
    start_fresh_server,
)
from tfrewrite.workspace.line_names import CellStarts
from tfrewrite.workspace.notebook import NOTEBOOK_SUFFIX, NotebookError
from tfrewrite.workspace.sources import decode_source, read_file_bytes, undecodable

if TYPE_CHECKING:  # the analysis loads only when a file must be looked at (`_analyse`)
    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.traced_function import ProjectFacts

# Bytes that mark a file as TensorFlow code worth indexing up front.
PREFILTER_TOKENS = (b"tensorflow", b"keras", b"tf.")
# Allocations between two collections of the youngest generation (Python's
# default is 700): see `_fewer_collections`.
GC_THRESHOLD = 20_000


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)
    indexed: int = 0
    parsed: int = 0
    cached: int = 0  # files whose results came from the cache
    # Files left unchecked because a worker process died (killed, out of
    # memory): the run is incomplete, whatever else it found.
    unchecked: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return sorted((f for r in self.files for f in r.findings), key=Finding.sort_key)

    @property
    def errors(self) -> list[FileError]:
        return [r.error for r in self.files if r.error is not None]

    @property
    def fixes_applied(self) -> list[Finding]:
        return [f for r in self.files for f in r.fixes_applied]


# -- pass 1 ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Deferred:
    """A file whose bytes name neither TensorFlow nor Keras: indexed later,
    only if traced code refers into it."""

    path: str


@dataclass(frozen=True)
class _Lost:
    """A file whose worker died before it had a result."""

    path: str


def _lost_index(item: tuple[str, str, str | None, bool]) -> _Lost:
    return _Lost(item[0])


def _lost_job(job: FileJob) -> _Lost:
    return _Lost(job.file.path)


def _index_job(args: tuple[str, str, str | None, bool]) -> ModuleIndex | FileError | _Deferred:
    """Read a file once, apply the byte prefilter (when asked), and index it."""
    path, root, source, prefilter = args
    cell_starts: CellStarts = ()
    try:
        if source is None:
            data = read_file_bytes(path)
            if prefilter and not any(token in data for token in PREFILTER_TOKENS):
                # A file that is not Python source is reported, not deferred.
                problem = None if path.endswith(".ipynb") else undecodable(data)
                if problem is None:
                    return _Deferred(path)
                return FileError(path, f"cannot read: {problem}")
            source, cell_starts = python_view(path, data)
    except NotebookError as err:
        return FileError(path, str(err))
    except OSError as err:
        return FileError(path, f"cannot read: {err.strerror or err}")
    except UnicodeDecodeError as err:
        return FileError(path, f"cannot decode as {err.encoding}: {err.reason} at byte {err.start}")
    except (SyntaxError, ValueError) as err:  # a bad coding cookie; a binary file
        return FileError(path, f"cannot read: {getattr(err, 'msg', None) or err}")
    from tfrewrite.facts.index import build_index, module_name_for

    index = build_index(
        source, path, module_name_for(Path(path), Path(root)), cell_starts=cell_starts
    )
    if index.syntax_error is not None and index.syntax_error[0] is not None:
        from tfrewrite.workspace.syntax import newer_python_hint

        line, column, message = index.syntax_error
        index.syntax_error = (line, column, message + newer_python_hint(source))
    return index


def _with_star_names(index: ModuleIndex, by_path: dict[str, InputFile], root: str) -> ModuleIndex:
    """`index` again, now that the project's modules tell what the names
    its `from module import *` statements bring are (`np` from a `utils` that
    imports NumPy): pass 1 saw one file and left them unresolved. Only
    files with such names are indexed again, and never cached so: the
    cache keeps what the file alone gives."""
    if not index.star_names or index.syntax_error is not None:
        return index
    from tfrewrite.facts.index import build_index

    file = by_path[index.path]
    try:
        source = file.source
        if source is None:
            source = python_text(index.path, Path(index.path).read_bytes())
    except (OSError, ValueError, NotebookError):
        return index  # read before: it will be reported when read again
    return build_index(source, index.path, index.module, index.star_names, index.cell_starts)


def _references_from_traced_code(indexes: list[ModuleIndex], facts: ProjectFacts) -> set[str]:
    """Dotted names that traced code and tracing call sites refer to: a
    deferred file whose module could define one of them must be indexed."""
    from tfrewrite.facts.training_facts import held_object_references

    refs: set[str] = held_object_references(indexes, facts)
    for index in indexes:
        refs.update(site.target for site in index.traced_sites)
        for qualname in facts.for_path(index.path):
            refs.update(index.functions[qualname].calls)
    return refs


def _applied_pipelines(indexes: list[ModuleIndex]) -> set[str]:
    """Functions of other modules that call sites' datasets went through
    (`ds.apply(pipeline.prepare)`): whether they batch keeping the
    remainder is what the site passes (TFR306), so a deferred module that
    could define one must be indexed."""
    return {
        batcher
        for index in indexes
        for site in index.call_sites
        for _, batcher in site.applied_batchers
    }


def _train_step_drivers(
    deferred: Iterable[InputFile], step_modules: set[str], step_methods: set[str]
) -> set[str]:
    """Paths of deferred files that name a module defining a train step, or
    call a method of a train step's name: the script whose loop calls it
    (`agent.learn()` in a `main.py` that imports no TensorFlow, or
    `agent.step(batch)` on an agent a function is handed) must be indexed
    for the step to be found."""
    if not step_modules and not step_methods:
        return set()
    from tfrewrite.facts.method_steps import calls_method, mentions_module

    return {
        f.path
        for f, data in _contents(deferred)
        if mentions_module(data, step_modules) or calls_method(data, step_methods)
    }


def _builders_of_traced_holders(
    deferred: Iterable[InputFile], indexes: list[ModuleIndex], facts: ProjectFacts
) -> set[str]:
    """Paths of deferred files that build an object of a class whose traced
    methods may read what its `__init__` keeps of its arguments (`self.noise
    = noise`, `ClassInfo.held_parameters`): the script passing `Agent(...,
    noise=OUNoise())` tells what the traced `self.noise()` runs."""
    holders: set[str] = set()
    for index in indexes:
        traced = facts.for_path(index.path)
        for qualname, info in index.classes.items():
            if info.held_parameters and any(method.startswith(qualname + ".") for method in traced):
                holders.add(qualname.rpartition(".")[2])
    # A class whose `__init__` hands a parameter on to a holder's constructor
    # (`self.trainer = Trainer(model)`): its builders tell what the holder
    # keeps too (`passed_values`).
    grown = True
    while grown:
        grown = False
        for index in indexes:
            for site in index.call_sites:
                owner, _, method = site.caller.rpartition(".")
                if method != "__init__" or not site.forwarded or owner in holders:
                    continue
                if site.callee.rpartition(".")[2] in holders:
                    holders.add(owner.rpartition(".")[2])
                    grown = True
    if not holders:
        return set()
    names = {name.encode() + b"(" for name in holders}
    return {f.path for f, data in _contents(deferred) if any(name in data for name in names)}


def _contents(files: Iterable[InputFile]) -> Iterator[tuple[InputFile, bytes]]:
    """Each file with its bytes, for the byte tests on deferred files (a
    file that cannot be read is left out: pass 2 reports it)."""
    for f in files:
        try:
            yield f, f.source.encode() if f.source is not None else Path(f.path).read_bytes()
        except OSError:
            continue


def _attribute_writers(deferred: Iterable[InputFile], indexes: list[ModuleIndex]) -> set[str]:
    """Paths of deferred files that may rebind an attribute of a module the
    indexed files read (`config.SCALE = epoch / 10` in a `main.py` that
    imports no TensorFlow): indexed, their writes make the reads frozen
    state (TFR201)."""
    from tfrewrite.facts.method_steps import mentions_module
    from tfrewrite.facts.prefilters import assigns_an_attribute

    by_module: dict[str, set[str]] = {}
    for index in indexes:
        for read in index.module_attribute_reads:
            module, _, attribute = read.rpartition(".")
            by_module.setdefault(module.rpartition(".")[2], set()).add(attribute)
    if not by_module:
        return set()
    return {
        f.path
        for f, data in _contents(deferred)
        if any(
            mentions_module(data, {module}) and assigns_an_attribute(data, attributes)
            for module, attributes in by_module.items()
        )
    }


def _reference_heads(refs: set[str]) -> set[str]:
    """Every component of the references but their last: the names of the
    modules (and classes) they may point into."""
    return {part for ref in refs for part in ref.split(".")[:-1]}


def _module_could_define(module: str, heads: set[str]) -> bool:
    """Whether a reference may name something in `module`, also by a shorter
    name (`buffer.ReplayBuffer` from a script beside `pkg/rl/buffer.py`), as
    the project's lookup resolves names: its last component is one of the
    references' heads (`_reference_heads`)."""
    return module.rpartition(".")[2] in heads


# -- orchestration ------------------------------------------------------------------


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect cyclic garbage less often while a run builds and drops
    syntax trees: they hold no cycles that matter (reference counting frees
    them), yet with the default threshold the collector ran every 700
    allocations and took a fifth of a run's time."""
    threshold = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


def run(
    files: Iterable[InputFile],
    options: RunOptions,
    jobs: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    cache: Cache | None = None,
    fresh_workers: bool = False,
) -> RunResult:
    """Check (and in fix mode, fix in memory) `files`. `progress(phase, done,
    total)` is called as files finish, for a progress bar. With a `cache`,
    a check reuses what did not change (`cache.py` says what that means).
    `fresh_workers`: the rules run in workers started from a small process,
    not forks of this one (`fresh_context`); for tfrewrite's own entry
    points only."""
    files = list(files)
    jobs = jobs or os.cpu_count() or 1
    if options.fix or any(f.source is not None for f in files):
        cache = None
    if cache is not None:
        cache.hash_files((f.path for f in files), (f.path for f in files if f.explicit))
        unchanged = cache.unchanged_results()
        if unchanged is not None:
            return RunResult(files=unchanged, cached=len(unchanged))
    with _fewer_collections():
        result = _analyse(files, options, jobs, progress, cache, fresh_workers)
        if options.fix:
            result = _fix_across_files(result, files, options, jobs, fresh_workers)
        return result


# How many times `fix` checks the project again over its fixed text: a fix in
# one file can remove what kept a fix in another from applying (a schedule's
# tensor `if` rewritten, so the step whose optimizer calls it can be traced).
MAX_PROJECT_FIX_PASSES = 3


def _fix_across_files(
    result: RunResult,
    files: list[InputFile],
    options: RunOptions,
    jobs: int,
    fresh_workers: bool,
) -> RunResult:
    """Run `fix` again over the fixed text of the project, with its facts
    derived anew, until no file changes: `fix` twice then changes nothing
    `fix` once did not. Each file's findings fixed over the passes add up;
    what is left is the last pass's. Notebooks are fixed in one pass (their
    cells are placed back from the file on disk)."""
    for _ in range(MAX_PROJECT_FIX_PASSES - 1):
        changed = {r.path: r.fixed_source for r in result.files if r.changed and r.error is None}
        if not changed or any(path.endswith(NOTEBOOK_SUFFIX) for path in changed):
            return result
        again = [
            dataclasses.replace(f, source=changed[f.path]) if f.path in changed else f
            for f in files
        ]
        later = _analyse(again, options, jobs, None, None, fresh_workers)
        if not any(r.changed for r in later.files if r.error is None):
            return result
        result = _merged(result, later)
    return result


def _merged(first: RunResult, later: RunResult) -> RunResult:
    """A file's result over two passes: its own source, the later pass's
    text and remaining findings, the fixes of both."""
    earlier = {r.path: r for r in first.files}
    files = []
    for r in later.files:
        before = earlier.get(r.path)
        if before is None or r.error is not None:
            files.append(r)
            continue
        files.append(
            dataclasses.replace(
                r,
                source=before.source,
                fixed_source=r.fixed_source if r.changed else before.fixed_source,
                fixes_applied=[*before.fixes_applied, *r.fixes_applied],
            )
        )
    return dataclasses.replace(later, files=files, unchecked=first.unchecked + later.unchecked)


def _analyse(
    files: list[InputFile],
    options: RunOptions,
    jobs: int,
    progress: Callable[[str, int, int], None] | None,
    cache: Cache | None,
    fresh_workers: bool = False,
) -> RunResult:
    """`run` past the cache's answer for an unchanged tree: both passes."""
    by_path = {f.path: f for f in files}
    # The analysis (and LibCST, which it imports) loads only when a file
    # must be looked at: a warm run answered from the cache never pays for it.
    from tfrewrite.facts.index import module_name_for
    from tfrewrite.facts.method_steps import train_step_methods, train_step_modules
    from tfrewrite.facts.project import compute_facts
    from tfrewrite.facts.project_lookup import record_star_names
    from tfrewrite.pipeline.step_reconciliation import involved_paths, reconcile

    # Pass 1: index files that mention TensorFlow; defer the others.
    deferred: dict[str, InputFile] = {}
    indexes: list[ModuleIndex] = []
    errors: dict[str, FileError] = {}

    unchecked: list[str] = []  # files whose worker died
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

    def index_files(batch: list[InputFile], prefilter: bool) -> int:
        """Index `batch` (from the cache where it can); returns how many
        files were indexed anew."""

        def skips(f: InputFile) -> bool:
            """Whether `f` may be skipped unparsed when it cannot matter."""
            return prefilter and not f.explicit

        todo: list[InputFile] = []
        for f in batch:
            # A file named on the command line is parsed whatever it imports:
            # its index is another than the same file's in a folder run.
            hit = cache.index(f.path, options.root, skips(f)) if cache else None
            if hit is None:
                todo.append(f)
            elif hit == DEFERRED:
                deferred[f.path] = f
            else:
                indexes.append(hit)
        items = [(f.path, options.root, f.source, skips(f)) for f in todo]
        # Each pass is its own progress phase, so every bar runs from 0 to its total.
        phase = "indexing" if prefilter else "indexing referenced files"
        tick = ticker(phase, len(items))
        for outcome in map_in_workers(_index_job, items, jobs, _lost_index, tick):
            if isinstance(outcome, _Lost):
                unchecked.append(outcome.path)
                continue
            if cache is not None and not isinstance(outcome, FileError):
                cache.remember_index(
                    outcome.path,
                    options.root,
                    skips(by_path[outcome.path]),
                    DEFERRED if isinstance(outcome, _Deferred) else outcome,
                )
            if isinstance(outcome, _Deferred):
                deferred[outcome.path] = by_path[outcome.path]
            elif isinstance(outcome, FileError):
                errors[outcome.path] = outcome
            else:
                indexes.append(outcome)
        return len(todo)

    # Many files indexed anew (not taken from the cache): a cold run, with
    # many files to check in rule workers.
    # The names `from module import *` brings, as each file was indexed with them.
    star_built: dict[str, dict[str, str]] = {}

    def resolve_star_names() -> None:
        """Index again the files whose star-imported names (`np` of `from
        utils import *`) the project now tells otherwise than when they
        were indexed: before the facts are derived, so they are derived
        once per round."""
        record_star_names(indexes)
        for i, index in enumerate(indexes):
            names = dict(index.star_names)
            if names != star_built.get(index.path, {}):
                indexes[i] = _with_star_names(index, by_path, options.root)
                indexes[i].star_names = names
                star_built[index.path] = names

    indexed = index_files(files, prefilter=True)
    if fresh_workers and jobs > 1 and indexed >= PARALLEL_THRESHOLD:
        start_fresh_server()  # it loads the rules while this process computes facts
    resolve_star_names()
    facts = compute_facts(indexes)
    drivers = _train_step_drivers(
        deferred.values(), train_step_modules(indexes), train_step_methods(indexes)
    )
    drivers |= _attribute_writers(deferred.values(), indexes)
    while deferred:
        # Each round's new files may hold classes whose builders matter.
        drivers |= _builders_of_traced_holders(deferred.values(), indexes, facts)
        refs = _reference_heads(
            _references_from_traced_code(indexes, facts) | _applied_pipelines(indexes)
        )
        # A module another one star-imports gives it names (`np` of `from
        # utils import *`) that its own code reads: it is needed too.
        refs |= {m.rpartition(".")[2] for index in indexes for m in index.star_imports}
        wanted = [
            f
            for f in deferred.values()
            if f.path in drivers
            or _module_could_define(module_name_for(Path(f.path), Path(options.root)), refs)
        ]
        if not wanted:
            break
        for f in wanted:
            del deferred[f.path]
        index_files(wanted, prefilter=False)
        resolve_star_names()
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
    stored: dict[str, FileResult] = {}  # results the cache keeps, by job key
    cached: set[str] = set()  # paths answered from the cache

    def run_jobs(batch: list[FileJob], fixing: bool) -> dict[str, FileResult | _Lost]:
        """Pass 2 over `batch`: each file's result by path, from the cache
        where it can, and the job key of each result computed anew kept
        for the cache."""
        keys = [cache.job_key(job) if cache else None for job in batch]
        known = [cache.result(key) if cache and key else None for key in keys]
        todo = [job for job, hit in zip(batch, known, strict=True) if hit is None]
        tick = ticker("checking", len(todo))
        # A file no selected rule can fire in is settled here, from its index:
        # a worker would only read it to find nothing.
        settled: dict[str, FileResult | _Lost] = {}
        if not fixing:
            for job in todo:
                if job.file.source is None and not applicable_codes(
                    job.file.path, job.index, job.traced, job.options
                ):
                    settled[job.file.path] = FileResult(job.file.path)
            if settled and tick is not None:
                tick(len(settled))
        parse = [job for job in todo if job.file.path not in settled]
        if parse and not fresh_workers:  # import LibCST once here, not in every worker
            import libcst  # noqa: F401

            import tfrewrite.facts.context  # noqa: F401
        # The costliest files first, one at a time: a costly file started last
        # would leave the other workers idle at the end.
        parse.sort(key=_expected_cost, reverse=True)
        worker = process_file if fixing else check_file
        done = dict(settled)
        for job, outcome in zip(
            parse,
            map_in_workers(worker, parse, jobs, _lost_job, tick, chunksize=1, fresh=fresh_workers),
            strict=True,
        ):
            done[job.file.path] = outcome
        for job, key, hit in zip(batch, keys, known, strict=True):
            if hit is not None:
                done[job.file.path] = hit
                cached.add(job.file.path)
            else:
                cached.discard(job.file.path)
                outcome = done[job.file.path]
                if key and not isinstance(outcome, _Lost):
                    stored[key] = _storable(outcome)
        return done

    def with_facts(job: FileJob, opts: RunOptions) -> FileJob:
        return dataclasses.replace(job, traced=facts.for_path(job.file.path), options=opts)

    # A train step of one file may trace code of another
    # (`step_reconciliation`): the files involved are checked first, and
    # what they tell of each other's steps becomes facts of both.
    involved = involved_paths(facts)
    if options.fix and involved:
        checking = dataclasses.replace(options, fix=False)
        probe = run_jobs(
            [with_facts(j, checking) for j in jobs_list if j.file.path in involved], False
        )
        reconcile(facts, [o for o in probe.values() if not isinstance(o, _Lost)])
        jobs_list = [with_facts(job, options) for job in jobs_list]
    outcomes = run_jobs(jobs_list, options.fix)
    if not options.fix and involved:
        changed = reconcile(facts, [o for o in outcomes.values() if not isinstance(o, _Lost)])
        again = [with_facts(job, options) for job in jobs_list if job.file.path in changed]
        if again:
            outcomes.update(run_jobs(again, False))
    unchecked.extend(o.path for o in outcomes.values() if isinstance(o, _Lost))
    result.cached = len(cached)
    result.files = [o for o in outcomes.values() if not isinstance(o, _Lost)]
    result.files.extend(FileResult(path, error=e) for path, e in errors.items())
    result.files.extend(FileResult(path) for path in deferred)
    result.parsed = sum(1 for r in result.files if r.parsed)
    result.files.sort(key=lambda r: r.path)
    result.unchecked = sorted(unchecked)
    if cache is not None and not unchecked:
        cache.save(stored, [_storable(r) for r in result.files])
    return result


# How much more a file with a train step costs than its size says: the
# fixes that decorate a step make `check` run the fix rounds in memory.
TRAIN_STEP_COST = 4


def _expected_cost(job: FileJob) -> int:
    """What pass 2 will likely spend on the file, in bytes of plain code."""
    trains = any(f.trains for f in job.index.functions.values())
    return _size(job) * (TRAIN_STEP_COST if trains else 1)


def _size(job: FileJob) -> int:
    if job.file.source is not None:
        return len(job.file.source)
    try:
        return os.path.getsize(job.file.path)
    except OSError:
        return 0


def _storable(result: FileResult) -> FileResult:
    """What the cache keeps of a result: its source only when a report shows it."""
    if result.findings:
        return result
    return dataclasses.replace(result, source=None)


def input_from_stdin(data: bytes, name: str) -> InputFile:
    text = decode_source(data)
    return InputFile(name, text.text, text.encoding)
