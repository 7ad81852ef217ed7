"""`tfrewrite verify` runs Keras 2 code on Keras 2 (`tf_keras`) and Keras 3
code on Keras 3, in one run: a project of three modules, each failing on the
other Keras, proves equivalent; forced onto Keras 3, the Keras 2 module
fails as it did before verify told the two apart."""

from __future__ import annotations

import importlib.util
import json
import textwrap
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tfrewrite.verify.command import register

pytestmark = [
    pytest.mark.tensorflow,
    pytest.mark.skipif(
        importlib.util.find_spec("tf_keras") is None,
        reason="needs tf_keras (make test installs it)",
    ),
]

# Each loss has a Python `if` on a tensor, which the fix makes a `tf.cond`.
KERAS_TWO = """\
import tensorflow as tf

rescale = tf.keras.layers.experimental.preprocessing.Rescaling(0.5)
optimizer = tf.keras.optimizers.legacy.SGD(0.1)


@tf.function
def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(rescale(y_true) - y_pred))
    if error > 0.3:
        loss = error * 0.5
    else:
        loss = tf.square(error)
    return loss
"""

# Written for Keras 2 when it was installed as `keras` (before TensorFlow 2.16).
KERAS_TWO_AS_KERAS = """\
import keras
import tensorflow as tf
from keras.layers.experimental import preprocessing

rescale = preprocessing.Rescaling(0.5)
optimizer = keras.optimizers.legacy.Adam(0.01)


@tf.function
def scaled_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.square(rescale(y_true) - y_pred))
    if error > 0.2:
        loss = tf.sqrt(error)
    else:
        loss = error
    return loss
"""

KERAS_THREE = """\
import keras
import tensorflow as tf

seeds = keras.random.SeedGenerator(7)


@tf.function
def gap_loss(y_true, y_pred):
    error = keras.ops.mean(keras.ops.abs(y_true - y_pred))
    if error > 0.3:
        loss = error * 2.0
    else:
        loss = keras.ops.square(error)
    return loss
"""


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def _main() -> None:
        """tfrewrite"""

    return app


def _verify(app: typer.Typer, folder: Path, *paths: str) -> dict:
    result = CliRunner().invoke(
        app,
        ["verify", "--no-cache", "--no-xla", "--jobs", "1", "--output-format", "json", *paths],
    )
    assert result.exit_code in (0, 1, 2), result.output
    return json.loads(result.output)


def _project(folder: Path) -> None:
    (folder / "k2_losses.py").write_text(KERAS_TWO)
    (folder / "k2_as_keras.py").write_text(KERAS_TWO_AS_KERAS)
    (folder / "k3_losses.py").write_text(KERAS_THREE)


def test_each_module_runs_on_the_keras_it_is_written_for(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    data = _verify(app, tmp_path, ".")
    results = {r["function"]: r for r in data["results"]}
    assert {name: r["verdict"] for name, r in results.items()} == {
        "clipped_loss": "equivalent",
        "scaled_loss": "equivalent",
        "gap_loss": "equivalent",
    }, json.dumps(data["results"], indent=1)[-3000:]
    assert data["exit_code"] == 0
    clipped = results["clipped_loss"]
    assert clipped["keras"]["version"] == 2
    assert any(
        w.startswith(
            "ran on Keras 2 (tf_keras): the module uses tf.keras.layers.experimental (line 3"
        )
        for w in clipped["warnings"]
    ), clipped["warnings"]
    assert results["scaled_loss"]["keras"]["why"].startswith(
        "ran on Keras 2 (tf_keras): the module uses keras.layers.experimental (line 3"
    )
    # Keras 3 code ran on Keras 3, and says nothing about it.
    assert "keras" not in results["gap_loss"]
    assert not any("Keras 2" in w for w in results["gap_loss"].get("warnings") or [])


def test_forced_onto_keras_three_the_keras_two_module_fails(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What verify gave this module before it told the two Keras apart."""
    (tmp_path / "k2_losses.py").write_text(KERAS_TWO)
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
            [tool.tfrewrite.verify]
            keras = 3
            """
        )
    )
    monkeypatch.chdir(tmp_path)
    data = _verify(app, tmp_path, "k2_losses.py")
    (result,) = data["results"]
    assert result["verdict"] not in ("equivalent", "consistent"), result
    assert "experimental" in json.dumps(result)
    assert "keras" not in result
