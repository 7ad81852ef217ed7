"""TFR301 on losses a trainer picks from a table another module's helper
returns: the original run eagerly and the rewrite (the losses' own
decorators removed, the step still traced) train the same, step by step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.projects import fix_project, write_project
from tests.returned_objectives import FILES

from .equivalence import import_from

pytestmark = pytest.mark.tensorflow


def _train(folder: Path, objective: str, eager: bool) -> tuple[list[float], list[np.ndarray]]:
    trainer = import_from(folder, "trainer", ("objectives",))
    tf.keras.utils.set_random_seed(3)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
    agent = trainer.Trainer(model, objective)  # a traced method holds its object weakly
    x = tf.constant(np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3))
    y = tf.constant(np.sign(np.linspace(-1.0, 1.0, 8, dtype=np.float32)).reshape(8, 1))
    tf.config.run_functions_eagerly(eager)
    try:
        losses = [float(agent.step(x, y)) for _ in range(3)]
    finally:
        tf.config.run_functions_eagerly(False)
    return losses, [v.numpy() for v in model.trainable_variables]


def test_the_rewrite_trains_as_the_original_does_eagerly(tmp_path: Path) -> None:
    fixed = fix_project(tmp_path / "original", FILES, ("TFR301",))
    assert "@tf.function" not in fixed["objectives.py"]
    write_project(tmp_path / "rewrite", {**FILES, **fixed})
    for objective in ("square", "hinge"):
        expected, weights = _train(tmp_path / "original", objective, eager=True)
        got, rewritten = _train(tmp_path / "rewrite", objective, eager=False)
        np.testing.assert_allclose(got, expected, rtol=1e-5)
        for a, b in zip(rewritten, weights, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
