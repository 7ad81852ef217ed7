"""Check that the editor's re-check after an edit reports what a whole check does.

`tfrewrite server` re-checks only the functions an edit can change
(`tfrewrite.pipeline.incremental`). This makes edits of every kind in every
function of a tree's files: a statement added at the top of its body, its
last statement removed, lines added above it (it moves, its text does not),
its `@tf.function` removed, or added to an undecorated function. It then
compares the findings of the re-check against the last check with those of a
whole check of the edited text: path, lines, columns, code, message and how
each is fixable. Any difference is a bug of the re-check. It also times both.

    PYTHONPATH=src python benchmarks/incremental_identity.py DIR [DIR ...] [--limit-files N] [--max-edits N]

Exit status 1 when findings differ.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from tfrewrite.facts.index import build_index, module_name_for
from tfrewrite.facts.project import compute_facts
from tfrewrite.findings import Finding
from tfrewrite.pipeline import incremental
from tfrewrite.pipeline.run_options import FileJob, InputFile, RunOptions
from tfrewrite.rules import select_codes

Key = tuple[int, int, int, int, str, str, tuple[str, str] | None]


def keys(findings: list[Finding]) -> list[Key]:
    return sorted(
        (
            f.start.line,
            f.start.column,
            f.end.line,
            f.end.column,
            f.code,
            f.message,
            None if f.fix is None else (f.fix.applicability.value, f.fix.message),
        )
        for f in findings
    )


def _functions(tree: ast.Module) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Top-level functions and methods of top-level classes (the units)."""
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield statement
        elif isinstance(statement, ast.ClassDef):
            for inner in statement.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield inner


def edits_of(source: str) -> Iterator[tuple[str, str]]:
    """(what was edited, the edited text) for each edit of each function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    lines = source.splitlines(keepends=True)
    for function in _functions(tree):
        body = function.body
        first = body[0]
        indent = " " * first.col_offset
        where = f"{function.name} (line {function.lineno})"
        if first.lineno > function.lineno:  # a body on lines of its own
            added = [
                *lines[: first.lineno - 1],
                f"{indent}_edited = 1\n",
                *lines[first.lineno - 1 :],
            ]
            yield f"a statement added in {where}", "".join(added)
        last = body[-1]
        if len(body) > 1 and last.end_lineno is not None and last.lineno > function.lineno:
            removed = [*lines[: last.lineno - 1], *lines[last.end_lineno :]]
            yield f"the last statement removed from {where}", "".join(removed)
        start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
        above = [*lines[: start - 1], "\n", "\n", *lines[start - 1 :]]
        yield f"lines added above {where}", "".join(above)
        decorated = [
            d
            for d in function.decorator_list
            if ast.unparse(d).split("(")[0].endswith("function") and d.end_lineno == d.lineno
        ]
        if decorated:
            dropped = [line for n, line in enumerate(lines, 1) if n != decorated[0].lineno]
            yield f"@tf.function removed from {where}", "".join(dropped)
        elif not function.decorator_list and "tf" in source:
            column = " " * function.col_offset
            decorating = [
                *lines[: function.lineno - 1],
                f"{column}@tf.function\n",
                *lines[function.lineno - 1 :],
            ]
            yield f"@tf.function added to {where}", "".join(decorating)


def job_for(path: str, source: str, options: RunOptions) -> FileJob | None:
    index = build_index(source, path, module_name_for(Path(path), Path(path).parent))
    if index.syntax_error is not None:
        return None
    traced = compute_facts([index]).for_path(path)
    return FileJob(InputFile(path, source), index, traced, options)


def options_for(select: str) -> RunOptions:
    return RunOptions(rule_codes=tuple(select_codes([select], [])), root=".")


def differences(
    path: str, before: str, after: str, options: RunOptions
) -> tuple[list[Key], list[Key], float, float] | None:
    """The findings a re-check after the edit `before` -> `after` gives and
    those a whole check gives (equal when the re-check is right), and the
    seconds each took; None when a text does not parse."""
    first = job_for(path, before, options)
    if first is None:
        return None
    _, last = incremental.check(first, None)
    start = time.perf_counter()
    edited = job_for(path, after, options)
    if edited is None:
        return None
    again, _ = incremental.check(edited, last)
    partial = time.perf_counter() - start
    start = time.perf_counter()
    edited = job_for(path, after, options)
    assert edited is not None
    whole, _ = incremental.check(edited, None)
    full = time.perf_counter() - start
    return keys(again.findings), keys(whole.findings), partial, full


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", type=Path, nargs="+")
    parser.add_argument("--select", default="TFR")
    parser.add_argument("--limit-files", type=int, default=0)
    parser.add_argument("--max-edits", type=int, default=12, help="edits per file, spread evenly")
    args = parser.parse_args()
    options = options_for(args.select)
    files = sorted(p for root in args.roots for p in root.rglob("*.py") if p.is_file())
    if args.limit_files:
        files = files[: args.limit_files]
    edits = differing = 0
    partial_total = whole_total = 0.0
    for path in files:
        source = path.read_text(encoding="utf-8", errors="replace")
        if "tensorflow" not in source and "keras" not in source:
            continue
        every = list(edits_of(source))
        step = max(1, len(every) // max(1, args.max_edits))
        for what, edited in every[::step][: args.max_edits]:
            found = differences(str(path), source, edited, options)
            if found is None:
                continue
            again, whole, partial, full = found
            edits += 1
            partial_total += partial
            whole_total += full
            if again != whole:
                differing += 1
                print(f"DIFFERENT {path}: {what}")
                for key in sorted(set(again) ^ set(whole)):
                    side = "re-check only" if key in again else "whole only"
                    print(f"    {side}: {key[:5]} {key[5][:100]}")
    print(
        f"{edits} edits in {len(files)} files: {differing} differ; re-check {partial_total:.1f} s, "
        f"whole check {whole_total:.1f} s"
    )
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
