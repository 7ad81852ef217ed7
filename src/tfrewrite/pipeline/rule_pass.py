"""Pass 2 for one file: run the selected rules over it and turn what they
find into findings (in fix mode, fixing it in memory).

Pass 1 (`engine`) indexes the project and derives its facts; this pass looks
at one file at a time, in a worker, with the facts about it (a `FileJob`).
It parses with LibCST only a file where some selected rule can fire,
decided from its index (most files have none). In a check (no fix, no edits
shown) it parses of such a file only the functions the selected rules can
need: the others are blanked out, lines and columns kept
(`pipeline/relevant_code.py`, `_relevant_code`), so a large test file with a
few traced functions costs a fraction of its whole tree. The rules run in
fix rounds (`fix_rounds`) when a fix must be applied or `check` must say
what `fix` would do. A notebook is checked as the Python of its code cells,
and its findings placed back in its cells. A file's problem never stops the
run: it becomes the file's error.

Which files reach this pass, in what order, in which process, is `engine`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tfrewrite import rules as rule_registry
from tfrewrite.findings import FileError, FileResult, Finding, FixInfo, Position
from tfrewrite.pipeline.parsing import parse_module as _parse
from tfrewrite.pipeline.run_options import FileJob
from tfrewrite.pipeline.suppression import file_is_exempt
from tfrewrite.workspace.line_names import CellStarts, place_lines
from tfrewrite.workspace.notebook import NOTEBOOK_SUFFIX, Notebook, NotebookError
from tfrewrite.workspace.sources import decode_source

if TYPE_CHECKING:  # LibCST is imported only when there is a file to parse
    import libcst as cst

    from tfrewrite.facts.index import ModuleIndex
    from tfrewrite.facts.traced_function import TracedFunction
    from tfrewrite.pipeline.decoration_gate import Found
    from tfrewrite.pipeline.fix_edits import FixEdits
    from tfrewrite.pipeline.run_options import RunOptions
    from tfrewrite.rules.base import Rule


def python_text(path: str, data: bytes) -> str:
    """The Python a file holds: its text, or a notebook's code cells."""
    return python_view(path, data)[0]


def python_view(path: str, data: bytes) -> tuple[str, CellStarts]:
    """`python_text`, and for a notebook where each cell starts in it."""
    if path.endswith(NOTEBOOK_SUFFIX):
        notebook = Notebook.parse(data)
        return notebook.python, notebook.cell_starts
    return decode_source(data).text, ()


def _in_cell(finding: Finding, notebook: Notebook) -> Finding:
    """A finding on a notebook's Python view, placed in its cell. Its text
    edits count lines of the view, so they are dropped."""
    cell, line = notebook.cell_position(finding.start.line)
    shift = finding.start.line - line
    finding = _with_named_lines(finding, notebook.cell_starts)
    return dataclasses.replace(
        finding,
        start=Position(line, finding.start.column),
        end=Position(finding.end.line - shift, finding.end.column),
        cell=cell,
        fix=dataclasses.replace(finding.fix, edits=()) if finding.fix else None,
    )


def _with_named_lines(finding: Finding, starts: CellStarts = ()) -> Finding:
    """`finding` with the lines its messages name (`line_names`) named as
    its own position is: in cells when `starts` places a notebook's."""
    fix = finding.fix
    if fix is not None:
        fix = dataclasses.replace(fix, message=place_lines(fix.message, starts))
    return dataclasses.replace(finding, message=place_lines(finding.message, starts), fix=fix)


def _as_notebook(result: FileResult, notebook: Notebook) -> None:
    """Turn a result computed on a notebook's Python view into one about the
    notebook: positions in cells, sources as the notebook's own text."""
    fixed = notebook
    if result.fixed_source is not None and result.fixed_source != notebook.python:
        try:
            fixed = notebook.with_python(result.fixed_source)
        except NotebookError as err:
            result.error = FileError(result.path, f"fixes not applied: {err}")
            result.fixes_applied = []
    result.fixes_applied = [_in_cell(f, notebook) for f in result.fixes_applied]
    result.findings = [_in_cell(f, fixed) for f in result.findings]
    result.source = notebook.raw
    result.fixed_source = fixed.raw if fixed is not notebook else None
    result.cells = fixed.cell_sources()


