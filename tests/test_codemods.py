"""The LibCST codemod entry points run the same rules as `tfrewrite fix`."""

from __future__ import annotations

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

    sys.path.insert(0, str(ROOT))
    try:
        for path in sorted((ROOT / "codemods").glob("*.py")):
            if path.stem == "__init__":
                continue
            module = importlib.import_module(f"codemods.{path.stem}")
            commands = [
                obj
                for obj in vars(module).values()
                if isinstance(obj, type) and obj.__module__ == module.__name__
            ]
            assert commands, path
            for command in commands:
                assert command.RULES
                for selector in command.RULES:
                    assert any(code.startswith(selector) for code in RULES_BY_CODE), selector
    finally:
        sys.path.remove(str(ROOT))


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
