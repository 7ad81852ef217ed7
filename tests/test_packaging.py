"""tfrewrite as a user installs it: the wheel and the sdist build without a
deprecation warning, and the wheel, installed into a fresh virtual
environment (its dependencies from the package index), runs.

Slow and networked: marked `packaging`, run on its own (`-m packaging`)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs `build` (dev)"),
]

REPOSITORY = Path(__file__).parent.parent
# What a clone holds that a build must not see: environments, caches, builds.
LEFT_OUT = shutil.ignore_patterns(
    ".git", ".venv", "*.egg-info", "build", "dist", "__pycache__", ".tfrewrite_cache", ".*_cache"
)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def test_the_wheel_installs_into_a_fresh_venv_and_runs(tmp_path: Path) -> None:
    source = tmp_path / "tfrewrite"
    shutil.copytree(REPOSITORY, source, ignore=LEFT_OUT)
    dist = tmp_path / "dist"
    built = run(sys.executable, "-m", "build", "--outdir", dist, source, cwd=source)
    output = built.stdout + built.stderr
    assert built.returncode == 0, output
    assert "Deprecat" not in output, output  # e.g. a `project.license` table
    (wheel,) = dist.glob("tfrewrite-*.whl")
    assert list(dist.glob("tfrewrite-*.tar.gz"))

    venv = tmp_path / "venv"
    assert run(sys.executable, "-m", "venv", venv, cwd=tmp_path).returncode == 0
    bin_dir = venv / ("Scripts" if sys.platform == "win32" else "bin")
    installed = run(
        bin_dir / "python", "-m", "pip", "install", "-q", "--no-cache-dir", wheel, cwd=tmp_path
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr

    tfrewrite = bin_dir / "tfrewrite"
    version = run(tfrewrite, "--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert "0." in version.stdout
    # From the unpacked examples, not the sources: the installed package runs.
    checked = run(tfrewrite, "check", "--no-cache", "examples/", cwd=source)
    assert checked.returncode == 1, checked.stdout + checked.stderr  # 1: findings
    assert "TFR102" in checked.stdout and "Traceback" not in checked.stderr
    located = run(
        bin_dir / "python", "-c", "import tfrewrite; print(tfrewrite.__file__)", cwd=tmp_path
    )
    assert str(venv) in located.stdout
