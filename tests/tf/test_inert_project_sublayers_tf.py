"""Measured: an encoder of `Dense` subclasses in a `Sequential` built from a
filled list, whose `call` takes `training` and ignores it, computes the same
with `training=True` as without (what TFR304 reads: no finding); one holding
`Dropout` does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.tf.equivalence import load_file_module

pytestmark = pytest.mark.tensorflow

SOURCE = """
import tensorflow as tf


class SineDense(tf.keras.layers.Dense):
    def __init__(self, units, w0=30.0):
        super().__init__(units, activation=None)
        self.w0 = w0


class Encoder(tf.keras.Model):
    def __init__(self, units, noisy=False):
        super().__init__()
        blocks = [SineDense(units)]
        blocks.append(tf.keras.layers.Dropout(0.5) if noisy else SineDense(units))
        self.net = tf.keras.Sequential(blocks)

    def call(self, inputs, training=None):
        return tf.reduce_mean(self.net(inputs), axis=1)
"""


@pytest.mark.parametrize("noisy", [False, True])
def test_training_changes_only_the_encoder_with_dropout(tmp_path: Path, noisy: bool) -> None:
    module = load_file_module(SOURCE, tmp_path)
    encoder = module.Encoder(8, noisy=noisy)
    x = tf.constant(np.random.default_rng(0).normal(size=(4, 5, 3)), tf.float32)
    inference = encoder(x).numpy()
    training = tf.function(lambda v: encoder(v, training=True))(x).numpy()
    assert np.allclose(inference, training) is not noisy
