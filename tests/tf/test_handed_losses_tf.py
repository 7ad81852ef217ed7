"""TFR301 with TFR302 on a loss handed to a trainer's constructor, under
TensorFlow: the original trained eagerly and the rewrite (the loss's
decorator removed, the trainer's step decorated) train alike, batch by
batch, a short last batch included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.handed_losses import FILES
from tests.projects import fix_project, write_project

from .equivalence import import_from

pytestmark = pytest.mark.tensorflow


def _train(folder: Path, eager: bool) -> tuple[list[float], list[np.ndarray]]:
    script = import_from(folder, "script", ("losses", "trainer"))
    tf.keras.utils.set_random_seed(7)
    model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(6)])
    rng = np.random.default_rng(0)
    batches = [
        (rng.normal(size=(n, 6)).astype("float32"), rng.normal(size=(n, 6)).astype("float32"))
        for n in (4, 4, 3)
    ]
    tf.config.run_functions_eagerly(eager)
    try:
        losses = script.run(model, batches)
    finally:
        tf.config.run_functions_eagerly(False)
    return losses, [v.numpy() for v in model.trainable_variables]


def test_the_rewrite_trains_as_the_original_does_eagerly(tmp_path: Path) -> None:
    fixed = fix_project(tmp_path / "original", FILES, ("TFR301", "TFR302"))
    assert "@tf.function" not in fixed["losses.py"]
    assert "@tf.function\n    def train_step" in fixed["trainer.py"]
    write_project(tmp_path / "rewrite", {**FILES, **fixed})
    expected, weights = _train(tmp_path / "original", eager=True)
    got, trained = _train(tmp_path / "rewrite", eager=False)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for a, b in zip(trained, weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
