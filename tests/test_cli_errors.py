"""Errors are errors: exit 2, one clear line per problem, and the run goes on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tfrewrite
from tfrewrite.cli import app

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
SRC = str(Path(tfrewrite.__file__).parent.parent)


def invoke(args: list[str], cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "flag.py").write_text(FLAG)
    return tmp_path


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def test_missing_path_is_one_line_and_the_others_are_checked(project: Path) -> None:
    result = invoke(["check", "nope.py", "flag.py"], project)
    assert result.exit_code == 2
    assert error_lines(result.output) == ["error: nope.py: no such file or folder"]
    assert "flag.py:8:8: TFR201" in result.output


def test_symlink_loop_and_broken_link(project: Path) -> None:
    (project / "a.py").symlink_to("b.py")
    (project / "b.py").symlink_to("a.py")
    (project / "gone.py").symlink_to("missing.py")
    result = invoke(["check", "."], project)
    assert result.exit_code == 2
    assert "error: a.py: symbolic link loop" in result.output
    assert "error: gone.py: broken symbolic link" in result.output
    assert "TFR201" in result.output
    named = invoke(["check", "a.py", "flag.py"], project)
    assert named.exit_code == 2 and "a.py: symbolic link loop" in named.output


def test_a_file_named_on_the_command_line_is_always_parsed(project: Path) -> None:
    (project / "plain.py").write_text("def f(:\n    pass\n")  # no TensorFlow in it
    result = invoke(["check", "plain.py"], project)
    assert result.exit_code == 2
    assert "plain.py:1:7: syntax error" in result.output


def test_binary_file_named_py_is_an_error(project: Path) -> None:
    (project / "blob.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00tensorflow\x00")
    result = invoke(["check", "blob.py", "flag.py"], project)
    assert result.exit_code == 2
    assert "blob.py: cannot read: binary file" in result.output
    assert "TFR201" in result.output


def test_a_notebook_named_on_the_command_line_is_checked_as_a_notebook(project: Path) -> None:
    (project / "demo.ipynb").write_text('{"cells": [], "nbformat": 4}')
    assert invoke(["check", "demo.ipynb"], project).exit_code == 0
    (project / "bad.ipynb").write_text("not json")
    result = invoke(["check", "bad.ipynb"], project)
    assert result.exit_code == 2
    assert error_lines(result.output)[0].startswith("error: bad.ipynb: invalid JSON")


def test_newer_python_syntax_names_the_version(project: Path) -> None:
    if sys.version_info >= (3, 12):
        pytest.skip("the running Python parses 3.12 syntax")
    (project / "new.py").write_text("import tensorflow as tf\n\ntype Pair = tuple[int, int]\n")
    result = invoke(["check", "new.py"], project)
    assert result.exit_code == 2
    assert "this is Python 3.12 syntax" in result.output


# -- configuration ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("[tool.tfrewrite\nselect = 1\n", ["invalid TOML"]),
        (
            "[tool.tfrewrite]\nselectt = ['TFR']\n",
            ["tool.tfrewrite.selectt", "['TFR']".replace("'", '"')],
        ),
        ("[tool.tfrewrite]\nunsafe-fixes = 'yes'\n", ["tool.tfrewrite.unsafe-fixes", '"yes"']),
        ("[tool.tfrewrite]\nselect = 'TFR1'\n", ["tool.tfrewrite.select", '"TFR1"']),
        ("[tool.tfrewrite]\nignore = ['TFR9']\n", ["tool.tfrewrite.ignore", '"TFR9"']),
        (
            "[tool.tfrewrite]\nper-file-ignores = {'a.py' = ['XYZ1']}\n",
            ['tool.tfrewrite.per-file-ignores."a.py"', '"XYZ1"'],
        ),
    ],
)
def test_configuration_errors_name_file_key_and_value(
    project: Path, table: str, expected: list[str]
) -> None:
    (project / "pyproject.toml").write_text(table)
    result = invoke(["check", "flag.py"], project)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert "pyproject.toml" in lines[0]
    for part in expected:
        assert part in lines[0], lines[0]


# -- permissions, checked by the operating system as a user without root's override ---


def _without_root_override(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the CLI without CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH, so even root
    meets folder permissions as any user does."""
    command = [sys.executable, "-m", "tfrewrite", *args]
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("needs setpriv to drop root's permission override")
        command = [setpriv, "--bounding-set", "-dac_override,-dac_read_search", *command]
    return subprocess.run(
        command,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": SRC},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def locked(project: Path):  # type: ignore[no-untyped-def]
    for name, mode in (("closed", 0o000), ("searchable", 0o111)):
        folder = project / name
        folder.mkdir()
        (folder / "loss.py").write_text(FLAG)
        folder.chmod(mode)
    probe = subprocess.run(
        ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "ls", "closed"]
        if os.geteuid() == 0
        else ["ls", "closed"],
        cwd=project,
        capture_output=True,
    )
    if probe.returncode == 0:
        pytest.skip("folder permissions are not enforced here")
    yield project
    for name in ("closed", "searchable"):
        (project / name).chmod(0o755)


def test_unreadable_and_unsearchable_folders_are_errors(locked: Path) -> None:
    completed = _without_root_override(["check", ".", "closed/loss.py"], locked)
    assert completed.returncode == 2, completed.stderr
    assert "Traceback" not in completed.stderr
    out = completed.stdout
    assert "error: closed: cannot read folder: permission denied" in out
    assert "error: searchable: cannot read folder: permission denied" in out
    assert "error: closed/loss.py: permission denied" in out
    assert "flag.py:8:8: TFR201" in out  # the run went on
