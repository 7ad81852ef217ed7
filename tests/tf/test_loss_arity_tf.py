"""TFR301 on a four-argument loss under TensorFlow: the step traced with the
loss's decorator gone gives what the original gives eagerly, step by step."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from test_loss_arity import DENOISE

from tfrewrite.api import fix_source

from .equivalence import load_module, python_function, run_eagerly

pytestmark = pytest.mark.tensorflow


def _net_and_optimizer() -> tuple[tf.keras.Model, tf.keras.optimizers.Optimizer]:
    tf.keras.utils.set_random_seed(1)
    net = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(3)])
    return net, tf.keras.optimizers.SGD(0.05)


def test_the_step_traces_the_loss_as_the_original_ran_it() -> None:
    original = load_module(DENOISE)
    fixed = load_module(fix_source(DENOISE, select=["TFR301"]))
    assert not hasattr(fixed.denoise_loss, "python_function")
    eager_net, eager_opt = _net_and_optimizer()
    traced_net, traced_opt = _net_and_optimizer()
    traced_step = tf.function(python_function(fixed.step), autograph=False)
    scale = tf.constant([0.5])
    for i in range(3):
        clean = tf.constant(np.full((4, 3), 0.1 * i, np.float32))
        expected = run_eagerly(
            python_function(original.step), eager_net, eager_opt, clean + 0.1, clean, scale
        )
        actual = traced_step(traced_net, traced_opt, clean + 0.1, clean, scale)
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)
    for a, b in zip(eager_net.trainable_variables, traced_net.trainable_variables, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
