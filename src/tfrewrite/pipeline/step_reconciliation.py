"""Train steps across modules: a step's decoration in one file, and the code
of other files that it would trace.

Pass 2 checks each file on its own. Whether `train.step` may be decorated is
decided in `train.py`, while what `helpers.log_loss`, which the step calls,
would do once traced is found in `helpers.py`: a file written once, at trace
time, that no fix can rewrite, must withhold the decoration in `train.py`;
and while `train.step` stays eager, `helpers.log_loss` runs eagerly too, so
what it would do traced is no finding.

Each file's result says which of its steps' decorations were withheld
(`FileResult.withheld_steps`) and which of its hazards that no fix rewrites
run only once a step of another file is decorated (`FileResult.step_blockers`).
`reconcile` turns these into facts of the traced functions
(`TracedFunction.foreign_blockers` on the step; what only withheld steps
would trace is no longer traced), and the files whose facts changed are
checked again with them.
Withholding a step never makes another step's code traced, so one
reconciliation settles every step.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from tfrewrite.workspace.line_names import path_line

if TYPE_CHECKING:
    from tfrewrite.facts.index_records import ModuleIndex
    from tfrewrite.facts.traced_function import ProjectFacts, StepKey, TracedFunction
    from tfrewrite.findings import FileResult
    from tfrewrite.pipeline.decoration_gate import Found


def foreign_steps(path: str, traced: TracedFunction) -> list[StepKey]:
    """The train steps of other files whose decoration would trace a
    function of `path`."""
    return sorted(step for step in traced.pending_steps if step[0] != path)


def involved_paths(facts: ProjectFacts) -> set[str]:
    """Files whose results the reconciliation can change: those holding
    code that only a step of another file would trace, and those steps'
    files. Empty in most projects: then nothing is checked twice."""
    paths: set[str] = set()
    for path, functions in facts.traced.items():
        for traced in functions.values():
            steps = foreign_steps(path, traced)
            if steps:
                paths.add(path)
                paths.update(step_path for step_path, _ in steps)
    return paths


def step_outcomes(
    path: str, first: Iterable[Found], index: ModuleIndex, traced: dict[str, TracedFunction]
) -> tuple[list[str], list[tuple[str, str, str]]]:
    """What one file's first round tells other files: the qualnames of its
    steps whose decoration the gate withheld, and its hazards that block a
    decoration, in code traced only once a step of another file is: (step
    path, step qualname, "in `qualname` (path:line): CODE what")."""
    from tfrewrite.pipeline.decoration_gate import blocks_a_decoration, first_clause
    from tfrewrite.rewrite.step_violation import StepViolation

    withheld: list[str] = []
    blockers: list[tuple[str, str, str]] = []
    for found in sorted(first, key=lambda f: (f.start.line, f.start.column)):
        violation = found.violation
        if isinstance(violation, StepViolation):
            withheld.extend(violation.withheld)
        if not blocks_a_decoration(found):
            continue
        qualname = index.innermost_function(found.start.line)
        known = traced.get(qualname) if qualname is not None else None
        if known is None or not known.pending:
            continue
        where = path_line(path, found.start.line, index.cell_starts)
        what = f"in `{qualname}` ({where}): {found.rule.code} {first_clause(violation.message)}"
        blockers.extend((step_path, step, what) for step_path, step in foreign_steps(path, known))
    return sorted(set(withheld)), list(dict.fromkeys(blockers))


def reconcile(facts: ProjectFacts, results: Iterable[FileResult]) -> set[str]:
    """Write into `facts` what the files' results tell of steps across
    files, and return the paths whose traced functions changed:

    - a step that code of another file would run in, where that code has a
      hazard no fix rewrites, learns it (`foreign_blockers`): its decoration
      is withheld, and the finding on it says why;
    - code of one file that only steps of other files would trace, all of
      whose decorations are withheld (there, or for the reason above),
      runs eagerly as shipped: it is no longer traced."""
    blockers: dict[StepKey, list[str]] = {}
    withheld: set[StepKey] = set()
    for result in sorted(results, key=lambda r: r.path):
        withheld.update((result.path, qualname) for qualname in result.withheld_steps)
        for step_path, step, what in result.step_blockers:
            blockers.setdefault((step_path, step), []).append(what)
    withheld |= blockers.keys()
    if not withheld:
        return set()
    changed: set[str] = set()
    for path, functions in facts.traced.items():
        kept: dict[str, TracedFunction] = {}
        for qualname, known in functions.items():
            found = tuple(blockers.get((path, qualname), ()))
            if known.pending and found != known.foreign_blockers and found:
                known = dataclasses.replace(known, foreign_blockers=found)
            if known.pending_steps and all(
                step[0] != path and step in withheld for step in known.pending_steps
            ):
                continue  # eager as shipped
            kept[qualname] = known
        if kept != functions:
            facts.traced[path] = kept
            changed.add(path)
    return changed
