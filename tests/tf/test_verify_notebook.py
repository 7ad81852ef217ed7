"""`tfrewrite verify` on a notebook: its code cells are loaded in order (IPython
lines made `pass`, training cells never run) and its pending rewrites proven."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from notebook_files import make_notebook
from typer.testing import CliRunner

from tfrewrite.verify.command import register

CELLS = [
    ("markdown", "# A tutorial-shaped notebook"),
    ("code", "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf"),
    ("code", "!pip install -q something\nTHRESHOLD = 0.5"),
    (
        "code",
        "@tf.function\n"
        "def clipped_loss(y_true, y_pred):\n"
        "    err = tf.reduce_mean(tf.abs(y_true - y_pred))\n"
        "    if err > THRESHOLD:\n"
        "        return tf.sqrt(err)\n"
        "    return err",
    ),
    ("code", "raise SystemExit('training cells never run')"),
]


def _verify_app() -> typer.Typer:
    """The `verify` command alone, as the command line registers it."""
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    return app


def test_verify_proves_a_notebooks_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "tutorial.ipynb"
    path.write_text(make_notebook(CELLS))
    app = _verify_app()
    result = CliRunner().invoke(app, ["verify", "--output-format", "json", str(path)])
    data = json.loads(result.output)
    verdicts = {item["function"]: item["verdict"] for item in data["results"]}
    assert verdicts.get("clipped_loss") == "equivalent", result.output
    assert result.exit_code == 0


def test_verify_names_notebook_positions_in_cells(tmp_path: Path) -> None:
    """Results name the function's cell and the line in it, and the
    rewrite's `tf.cond` by its cell too, as `check` names findings."""
    path = tmp_path / "tutorial.ipynb"
    path.write_text(make_notebook(CELLS))
    app = _verify_app()
    result = CliRunner().invoke(app, ["verify", "--no-cache", "--output-format", "json", str(path)])
    [item] = [i for i in json.loads(result.output)["results"] if i["function"] == "clipped_loss"]
    assert (item["cell"], item["line"]) == (4, 2)
    assert [(b["cell"], b["line"]) for b in item["branches"]] == [(4, 4)]
    text = CliRunner().invoke(app, ["verify", "--no-cache", str(path)]).output
    assert f"{path}:cell 4:2: clipped_loss" in text
    assert "tf.cond on rewrite cell 4, line 4: both" in text
