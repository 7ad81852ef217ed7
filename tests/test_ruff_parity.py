"""Ruff parity in the small things: `check --fix`/`--diff`, `--statistics`,
`NO_COLOR`, `# noqa` only in comments, the progress bar, `--help`."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tfrewrite import cli
from tfrewrite.cli import app
from tfrewrite.pipeline.engine import InputFile, RunOptions, run
from tfrewrite.rules import select_rules

PRINTING = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred)
    """
)
FLAG = textwrap.dedent(
    """\
    import tensorflow as tf

    flag = False


    @tf.function
    def loss(y_true, y_pred):
        if flag:
            return y_true
        return y_pred


    def enable():
        global flag
        flag = True
    """
)


def invoke(args: list[str], cwd: Path, env: dict[str, str] | None = None):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args, catch_exceptions=False, env=env)
    finally:
        os.chdir(old)


def test_check_fix_is_fix(tmp_path: Path) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    result = invoke(["check", "--fix", "loss.py"], tmp_path)
    assert result.exit_code == 0, result.output
    assert "tf.print(" in (tmp_path / "loss.py").read_text()


def test_check_diff_is_fix_diff(tmp_path: Path) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    alias = invoke(["check", "--diff", "loss.py"], tmp_path)
    direct = invoke(["fix", "--diff", "loss.py"], tmp_path)
    assert alias.exit_code == direct.exit_code == 1
    assert alias.stdout == direct.stdout and "+    tf.print(" in alias.stdout
    assert (tmp_path / "loss.py").read_text() == PRINTING


def test_statistics_marks_only_applicable_fixes_and_ends_with_the_summary(
    tmp_path: Path,
) -> None:
    (tmp_path / "loss.py").write_text(PRINTING)
    (tmp_path / "flag.py").write_text(FLAG)
    result = invoke(["check", ".", "--statistics", "--select", "TFR103,TFR201"], tmp_path)
    lines = result.stdout.strip().splitlines()
    by_code = {line.split("\t")[1]: line for line in lines if "\t" in line}
    assert "[*]" in by_code["TFR103"]  # a safe fix
    assert "[*]" not in by_code["TFR201"]  # no fix, or one that needs --unsafe-fixes
    assert lines[-1].startswith("Found 2 findings in 2 files")


def test_statistics_counts_unsafe_fixes_under_unsafe_fixes(tmp_path: Path) -> None:
    from tfrewrite.findings import Applicability, Finding, FixInfo, Position
    from tfrewrite.report.text import render_statistics

    position = Position(1, 1)
    unsafe = Finding(
        "TFR999", "stand-in", "m", "a.py", position, position, FixInfo(Applicability.UNSAFE, "f")
    )
    assert "[*]" not in render_statistics([unsafe])
    assert "[*]" in render_statistics([unsafe], unsafe_fixes=True)


def test_no_color_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli.sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert cli._color()
    monkeypatch.setenv("NO_COLOR", "1")
    assert not cli._color()


def test_noqa_inside_a_string_does_not_suppress(tmp_path: Path) -> None:
    source = PRINTING.replace("print(y_pred)", 'print(y_pred, "# noqa")')
    (tmp_path / "loss.py").write_text(source)
    result = invoke(["check", "loss.py"], tmp_path)
    assert result.exit_code == 1 and "TFR103" in result.output
    (tmp_path / "loss.py").write_text(source.replace('"# noqa")', '"# noqa")  # noqa: TFR103'))
    assert invoke(["check", "--select", "TFR103", "loss.py"], tmp_path).exit_code == 0


def test_help_shows_the_config_table_and_no_type_noise() -> None:
    runner = CliRunner()
    for command in (["--help"], ["check", "--help"], ["fix", "--help"]):
        text = runner.invoke(app, command).output
        assert "<bool>" not in text and "<str>" not in text
        assert "[tool.tfrewrite]" in text


def test_progress_advances_to_the_end_of_every_phase(tmp_path: Path) -> None:
    """Every phase reports each file as it finishes, ending at its total (the
    second indexing pass, for files only traced code refers to, included)."""
    for i in range(20):
        (tmp_path / f"loss{i}.py").write_text(
            f"from util{i} import helper\n" + PRINTING.replace("print(y_pred)", "helper(y_pred)")
        )
        (tmp_path / f"util{i}.py").write_text("def helper(x):\n    return x\n")
    options = RunOptions(rule_codes=tuple(r.code for r in select_rules(["TFR"], [])), root=".")
    calls: list[tuple[str, int, int]] = []
    files = [InputFile(str(p)) for p in sorted(tmp_path.glob("*.py"))]
    run(files, options, jobs=2, progress=lambda *call: calls.append(call))
    phases: dict[str, list[tuple[int, int]]] = {}
    for phase, done, total in calls:
        phases.setdefault(phase, []).append((done, total))
    assert {"indexing", "indexing referenced files", "checking"} <= set(phases)
    for phase, steps in phases.items():
        dones = [done for done, _ in steps]
        assert dones == sorted(dones), phase
        assert steps[-1][0] == steps[-1][1], phase


def test_fix_reports_writing_progress(tmp_path: Path) -> None:
    from tfrewrite.findings import FileResult

    paths = []
    for i in range(3):
        path = tmp_path / f"m{i}.py"
        path.write_text("x = 1\n")
        paths.append(path)
    changed = [FileResult(str(p), source="x = 1\n", fixed_source="x = 2\n") for p in paths]
    calls: list[tuple[str, int, int]] = []
    cli._write_fixes(changed, lambda *call: calls.append(call))
    assert calls == [("writing", 1, 3), ("writing", 2, 3), ("writing", 3, 3)]
    assert all(p.read_text() == "x = 2\n" for p in paths)
