"""Throughput of `tfrewrite check` against a bare LibCST parse.

Corpus: the sources of the `keras==3.15.1` wheel (fetched once with `pip
download` into `benchmarks/.cache/`). Prints, for the whole corpus:

- the bare `libcst.parse_module` time of every file (one core);
- `check` with 1 job and with all cores (`engine.run`, the CLI's engine);
- the bare parse time of only the files `check` had to parse with LibCST,
  which is what `check` is compared against.

Then the command line as a user runs it, on a copy of the corpus: `check`
cold (empty cache), warm (unchanged tree, answered from the cache) and after
one file changed, each with the peak RSS of its largest process and the
peak PSS of its whole process tree (the workers included); and `ruff check
--select ALL --no-cache` on the same tree when Ruff is installed.

Usage: python benchmarks/throughput.py [--jobs N] [--corpus DIR] [--cli-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import libcst as cst

from tfrewrite.pipeline.engine import InputFile, RunOptions, run
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


_MEASURE = """
import os, resource, subprocess, sys, time


def tree(root):
    # The process and its descendants (the worker processes of `check`).
    pids, i = [root], 0
    while i < len(pids):
        try:
            tasks = os.listdir(f"/proc/{pids[i]}/task")
        except OSError:
            tasks = []
        for task in tasks:
            try:
                with open(f"/proc/{pids[i]}/task/{task}/children") as f:
                    pids += [int(p) for p in f.read().split()]
            except OSError:
                pass
        i += 1
    return pids


def pss(pid):
    # Proportional set size: a page shared by n processes counts 1/n in each,
    # so the sum over a process tree is the memory the tree takes.
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def high_water(pid):
    # The process's peak RSS so far (VmHWM, kB).
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu(pid):
    # User and system CPU seconds the process has used so far.
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
sampling = os.path.exists(f"/proc/{child.pid}/smaps_rollup")
tree_peak = -1 if not sampling else 0
rss_peak = 0
cpu_seen = {}
while child.poll() is None:
    if sampling:
        pids = tree(child.pid)
        tree_peak = max(tree_peak, sum(pss(p) for p in pids))
        rss_peak = max([rss_peak, *(high_water(p) for p in pids)])
        for p in pids:
            cpu_seen[p] = max(cpu_seen.get(p, 0.0), cpu(p))
    time.sleep(0.05)
elapsed = time.perf_counter() - start
if child.returncode != 0:  # a command that failed measured nothing
    sys.exit(f"{sys.argv[1:]} exited with {child.returncode}")
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
# Processes the command's workers start themselves (a fork server's workers)
# are not waited for by the command: what `getrusage` misses, the samples of
# each process of the tree (its peak RSS, its CPU time) still count.
peak = max(usage.ru_maxrss, rss_peak)
used = max(usage.ru_utime + usage.ru_stime, sum(cpu_seen.values()))
print(elapsed, peak, used, tree_peak)
"""


def timed_command(command: list[str], cwd: Path) -> tuple[float, float, float, float]:
    """Wall seconds, peak memory in MB, and CPU seconds (every process) of
    one command. Memory twice: the peak RSS of its largest process (a
    maximum over the processes, not a sum: `ru_maxrss` of the waited-for
    children, or the largest `VmHWM` sampled from any process of the tree,
    which also sees workers that a fork server, not the command, started),
    and the peak over time of the summed PSS of the whole process tree,
    sampled every 50 ms (NaN where `/proc` has no `smaps_rollup`). CPU time
    likewise: what `getrusage` reports, or the sum of what each process of
    the tree was last seen to have used, whichever is larger. On a shared
    machine wall time varies with the load; CPU time much less."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    tree = int(out[3]) / 1024 if int(out[3]) >= 0 else float("nan")
    return float(out[0]), int(out[1]) / 1024, float(out[2]), tree


def command_line(root: Path, jobs: int) -> None:
    """The CLI on a copy of the corpus: cold, warm, one file changed; Ruff."""
    check = [sys.executable, "-m", "tfrewrite", "check", "-q", "--exit-zero", "-j", str(jobs), "."]
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        shutil.copytree(root, tree)
        rows = [("check, cold (empty cache)", timed_command(check, tree))]
        rows.append(("check, warm (unchanged tree)", timed_command(check, tree)))
        changed = next(p for p in sorted(tree.rglob("*.py")) if "tensorflow" in p.read_text())
        changed.write_text(changed.read_text() + "\n# one edit\n")
        rows.append(("check, one file changed", timed_command(check, tree)))
        rows.append(("check --no-cache", timed_command([*check, "--no-cache"], tree)))
        ruff = [sys.executable, "-m", "ruff", "check", "--select", "ALL", "--no-cache"]
        ruff += ["--exit-zero", "-q", "."]
        if subprocess.run([*ruff[:3], "--version"], capture_output=True).returncode == 0:
            rows.append(("ruff check --select ALL --no-cache", timed_command(ruff, tree)))
    for name, (seconds, megabytes, cpu, tree) in rows:
        print(
            f"{name:<36} {seconds:7.2f} s  cpu {cpu:7.2f} s  peak {megabytes:6.0f} MB"
            f"  (process tree PSS {tree:6.0f} MB)"
        )
    measured = dict(rows)
    cold, warm, changed = (measured[name] for name, _ in rows[:3])
    goals = [
        ("warm <= 0.5 s", warm[0], warm[0] <= 0.5),
        ("one file changed <= 1 s", changed[0], changed[0] <= 1.0),
        ("peak memory, cold <= 150 MB", cold[1], cold[1] <= 150),
        ("process tree PSS, cold <= 150 MB", cold[3], cold[3] <= 150),
    ]
    if rows[-1][0].startswith("ruff"):
        ratio = measured["check --no-cache"][0] / rows[-1][1][0]
        goals.append(("check --no-cache <= 3x ruff", ratio, ratio <= 3))
    for goal, value, met in goals:
        print(f"goal {goal:<30} {value:8.2f}  {'met' if met else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--cli-only", action="store_true", help="only the command-line timings")
    args = parser.parse_args()
    root = args.corpus or fetch_corpus()
    paths = sorted(root.rglob("*.py"))
    lines = sum(p.read_bytes().count(b"\n") for p in paths)
    print(f"corpus: {root} ({len(paths)} files, {lines} lines)")
    command_line(root, args.jobs)
    if args.cli_only:
        return

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
