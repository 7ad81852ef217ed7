"""`tfrewrite verify` without TensorFlow in this process: argument and
configuration errors, the missing-TensorFlow message, and the promise that the
command line itself never imports TensorFlow."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register

DATA = Path(__file__).parent / "data" / "verify"


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    return app


def _run(app: typer.Typer, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", *args])
    return result.exit_code, result.output


def test_command_line_never_imports_tensorflow() -> None:
    code = (
        "import sys, tfrewrite.verify.command, tfrewrite.verify.run, tfrewrite.verify.targets;"
        "print('tensorflow' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_no_tensorflow_is_exit_2_with_install_hint(app: typer.Typer, tmp_path: Path) -> None:
    # An interpreter without site-packages: the worker starts but cannot import TensorFlow.
    python = tmp_path / "python-without-packages"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    code, output = _run(
        app,
        "--python",
        str(python),
        "--original",
        str(DATA / "cond_before.py"),
        str(DATA / "cond_after.py"),
    )
    assert code == 2
    assert "pip install 'tfrewrite[verify]'" in output


def _no_scratch_left(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.startswith("tfrewrite-verify")]


def test_missing_interpreter_is_exit_2(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    code, output = _run(
        app,
        "--python",
        "/nonexistent/python",
        "--original",
        str(DATA / "cond_before.py"),
        str(DATA / "cond_after.py"),
    )
    assert code == 2 and "cannot run the interpreter" in output
    assert _no_scratch_left(tmp_path)  # the worker's scratch folder went with it


def test_original_takes_exactly_one_path(app: typer.Typer) -> None:
    code, output = _run(app, "--original", str(DATA / "cond_before.py"))
    assert code == 2 and "exactly one PATH" in output


def test_missing_path_is_exit_2(app: typer.Typer, tmp_path: Path) -> None:
    code, output = _run(app, str(tmp_path / "nope.py"))
    assert code == 2 and "no such file" in output


def test_bad_verify_configuration_is_exit_2(app: typer.Typer, tmp_path: Path) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text('[tool.tfrewrite.verify]\ninputs."m:f" = {x = "float32[8"}\n')
    code, output = _run(
        app,
        "--config",
        str(config),
        "--original",
        str(DATA / "cond_before.py"),
        str(DATA / "cond_after.py"),
    )
    assert code == 2 and "bad input specification" in output


def test_nothing_to_verify_starts_no_worker(app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("def add(a, b):\n    return a + b\n")
    code, output = _run(app, "--python", "/nonexistent/python", str(tmp_path / "plain.py"))
    assert code == 0 and "nothing to verify" in output


def test_unverifiable_change_is_not_proven_without_a_worker(
    app: typer.Typer, tmp_path: Path
) -> None:
    (tmp_path / "old.py").write_text("def scale(model, x):\n    return model(x) * 2\n")
    (tmp_path / "new.py").write_text("def scale(model, x):\n    return model(x) * 2.0\n")
    code, output = _run(
        app,
        "--python",
        "/nonexistent/python",
        "--original",
        str(tmp_path / "old.py"),
        str(tmp_path / "new.py"),
    )
    assert code == 1
    assert "NOT PROVEN" in output and 'harness."new:scale"' in output


def test_worker_is_a_runnable_module() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent / "src")}
    out = subprocess.run(
        [sys.executable, "-S", "-m", "tfrewrite.verify.worker"],
        input="",
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 2
    assert '"ready": false' in out.stdout and "tfrewrite[verify]" in out.stdout


def test_a_file_that_does_not_parse_is_reported_and_the_others_are_verified(
    app: typer.Typer, tmp_path: Path
) -> None:
    """`verify PATH` over a project with a broken file: the file is named
    (path, line, reason), left out, and counted in the exit code (2); the
    other files are still verified."""
    (tmp_path / "broken.py").write_text("import tensorflow as tf\n\ndef f(x:\n")
    (tmp_path / "plain.py").write_text("def add(a, b):\n    return a + b\n")
    code, output = _run(app, "--python", "/nonexistent/python", str(tmp_path))
    assert code == 2
    assert "broken.py:3:" in output and "syntax error" in output
    assert "nothing to verify" in output
