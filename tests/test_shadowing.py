"""A project whose top level shadows standard-library modules (`random/`,
`types.py`, `logging/`, ...) is checked from inside it as from outside: the
rule workers and the helper processes `multiprocessing` starts never import
the project's modules."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).parents[1] / "src")
# Folders and files named after standard-library modules that
# `multiprocessing`, `tempfile` and `concurrent.futures` import.
SHADOWING_PACKAGES = ("random", "logging", "multiprocessing", "io")
SHADOWING_MODULES = ("types", "tempfile")
# More files than the engine checks in-process (`workers.PARALLEL_THRESHOLD`), so the
# rule workers start.
FILES = 20
FLAGGED = """\
import numpy as np
import tensorflow as tf


@tf.function
def noisy(x):
    return x + np.random.normal(size=3)
"""


def _project(root: Path, shadow: tuple[str, ...] = SHADOWING_MODULES) -> Path:
    project = root / "proj"
    for name in SHADOWING_PACKAGES:
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(f"raise RuntimeError('imported {name}')\n")
    for name in shadow:
        (project / f"{name}.py").write_text(f"raise RuntimeError('imported {name}')\n")
    (project / "pkg").mkdir()
    for i in range(FILES):
        (project / "pkg" / f"m{i}.py").write_text(FLAGGED)
    return project


def _tfrewrite(
    args: list[str], cwd: Path, module: bool = False
) -> subprocess.CompletedProcess[str]:
    """The installed command line (as a user runs it), or `python -m tfrewrite`."""
    script = Path(sys.executable).with_name("tfrewrite")
    if module:
        command = [sys.executable, "-m", "tfrewrite"]
    elif script.exists():
        command = [str(script)]
    else:
        pytest.skip("the `tfrewrite` script is not installed beside this Python")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["PYTHONPATH"] = SRC
    return subprocess.run(
        [*command, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _findings(output: str, prefix: str) -> list[str]:
    return sorted(line.removeprefix(prefix) for line in output.splitlines() if ": TFR" in line)


ARGS = ["-j", "2", "--no-cache", "--output-format", "concise"]


def test_check_from_inside_a_shadowing_project(tmp_path: Path) -> None:
    project = _project(tmp_path)
    outside = _tfrewrite(["check", "proj", *ARGS], tmp_path)
    inside = _tfrewrite(["check", ".", *ARGS], project)
    assert outside.returncode == 1, outside.stderr
    assert inside.returncode == 1, inside.stderr
    assert "Traceback" not in inside.stderr + outside.stderr
    assert "imported" not in inside.stderr
    expected = _findings(outside.stdout, "proj/")
    assert len(expected) == FILES
    assert _findings(inside.stdout, "") == expected
    zero = _tfrewrite(["check", ".", *ARGS, "--exit-zero"], project)
    assert zero.returncode == 0, zero.stderr
    assert "Traceback" not in zero.stderr


def test_python_dash_m_drops_the_working_directory(tmp_path: Path) -> None:
    """`python -m tfrewrite` in such a project (without a `types.py`, which
    breaks Python's own `-m` before any tfrewrite code runs)."""
    project = _project(tmp_path, shadow=("tempfile",))
    completed = _tfrewrite(["check", ".", *ARGS], project, module=True)
    assert completed.returncode == 1, completed.stderr
    assert "Traceback" not in completed.stderr
    assert len(_findings(completed.stdout, "")) == FILES
