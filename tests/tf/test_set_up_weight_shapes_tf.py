"""What TFR107 leaves alone on a layer's weight, measured: a spectral-norm
helper reading the static shape of the weight it is handed (`w.shape`,
made in `build`) runs under a trace whose batch dimension is unknown,
where the same reading of the batch raises."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

pytestmark = pytest.mark.tensorflow


def normalised(weight: tf.Tensor) -> tf.Tensor:
    dims = weight.shape.as_list()
    flat = tf.reshape(weight, [-1, dims[-1]])
    return tf.reshape(flat / tf.norm(flat), dims)


class NormedDense(tf.keras.layers.Layer):
    def build(self, input_shape: tf.TensorShape) -> None:
        self.kernel = tf.random.normal([int(input_shape[-1]), 4], seed=1)
        self.weight = self.add_weight(shape=(int(input_shape[-1]), 4))

    def call(self, x: tf.Tensor) -> tf.Tensor:
        return tf.matmul(x, normalised(self.kernel)) + tf.matmul(x, normalised(self.weight))


def test_a_set_up_weight_keeps_its_shape_under_an_open_batch() -> None:
    layer = NormedDense()
    x = np.ones((3, 5), "float32")
    eager = layer(x).numpy()
    traced = tf.function(layer.call, input_signature=[tf.TensorSpec([None, 5], tf.float32)])
    np.testing.assert_allclose(traced(x).numpy(), eager, rtol=1e-6)


def test_the_batch_itself_has_an_open_shape() -> None:
    traced = tf.function(normalised, input_signature=[tf.TensorSpec([None, 5], tf.float32)])
    with pytest.raises((ValueError, TypeError)):
        traced(np.ones((3, 5), "float32"))
