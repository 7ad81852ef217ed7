"""Measured: in a map function over elements of unknown length, the first
dimension of a tensor reshaped to `(n_points, 3)` is known to the trace
(`tf.range(points.shape[0])` builds), while before the reshape it is `None`
(what TFR107 reports)."""

from __future__ import annotations

import pytest
import tensorflow as tf

pytestmark = pytest.mark.tensorflow


def test_the_reshaped_dimension_is_known_in_the_trace() -> None:
    seen = []

    def preprocess(points):
        seen.append(points.shape[0])
        points = tf.reshape(points, (4, 3))
        seen.append(points.shape[0])
        return tf.gather(points, tf.random.shuffle(tf.range(points.shape[0])))

    data = tf.data.Dataset.from_generator(
        lambda: iter([tf.zeros(12), tf.ones(12)]), output_signature=tf.TensorSpec([None])
    )
    out = list(data.map(preprocess))
    assert seen == [None, 4]
    assert [tuple(t.shape) for t in out] == [(4, 3), (4, 3)]
