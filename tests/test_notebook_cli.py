"""Notebooks through the command line: findings in the right cells, fixes
that touch only the changed cells' sources, diffs that apply and name their
cells, clear errors."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest
from notebook_files import make_notebook
from typer.testing import CliRunner

from tfrewrite.cli import app

TUTORIAL = [
    ("markdown", "# Custom training\n\n```python\nprint(x)  # not code\n```"),
    ("code", "%matplotlib inline\nimport numpy as np\nimport tensorflow as tf"),
    ("code", "!pip install -q tensorflow-datasets\nx = np.ones((4, 3), np.float32)"),
    (
        "code",
        "def noisy_mse(y_true, y_pred):\n"
        "    noise = np.random.normal(0.0, 0.05, size=(4, 3))\n"
        "    return tf.reduce_mean(tf.square(y_true + noise - y_pred))",
    ),
    ("markdown", "Compile and train."),
    ("code", "%%bash\nnvidia-smi"),
    (
        "code",
        "model = tf.keras.Sequential([tf.keras.layers.Dense(3)])\n"
        "model.compile(optimizer='adam', loss=noisy_mse)\n"
        "model.fit(x, x, epochs=1)",
    ),
    (
        "code",
        "@tf.function\ndef step(v):\n    print('v', v)  # noqa: TFR103\n    return v * 2",
    ),
]

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def notebook(tmp_path: Path) -> Path:
    path = tmp_path / "tutorial.ipynb"
    path.write_text(make_notebook(TUTORIAL), encoding="utf-8")
    return path


def test_check_reports_findings_in_cells(notebook: Path) -> None:
    code, out = invoke("check", "--output-format", "concise", str(notebook))
    assert code == 1
    # A loss defined in cell 4 and compiled in cell 7 is one program.
    assert "tutorial.ipynb:cell 4:2:13: TFR102" in out
    assert "TFR103" not in out  # suppressed by noqa in its cell
    assert "not code" not in out


def test_json_carries_the_cell(notebook: Path) -> None:
    _, out = invoke("check", "--output-format", "json", str(notebook))
    (finding,) = [f for f in json.loads(out) if f["code"] == "TFR102"]
    assert finding["cell"] == 4
    assert finding["location"] == {"row": 2, "column": 13}


def test_text_format_shows_the_cell_line(notebook: Path) -> None:
    _, out = invoke("check", str(notebook))
    assert "2 |     noise = np.random.normal(0.0, 0.05, size=(4, 3))" in out


def test_fix_rewrites_only_the_changed_cell(notebook: Path) -> None:
    before = notebook.read_text(encoding="utf-8")
    code, _ = invoke("fix", str(notebook))
    after = notebook.read_text(encoding="utf-8")
    old, new = json.loads(before), json.loads(after)
    assert (
        new["cells"][3]["source"][1]
        == "    noise = tf.random.normal([4, 3], mean=0.0, stddev=0.05, dtype=y_true.dtype)\n"
    )
    new["cells"][3]["source"] = old["cells"][3]["source"]
    assert new == old  # outputs, images, metadata, ids, other cells: unchanged
    nbformat.validate(nbformat.reads(after, as_version=4))
    code, _ = invoke("fix", str(notebook))
    assert notebook.read_text(encoding="utf-8") == after  # fix twice == fix once


def test_diff_names_changed_cells_and_writes_nothing(notebook: Path) -> None:
    before = notebook.read_bytes()
    code, out = invoke("fix", "--diff", str(notebook))
    assert code == 1
    hunks = [line for line in out.splitlines() if line.startswith("@@")]
    assert hunks and all(line.endswith(" @@ cell 4") for line in hunks), out
    assert '-    "    noise = np.random.normal(0.0, 0.05, size=(4, 3))\\n",' in out
    assert notebook.read_bytes() == before


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_notebook_diff_applies_with_git_and_patch(
    tmp_path: Path, notebook: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fix --diff` of a folder holding a notebook is one patch `git apply`
    and `patch -p1` accept, and applying it gives what `fix` writes."""
    (tmp_path / "loss.py").write_text(
        "import tensorflow as tf\n\n\n@tf.function\ndef f(x):\n    print(x)\n    return x\n"
    )
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q"], check=True)
    result = runner.invoke(app, ["fix", "--diff", "."])
    assert result.exit_code == 1, result.output
    patch = tmp_path / "fix.patch"
    patch.write_bytes(result.stdout_bytes)
    applied = subprocess.run(["git", "apply", "--check", str(patch)], capture_output=True)
    assert applied.returncode == 0, applied.stderr
    if shutil.which("patch"):
        dry = subprocess.run(["patch", "-p1", "--dry-run", "-i", str(patch)], capture_output=True)
        assert dry.returncode == 0, dry.stdout + dry.stderr
    subprocess.run(["git", "apply", str(patch)], check=True)
    by_git = {p: (tmp_path / p).read_bytes() for p in ("tutorial.ipynb", "loss.py")}
    subprocess.run(["git", "apply", "-R", str(patch)], check=True)
    assert runner.invoke(app, ["fix", "."]).exit_code in (0, 1)  # 1: findings left
    assert by_git == {p: (tmp_path / p).read_bytes() for p in ("tutorial.ipynb", "loss.py")}


