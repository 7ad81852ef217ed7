"""The hazard `tests/test_learning_rate_callables.py` reports, run: a
learning-rate function read by the optimizer inside a traced step keeps the
rate of its first trace, while eagerly the step follows the epoch (TFR201
has no fix: the finding is the result)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.test_learning_rate_callables import SCHEDULED

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def _weights_per_epoch(module, eager: bool) -> list[np.ndarray]:
    tf.keras.utils.set_random_seed(5)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    trainer = module.Trainer(model)
    x, y = tf.ones([4, 2]), tf.zeros([4, 1])
    seen = []
    tf.config.run_functions_eagerly(eager)
    try:
        for epoch in range(3):
            trainer.epoch = epoch
            trainer.step(x, y)
            seen.append(model.layers[0].kernel.numpy().copy())
    finally:
        tf.config.run_functions_eagerly(False)
    return seen


def test_the_traced_step_keeps_the_first_learning_rate(tmp_path) -> None:
    module = load_file_module(SCHEDULED, tmp_path, "scheduled")
    eager = _weights_per_epoch(module, eager=True)
    traced = _weights_per_epoch(module, eager=False)
    # Eagerly the rate drops to 0 after the first epoch: the weights stop.
    np.testing.assert_allclose(eager[1], eager[2])
    # Traced, the rate of the first trace (0.1) goes on: they keep moving.
    assert not np.allclose(traced[1], traced[2])
    np.testing.assert_allclose(traced[0], eager[0], rtol=1e-6)
