"""Check that `check` reports the same findings with and without pruning.

`check` parses only the functions the selected rules can need
(`tfrewrite.pipeline.relevant_code`); this runs `check` on a tree both ways
(`RunOptions.prune_inert_code`) and compares every finding's path, line,
column, code, message and fixability. Any difference is a bug of pruning.

    PYTHONPATH=src python benchmarks/prune_identity.py /work/corpus [--select TFR] [--jobs 2]

Exit status 1 when the findings differ. `--no-prune` runs only the unpruned
check (to time it alone), `--prune-only` only the pruned one. With `--jobs 1`
the pruned run also counts the files and functions it left out.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

from tfrewrite.findings import Finding
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_codes
from tfrewrite.workspace.discovery import discover

# path, start line and column, end line and column, code, message, and how
# it is fixable (None, or the fix's applicability and message).
Key = tuple[str, int, int, int, int, str, str, tuple[str, str] | None]


def _keys(findings: list[Finding]) -> list[Key]:
    return sorted(
        (
            f.path,
            f.start.line,
            f.start.column,
            f.end.line,
            f.end.column,
            f.code,
            f.message,
            (f.fix.applicability.value, f.fix.message) if f.fix is not None else None,
        )
        for f in findings
    )


def _check(root: Path, options: RunOptions, jobs: int) -> tuple[list[Key], list[str], int, float]:
    files = [InputFile(str(p)) for p in discover([root], root, ())]
    start = time.perf_counter()
    result = run(files, options, jobs=jobs)
    elapsed = time.perf_counter() - start
    errors = sorted(f"{e.path}: {e.message}" for e in result.errors)
    return _keys(result.findings), errors, result.parsed, elapsed


def _count_pruning() -> dict[str, int]:
    """Count, in this process, what `relevant_code.prune` leaves out."""
    from tfrewrite.pipeline import relevant_code

    counts = {"asked": 0, "files": 0, "blanked": 0, "functions": 0}
    prune = relevant_code.prune

    def counting(source, index, traced, codes):  # noqa: ANN001, ANN202
        counts["asked"] += 1
        pruned = prune(source, index, traced, codes)
        units = relevant_code.relevance(source, index, traced, codes)
        counts["functions"] += len(units)
        if pruned is not None:
            counts["files"] += 1
            counts["blanked"] += len(pruned.pruned)
        return pruned

    relevant_code.prune = counting  # type: ignore[assignment]
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--select", default="ALL")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--unsafe-fixes", action="store_true")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--no-prune", action="store_true", help="run only the unpruned check")
    mode.add_argument("--prune-only", action="store_true", help="run only the pruned check")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    options = RunOptions(
        rule_codes=tuple(select_codes([args.select], [])),
        root=str(root),
        unsafe_fixes=args.unsafe_fixes,
    )
    counts = _count_pruning() if args.jobs == 1 else None
    runs = []
    if not args.prune_only:
        runs.append(("unpruned", dataclasses.replace(options, prune_inert_code=False)))
    if not args.no_prune:
        runs.append(("pruned", options))
    outcomes = {}
    for name, opts in runs:
        keys, errors, parsed, elapsed = _check(root, opts, args.jobs)
        outcomes[name] = (keys, errors)
        print(
            f"{name}: {len(keys)} findings, {len(errors)} errors, {parsed} files parsed, "
            f"{elapsed:.1f} s"
        )
    if counts is not None and "pruned" in outcomes:
        print(
            f"pruned: {counts['files']} files of {counts['asked']} blanked out "
            f"{counts['blanked']} of {counts['functions']} functions"
        )
    if len(outcomes) < 2:
        return 0
    (before, before_errors), (after, after_errors) = outcomes["unpruned"], outcomes["pruned"]
    missing = sorted(set(before) - set(after))
    extra = sorted(set(after) - set(before))
    for key in missing:
        print("only unpruned:", key)
    for key in extra:
        print("only pruned:  ", key)
    for error in sorted(set(before_errors) ^ set(after_errors)):
        print("error differs:", error)
    same = before == after and before_errors == after_errors
    print(f"identical: {same} ({len(before)} findings compared)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