def test_folders_include_notebooks_unless_excluded(tmp_path: Path, notebook: Path) -> None:
    code, out = invoke("check", "--output-format", "concise", str(tmp_path))
    assert "tutorial.ipynb:cell 4" in out
    (tmp_path / "pyproject.toml").write_text('[tool.tfrewrite]\nexclude = ["*.ipynb"]\n')
    code, out = invoke("check", str(tmp_path))
    assert code == 0 and "TFR102" not in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{broken tensorflow", "invalid JSON"),
        (
            '{"nbformat": 3, "nbformat_minor": 0, "cells": [], "metadata": {}} tensorflow',
            "invalid JSON",
        ),
        (
            '{"nbformat": 3, "nbformat_minor": 0, "cells": [], "metadata": {"x": "tensorflow"}}',
            "nbformat 3",
        ),
        ('{"not": "a notebook", "tensorflow": 1}', "not a Jupyter notebook"),
    ],
)
def test_bad_notebooks_are_errors_and_untouched(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.ipynb"
    path.write_text(content + "\n")
    code, out = invoke("fix", str(path))
    assert code == 2
    assert message in out
    assert path.read_text() == content + "\n"


LOOP = [
    ("markdown", "# Custom training loop\n\nWritten the way the official tutorial does it."),
    ("code", "import numpy as np\nimport tensorflow as tf"),
    (
        "code",
        "model = tf.keras.Sequential([tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.2),\n"
        "                             tf.keras.layers.Dense(1)])\n"
        "optimizer = tf.keras.optimizers.Adam()\n"
        "loss_fn = tf.keras.losses.MeanSquaredError()\n"
        "data = (np.ones((64, 4)), np.ones((64, 1)))\n"
        "dataset = tf.data.Dataset.from_tensor_slices(data).batch(8)",
    ),
    (
        "code",
        "def train_step(x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = loss_fn(y, model(x))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"
        "    return loss",
    ),
    (
        "code",
        "%%time\nfor epoch in range(2):\n    for x, y in dataset:\n        loss = train_step(x, y)",
    ),
]


def test_a_tape_loop_notebook_gets_its_step_decorated(tmp_path: Path) -> None:
    path = tmp_path / "loop.ipynb"
    path.write_text(make_notebook(LOOP), encoding="utf-8")
    code, out = invoke("check", "--output-format", "concise", str(path))
    assert "loop.ipynb:cell 4:1:5: TFR302" in out
    assert "loop.ipynb:cell 4:3:27: TFR304" in out
    invoke("fix", "--unsafe-fixes", str(path))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    step = "".join(cells[3]["source"])
    assert step.startswith("@tf.function(reduce_retracing=True)\ndef train_step(x, y):")
    assert "model(x, training=True)" in step
    assert cells[4]["source"][0] == "%%time\n"  # the loop cell is untouched
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))


