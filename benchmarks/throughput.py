"""Throughput of `tfrewrite check` against a bare LibCST parse.

Corpus: the sources of the `keras==3.15.1` wheel (fetched once with `pip
download` into `benchmarks/.cache/`). Prints, for the whole corpus:

- the bare `libcst.parse_module` time of every file (one core);
- `check` with 1 job and with all cores (`engine.run`, the CLI's engine);
- the bare parse time of only the files `check` had to parse with LibCST,
  which is what `check` is compared against.

Usage: python benchmarks/throughput.py [--jobs N] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import libcst as cst

from tfrewrite.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_rules

CACHE = Path(__file__).parent / ".cache"
WHEEL_SPEC = "keras==3.15.1"


def fetch_corpus() -> Path:
    target = CACHE / "keras-3.15.1"
    if target.is_dir():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(CACHE), WHEEL_SPEC],
        check=True,
    )
    wheel = next(CACHE.glob("keras-3.15.1-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(target)
    return target


def bare_parse(paths: list[Path]) -> float:
    start = time.perf_counter()
    for path in paths:
        cst.parse_module(path.read_bytes())
    return time.perf_counter() - start


def timed_check(paths: list[Path], root: Path, jobs: int) -> tuple[float, int, int, int]:
    options = RunOptions(
        rule_codes=tuple(r.code for r in select_rules(["TFR"], [])), root=str(root)
    )
    start = time.perf_counter()
    result = run([InputFile(str(p)) for p in paths], options, jobs=jobs)
    elapsed = time.perf_counter() - start
    return elapsed, result.parsed, len(result.findings), len(result.errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--corpus", type=Path, default=None)
    args = parser.parse_args()
    root = args.corpus or fetch_corpus()
    paths = sorted(root.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in paths)
    print(f"corpus: {root} ({len(paths)} files, {lines} lines)")

    t_bare_all = bare_parse(paths)
    print(
        f"bare libcst.parse_module, all files, 1 core: {t_bare_all:7.2f} s  "
        f"({lines / t_bare_all:,.0f} lines/s)"
    )

    timings = {}
    for jobs in sorted({1, args.jobs}):
        elapsed, parsed, findings, errors = timed_check(paths, root, jobs)
        timings[jobs] = elapsed
        print(
            f"tfrewrite check, {jobs} job(s):                {elapsed:7.2f} s  "
            f"({parsed} files parsed with LibCST, {findings} findings, {errors} errors)"
        )
    # Which files did check parse? Time a bare parse of exactly those.
    options = RunOptions(
        rule_codes=tuple(r.code for r in select_rules(["TFR"], [])), root=str(root)
    )
    result = run([InputFile(str(p)) for p in paths], options, jobs=args.jobs)
    parsed_paths = [Path(r.path) for r in result.files if r.parsed]
    t_bare_parsed = bare_parse(parsed_paths)
    print(
        f"bare parse of the {len(parsed_paths)} files check parses, 1 core: {t_bare_parsed:7.2f} s"
    )
    for jobs, elapsed in timings.items():
        print(
            f"check ({jobs} job(s)) / bare parse of those files: {elapsed / t_bare_parsed:.2f}x;"
            f" / bare parse of all files: {elapsed / t_bare_all:.2f}x"
        )


if __name__ == "__main__":
    main()
