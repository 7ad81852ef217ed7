"""The LibCST codemod entry points run the same rules as `tfrewrite fix`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tfrewrite.api import fix_source
from tfrewrite.rules import RULES_BY_CODE

ROOT = Path(__file__).parent.parent

SOURCE = textwrap.dedent(
    """\
    import tensorflow as tf


    @tf.function
    def loss(y_true, y_pred):
        print(y_pred)
        return tf.reduce_mean(y_true - y_pred)
    """
)


@pytest.mark.skipif("TFR103" not in RULES_BY_CODE, reason="needs TFR103")
def test_libcst_tool_codemod_equals_fix(tmp_path: Path) -> None:
    target = tmp_path / "loss.py"
    target.write_text(SOURCE)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "libcst.tool",
            "codemod",
            "tensor_print.TensorPrintCommand",
            str(target),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert target.read_text() == fix_source(SOURCE, select=["TFR103"])
    assert target.read_text() != SOURCE


def test_every_codemod_names_registered_rules() -> None:
    import importlib
    import pkgutil

    import tfrewrite.codemods

    names = [m.name for m in pkgutil.iter_modules(tfrewrite.codemods.__path__)]
    assert names
    for name in names:
        module = importlib.import_module(f"tfrewrite.codemods.{name}")
        commands = [
            obj
            for obj in vars(module).values()
            if isinstance(obj, type) and obj.__module__ == module.__name__
        ]
        assert commands, name
        for command in commands:
            assert command.RULES
            for selector in command.RULES:
                assert any(code.startswith(selector) for code in RULES_BY_CODE), selector
    # The clone's `codemods/` re-exports every command.
    assert sorted(p.stem for p in (ROOT / "codemods").glob("*.py") if p.stem != "__init__") == (
        sorted(names)
    )


@pytest.mark.skipif("TFR103" not in RULES_BY_CODE, reason="needs TFR103")
def test_codemods_run_from_an_installed_tfrewrite(tmp_path: Path) -> None:
    """A project that only installed tfrewrite (no clone on the path) lists
    `tfrewrite.codemods` in its own `.libcst.codemod.yaml`."""
    (tmp_path / ".libcst.codemod.yaml").write_text(
        "generated_code_marker: '@generated'\nformatter: ['cat']\nblacklist_patterns: []\n"
        "modules:\n  - 'tfrewrite.codemods'\nrepo_root: '.'\n"
    )
    (tmp_path / "loss.py").write_text(SOURCE)
    import tfrewrite

    env = {**os.environ, "PYTHONPATH": str(Path(tfrewrite.__file__).parent.parent)}
    completed = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "tensor_print.TensorPrintCommand", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "loss.py").read_text() == fix_source(SOURCE, select=["TFR103"])


def test_check_and_fix_never_import_tensorflow(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, sys
        from typer.testing import CliRunner
        from tfrewrite.cli import app
        os.chdir({str(tmp_path)!r})
        runner = CliRunner()
        runner.invoke(app, ["check", {str(ROOT / "examples")!r}])
        runner.invoke(app, ["fix", "--diff", "--unsafe-fixes", {str(ROOT / "examples")!r}])
        runner.invoke(app, ["check", "--output-format", "json", {str(ROOT / "examples")!r}])
        heavy = ("tensorflow", "keras", "numpy")
        leaked = sorted(m for m in sys.modules if m.split(".")[0] in heavy)
        print(leaked)
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_the_codemods_run_from_an_installed_tfrewrite_outside_a_clone(tmp_path: Path) -> None:
    """A project of its own, naming `tfrewrite.codemods` in its LibCST config:
    the commands come from the installed package (here: on the path, with the
    clone's folder nowhere near), not from the clone's `codemods/` folder."""
    import tfrewrite

    (tmp_path / ".libcst.codemod.yaml").write_text(
        "generated_code_marker: '@generated'\nformatter: ['cat']\nblacklist_patterns: []\n"
        "modules:\n  - 'tfrewrite.codemods'\nrepo_root: '.'\n"
    )
    target = tmp_path / "loss.py"
    target.write_text(SOURCE)
    env = {**os.environ, "PYTHONPATH": str(Path(tfrewrite.__file__).parent.parent)}
    completed = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "tensor_print.TensorPrintCommand", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr
    assert target.read_text() == fix_source(SOURCE, select=["TFR103"]) != SOURCE