def _to_finding(path: str, found: Found, edits_of: FixEdits | None) -> Finding:
    fix = found.violation.fix
    fix_info = None
    if fix is not None:
        edits = edits_of.of(fix) if edits_of is not None else ()
        fix_info = FixInfo(fix.applicability, fix.message, edits)
    rule = found.rule
    return Finding(
        rule.code, rule.name, found.violation.message, path, found.start, found.end, fix_info
    )


def _rules_for(job: FileJob) -> list[Rule]:
    """The selected rules that can fire in this file, decided from pass-1
    facts alone (no LibCST parse): most files have none."""
    return applicable_rules(job.file.path, job.index, job.traced, job.options)


def applicable_codes(
    path: str, index: ModuleIndex, traced: dict[str, TracedFunction], options: RunOptions
) -> list[str]:
    """The selected rule codes, less those `per-file-ignores` turns off for
    `path`, whose pass-1 test (the `scope` of its registry entry) says they can fire
    given `index` and the traced functions. Loads no rule and no LibCST, so
    the main process settles a file no rule can fire in for the price of
    its index."""
    from tfrewrite.rules import can_fire

    ignored = options.ignored_prefixes(path)
    return [
        code
        for code in options.rule_codes
        if not code.startswith(ignored) and can_fire(code, index, traced)
    ]


def applicable_rules(
    path: str, index: ModuleIndex, traced: dict[str, TracedFunction], options: RunOptions
) -> list[Rule]:
    """The rules of `applicable_codes`: decided again after every fix
    round, since a fix can make code traced (an extracted or decorated train
    step) that no rule looked at before."""
    by_code = rule_registry.RULES_BY_CODE
    return [by_code[code] for code in applicable_codes(path, index, traced, options)]


def check_file(job: FileJob) -> FileResult:
    """`process_file` in a worker of a check run: what goes back to the main
    process is what a report shows, so a file's text travels (and stays in
    memory) only when it has findings or an error to show."""
    result = process_file(job)
    if not result.findings and result.error is None:
        result.source = None
    return result


def process_file(job: FileJob) -> FileResult:
    """Run the selected rules over one file; in fix mode, apply fixes until
    nothing changes. Never raises: problems become the file's `error`. A
    notebook is checked as the Python of its code cells, then placed back."""
    result = _process_python(job)
    if job.file.path.endswith(NOTEBOOK_SUFFIX) and job.file.source is None and result.error is None:
        try:
            _as_notebook(result, Notebook.parse(Path(job.file.path).read_bytes()))
        except (OSError, NotebookError) as err:
            result.error = FileError(job.file.path, f"cannot read: {err}")
    # Lines no notebook placed (a `.py` file; a notebook that failed) are plain.
    result.findings = [_with_named_lines(f) for f in result.findings]
    result.fixes_applied = [_with_named_lines(f) for f in result.fixes_applied]
    return result


def _relevant_code(source: str, job: FileJob, rules: Sequence[Rule]) -> tuple[str, FileJob]:
    """What pass 2 parses: in a check that shows no edits, `source` with the
    functions no selected rule can need blanked out (`relevant_code.prune`:
    lines and columns stay, and so do the findings' positions), and a job
    whose index carries what was left out, for the index of a simulated fix
    round (`fix_rounds._reindex`); otherwise the whole source. A large test file of
    which a few functions matter then costs a fraction of its whole tree."""
    options = job.options
    if options.fix or options.want_edits or not options.prune_inert_code:
        return source, job
    from tfrewrite.pipeline.relevant_code import prune

    pruned = prune(source, job.index, job.traced, [rule.code for rule in rules])
    if pruned is None:
        return source, job
    index = dataclasses.replace(job.index, pruned=pruned)
    return pruned.code, dataclasses.replace(job, index=index)


