"""Why TFR302 does not decorate a step that unpacks what an object of
unknown class returns without proof (`tests/test_unpacked_object_results.py`):
a Keras loss object returns one tensor; the step unpacks it eagerly, and
the same step under `tf.function` raises."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tests.test_unpacked_object_results import STEP

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

LOSS = """
import tensorflow as tf


class PairLoss(tf.keras.losses.Loss):
    def call(self, y_true, y_pred):
        mse = tf.reduce_mean(tf.square(y_true - y_pred))
        return tf.stack([mse, tf.reduce_mean(tf.abs(y_true - y_pred))])
"""


def _run(source: str) -> list[float]:
    module = load_module(source)
    losses = load_module(LOSS)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    model.build((None, 3))
    model.set_weights([np.ones((3, 1), np.float32), np.zeros(1, np.float32)])
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    module.train(
        model, losses.PairLoss(reduction=None), tf.keras.optimizers.SGD(0.01), [(x, x[:, :1])]
    )
    return [float(w) for w in model.get_weights()[0].ravel()]


def test_the_step_runs_eagerly_and_its_decoration_raises_traced() -> None:
    source = textwrap.dedent(STEP.format(callee="loss_fn"))
    assert "@tf.function" not in fix_source(source, select=["TFR302"])
    decorated = fix_source(source, select=["TFR302"], unsafe_fixes=True)
    assert "@tf.function" in decorated
    assert len(_run(source)) == 3
    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
        _run(decorated)
