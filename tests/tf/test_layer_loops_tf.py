"""Measured: Keras 3 runs a layer's `call` without AutoGraph wherever it is
traced: its `for` over `tf.range` of a tensor raises under the project's
own `tf.function` step (AutoGraph does not convert through Keras'
`__call__`) as under `fit`; eagerly it runs. Why TFR108 reports it in
every project that traces the layer."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.layer_loops import KERAS_FIT, LAYERS, OWN_STEP

from .equivalence import load_file_module, load_path, python_function

pytestmark = pytest.mark.tensorflow


def _with_layers(source: str, directory: Path):
    """The script `source` importing a fresh `layers` module, both from real
    files: AutoGraph converts only functions whose source it can read."""
    path = directory / "layers.py"
    path.write_text(textwrap.dedent(LAYERS))
    load_path(path, "layers")
    try:
        return load_file_module(source, directory)
    finally:
        sys.modules.pop("layers", None)


def _data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 5, 3)).astype("float32")
    return x, rng.normal(size=(8, 1)).astype("float32")


_KERAS_3 = pytest.mark.skipif(
    not hasattr(tf.keras, "version") or tf.keras.version() < "3", reason="Keras 3"
)


def test_eagerly_the_loop_runs(tmp_path: Path) -> None:
    x, y = _data()
    script = _with_layers(OWN_STEP, tmp_path)
    loss = python_function(script.train_step)(tf.constant(x), tf.constant(y))
    assert np.isfinite(loss.numpy())


@_KERAS_3
def test_the_projects_own_step_does_not_convert_the_loop(tmp_path: Path) -> None:
    x, y = _data()
    script = _with_layers(OWN_STEP, tmp_path)
    with pytest.raises(Exception, match="symbolic"):
        script.train_step(tf.constant(x), tf.constant(y))


@_KERAS_3
def test_keras_fit_traces_the_loop_without_autograph(tmp_path: Path) -> None:
    x, y = _data()
    script = _with_layers(KERAS_FIT, tmp_path)
    with pytest.raises(Exception, match="symbolic"):
        script.train(x, y)