def _run_rules(
    result: FileResult, module: cst.Module, code: str, job: FileJob, rules: Sequence[Rule]
) -> FileResult:
    """Run the rules over `module` (of `code`: the file's text, or in a
    check its relevant code), fix rounds included, into `result`."""
    from tfrewrite.pipeline.fix_rounds import forget_rounds

    try:
        return _settle_findings(result, module, code, job, rules)
    finally:
        forget_rounds()


def _settle_findings(
    result: FileResult, module: cst.Module, code: str, job: FileJob, rules: Sequence[Rule]
) -> FileResult:
    from tfrewrite.pipeline.fix_edits import FixEdits
    from tfrewrite.pipeline.fix_rounds import as_fix_would_do, settle
    from tfrewrite.pipeline.step_reconciliation import step_outcomes

    path, source, options = result.path, result.source or code, job.options
    settled = settle(path, module, code, job.index, job.traced, rules, options, applicable_rules)
    if settled.error is not None:
        result.error = FileError(path, settled.error)
        return result
    first = settled.first
    result.withheld_steps, result.step_blockers = step_outcomes(path, first, job.index, job.traced)
    if options.fix:
        result.fixes_applied = [_to_finding(path, first[i], None) for i in settled.resolved]
        if settled.code != source:
            result.fixed_source = settled.code
        edits_of = FixEdits(settled.module, settled.code) if options.want_edits else None
        result.findings = [_to_finding(path, f, edits_of) for f in settled.final]
        return result
    edits_of = FixEdits(module, code) if options.want_edits else None
    result.findings = [
        _to_finding(path, f, edits_of)
        for f in as_fix_would_do(
            path, module, code, job, rules, first, settled.held, applicable_rules
        )
    ]
    return result


def _process_python(job: FileJob) -> FileResult:
    import libcst as cst

    path = job.file.path
    result = FileResult(path)
    try:
        source = job.file.source
        if source is None:
            source = python_text(path, Path(path).read_bytes())
        result.source = source
        rules = _rules_for(job)
        if not rules or file_is_exempt(source):
            return result
        whole = job
        code, job = _relevant_code(source, job, rules)
        try:
            try:
                module = _parse(code)
            except cst.ParserSyntaxError:
                if code is source:
                    raise
                # A function blanked out of a block that then holds nothing
                # (a `def` alone under an `if`): parse the whole file.
                code, job = source, whole
                module = _parse(code)
        except cst.ParserSyntaxError as err:
            result.error = FileError(
                path, f"syntax error: {err.message}", err.raw_line, err.raw_column + 1
            )
            return result
        result.parsed = True
        from tfrewrite.pipeline.relevant_code import WholeFileNeeded

        try:
            return _run_rules(result, module, code, job, rules)
        except WholeFileNeeded:
            # The functions left out could not be indexed on their own for a
            # simulated fix round: check the whole file instead.
            return _run_rules(result, _parse(source), source, whole, rules)
    except RecursionError:
        result.error = FileError(path, "internal error: file too deeply nested to analyse")
        return result
    except Exception as err:  # noqa: BLE001 - one file's failure never stops the run
        result.error = FileError(path, f"internal error: {_describe(err)}")
        return result


def _describe(err: Exception) -> str:
    """An internal error in one line a bug report can quote: the exception,
    the first line of what it says (a `KeyError` on a syntax node would
    print the whole tree), and where in tfrewrite it was raised."""
    import traceback

    said = str(err).strip().splitlines()
    text = type(err).__name__
    if said:
        first = said[0] if len(said[0]) <= 120 else said[0][:117] + "..."
        text += f": {first}" + (" ..." if len(said) > 1 else "")
    frames = [f for f in traceback.extract_tb(err.__traceback__) if "tfrewrite" in f.filename]
    if frames:
        where = frames[-1]
        module = where.filename.rsplit("tfrewrite", 1)[-1].strip("/\\")
        text += f" (in {module}:{where.lineno}, {where.name})"
    return text
