"""TFR301 on losses picked from a table the model holds, under TensorFlow:
the model trained by `fit`-style traced steps with the losses' decorators
removed trains as the original does eagerly, step by step."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.held_loss_tables import SOURCE

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _train(source: str, eagerly: bool) -> tuple[list[float], list[np.ndarray]]:
    module = load_module(source)
    tf.keras.utils.set_random_seed(5)
    net = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    model = module.Regressor(net)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), run_eagerly=eagerly)
    x = np.linspace(-1.0, 1.0, 24, dtype=np.float32).reshape(8, 3)
    y = np.cos(np.linspace(0.0, 3.0, 16, dtype=np.float32)).reshape(8, 2)
    step = model.train_step if eagerly else tf.function(model.train_step, autograph=False)
    losses = [float(step((tf.constant(x), tf.constant(y)))["loss"]) for _ in range(3)]
    return losses, [v.numpy() for v in net.trainable_variables]


def test_the_traced_rewrite_trains_as_the_original_does_eagerly() -> None:
    fixed = fix_source(SOURCE, select=["TFR301"])
    assert "@tf.function" not in fixed
    expected, weights = _train(SOURCE, eagerly=True)
    got, trained = _train(fixed, eagerly=False)
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    for a, b in zip(trained, weights, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
