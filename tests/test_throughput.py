"""What makes `check` fast keeps its results the same: exclude patterns
compiled once, files no rule can fire in settled without a worker, the
largest files checked first, fewer garbage collections."""

from __future__ import annotations

import gc
import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_rules
from tfrewrite.workspace.discovery import find_files

TRACED = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def step{n}(x):
        print("step", x)
    {padding}    return x + {n}
    """
)
PLAIN = "import tensorflow as tf\n\nX = tf.constant({n})\n"


def _options(root: Path) -> RunOptions:
    return RunOptions(rule_codes=tuple(r.code for r in select_rules(["TFR"], [])), root=str(root))


def _project(root: Path) -> list[InputFile]:
    for n in range(24):  # enough files for the process pool, of different sizes
        padding = "    y = x\n" * (n * 7 % 24)
        (root / f"traced_{n:02}.py").write_text(TRACED.format(n=n, padding=padding))
        (root / f"plain_{n:02}.py").write_text(PLAIN.format(n=n))
    return [InputFile(str(p)) for p in sorted(root.glob("*.py"))]


def _summary(result) -> list[tuple[str, bool, list[tuple[str, int]]]]:  # type: ignore[no-untyped-def]
    return [(r.path, r.parsed, [(f.code, f.start.line) for f in r.findings]) for r in result.files]


def test_parallel_check_returns_what_one_process_returns(tmp_path: Path) -> None:
    files = _project(tmp_path)
    one = run(files, _options(tmp_path), jobs=1)
    two = run(files, _options(tmp_path), jobs=2)
    assert _summary(two) == _summary(one)
    assert [Path(r.path).name for r in two.files] == sorted(Path(f.path).name for f in files)
    assert sum(1 for r in one.files if r.findings) == 24


def test_a_check_keeps_sources_only_where_a_report_shows_them(tmp_path: Path) -> None:
    result = run(_project(tmp_path), _options(tmp_path), jobs=2)
    for r in result.files:
        assert (r.source is not None) == bool(r.findings), r.path
    plain = [r for r in result.files if Path(r.path).name.startswith("plain")]
    assert not any(r.parsed for r in plain)


def test_a_run_restores_the_collector_threshold(tmp_path: Path) -> None:
    before = gc.get_threshold()
    run(_project(tmp_path), _options(tmp_path), jobs=1)
    assert gc.get_threshold() == before
    assert not gc.get_freeze_count()


def test_exclude_patterns_match_names_paths_and_folders(tmp_path: Path) -> None:
    for rel in [
        "a.py",
        "build/b.py",
        "pkg/build/c.py",
        "pkg/gen_d.py",
        "pkg/sub/e.py",
        "f_test.py",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")

    def found(*patterns: str) -> set[str]:
        files = find_files([tmp_path], tmp_path, patterns).files
        return {p.relative_to(tmp_path).as_posix() for p in files}

    everything = found()
    assert len(everything) == 6
    assert found("build") == everything - {"build/b.py", "pkg/build/c.py"}
    assert found("build/") == everything - {"build/b.py", "pkg/build/c.py"}
    assert found("gen_*.py") == everything - {"pkg/gen_d.py"}
    assert found("pkg/sub") == everything - {"pkg/sub/e.py"}
    assert found("*_test.py", "pkg") == {"a.py", "build/b.py"}


def test_the_benchmark_measures_the_largest_process_and_the_whole_tree(tmp_path: Path) -> None:
    """The throughput benchmark's memory figures: the largest process's peak
    RSS, and the summed PSS of the process tree (two processes holding 40 MB
    each count 80 MB there, 40 MB in the first figure)."""
    import importlib.util
    import math
    import sys

    spec = importlib.util.spec_from_file_location(
        "throughput", Path(__file__).parents[1] / "benchmarks" / "throughput.py"
    )
    assert spec is not None and spec.loader is not None
    throughput = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(throughput)
    hold = "import time; b = bytearray(40_000_000); b[::4096] = b'x' * 9766; time.sleep(1.5)"
    child = f"p = subprocess.Popen([sys.executable, '-c', {hold!r}])"
    two = f"import subprocess, sys; {child}; {hold}; p.wait()"
    seconds, largest, cpu, tree = throughput.timed_command([sys.executable, "-c", two], tmp_path)
    assert seconds >= 1.5 and cpu >= 0
    assert 40 <= largest < 75
    if not math.isnan(tree):  # a system with /proc/<pid>/smaps_rollup
        assert tree >= 75


def test_tree_walks_see_children_in_lists_and_tuples() -> None:
    """The walks look node types up in a table instead of `isinstance`
    against LibCST's abstract classes: children held in a list (nodes a fix
    built) or a tuple (parsed) are found alike, and nested scopes are skipped
    on request."""
    import libcst as cst

    from tfrewrite.facts.walk import child_nodes, iter_nodes

    built = cst.Call(func=cst.Name("f"), args=[cst.Arg(cst.Name("a")), cst.Arg(cst.Name("b"))])
    parsed = cst.parse_expression("f(a, b)")
    for call in (built, parsed):
        names = [n.value for n in iter_nodes(call) if isinstance(n, cst.Name)]
        assert names == ["f", "a", "b"]
        assert len(child_nodes(call)) == 3
    module = cst.parse_module("def f():\n    x = 1\n    def g():\n        y = 2\n")
    outer = module.body[0]
    assert isinstance(outer, cst.FunctionDef)
    shallow = list(iter_nodes(outer.body, into_functions=False))
    assert {n.value for n in shallow if isinstance(n, cst.Name)} == {"x"}
    assert sum(1 for n in shallow if isinstance(n, cst.FunctionDef)) == 1  # `g`, not its body
    deep = {n.value for n in iter_nodes(outer.body) if isinstance(n, cst.Name)}
    assert deep == {"x", "g", "y"}