GRADIENTS = [
    ("code", "import tensorflow as tf"),
    (
        "code",
        "def f(x, y):\n"
        "    return x * y\n"
        "\n"
        "def grad(x, y):\n"
        "    with tf.GradientTape() as t:\n"
        "        t.watch(x)\n"
        "        out = f(x, y)\n"
        "    return t.gradient(out, x)",
    ),
]
FUNCTIONS = [
    ("code", "import tensorflow as tf\ntraces = []"),
    ("code", "@tf.function\ndef f(x):\n    traces.append(x)\n    return x + 1\n\nf(1.0)\nf(2.0)"),
]


def test_a_function_another_notebook_differentiates_by_the_same_name_is_not_its_loss(
    tmp_path: Path,
) -> None:
    """A course folder: one notebook differentiates its own `f`, another
    demonstrates `@tf.function` on a different `f`. Notebooks cannot import
    each other, so the second `f` is no loss and keeps its decorator."""
    (tmp_path / "03-gradients.ipynb").write_text(make_notebook(GRADIENTS), encoding="utf-8")
    functions = tmp_path / "06-functions.ipynb"
    functions.write_text(make_notebook(FUNCTIONS), encoding="utf-8")
    code, out = invoke("check", "--no-cache", "--select", "TFR301", str(tmp_path))
    assert "TFR301" not in out, out
    before = functions.read_text(encoding="utf-8")
    invoke("fix", "--no-cache", str(tmp_path))
    assert functions.read_text(encoding="utf-8") == before


BLOCKED_STEP = [
    ("code", "import numpy as np\nimport tensorflow as tf"),
    (
        "code",
        "model = tf.keras.Sequential([tf.keras.layers.Dense(1)])\n"
        "opt = tf.keras.optimizers.SGD(0.1)\n"
        "history = []",
    ),
    (
        "code",
        "def train_step(x, y):\n"
        "    with tf.GradientTape() as tape:\n"
        "        loss = tf.reduce_mean(tf.square(model(x) - y))\n"
        "    grads = tape.gradient(loss, model.trainable_variables)\n"
        "    opt.apply_gradients(zip(grads, model.trainable_variables))\n"
        "    history.append(float(loss))\n"
        "    return loss",
    ),
    (
        "code",
        "for epoch in range(3):\n"
        "    train_step(np.ones((2, 3), np.float32), np.ones((2, 1), np.float32))",
    ),
]


@pytest.mark.parametrize("output_format", ["concise", "json", "sarif", "github"])
def test_lines_named_in_messages_are_cell_lines(tmp_path: Path, output_format: str) -> None:
    """A message that names another line names it as the finding's own
    position is named: in its cell, never as a line of the cells joined."""
    path = tmp_path / "loop.ipynb"
    path.write_text(make_notebook(BLOCKED_STEP), encoding="utf-8")
    _, out = invoke("check", "--no-cache", "--output-format", output_format, str(path))
    assert "cell 3, line 6 TFR202 `history.append(...)`" in out
    assert "line 11" not in out  # the same line counted across the cells joined
    assert "\ue000" not in out and "\ue001" not in out


def test_lines_named_in_messages_of_a_python_file_are_plain(tmp_path: Path) -> None:
    source = "\n".join(text for kind, text in BLOCKED_STEP if kind == "code") + "\n"
    path = tmp_path / "loop.py"
    path.write_text(source, encoding="utf-8")
    _, out = invoke("check", "--no-cache", "--output-format", "concise", str(path))
    assert "line 11 TFR202 `history.append(...)`" in out
    assert "\ue000" not in out
