"""Hazards found running tfrewrite on public TF2 research code, shown real
under TensorFlow: the rewrite tfrewrite now withholds fails once traced, and
the code runs as written eagerly."""

from __future__ import annotations

import importlib.util

import pytest

from tfrewrite.api import check_source

pytestmark = pytest.mark.tensorflow

ENSEMBLE = """\
import tensorflow as tf


def build():
    return tf.keras.Sequential([tf.keras.layers.Dense(1)])


def main(dataset, members):
    losses = []
    for member in range(members):
        model = build()
        optimizer = tf.keras.optimizers.SGD(0.1)
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
        losses.append(float(loss))
    return losses
"""

# What extracting the step before the member loop would give.
EXTRACTED = ENSEMBLE.replace(
    """    losses = []
    for member in range(members):
        model = build()
        optimizer = tf.keras.optimizers.SGD(0.1)
        for x, y in dataset:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
""",
    """    losses = []

    @tf.function
    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss

    for member in range(members):
        model = build()
        optimizer = tf.keras.optimizers.SGD(0.1)
        for x, y in dataset:
            loss = train_step(model, optimizer, x, y)
""",
)


def _import(source: str, tmp_path, name: str):
    """Import `source` from a real file, so AutoGraph can read and convert it."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dataset():
    import tensorflow as tf

    x = tf.reshape(tf.range(12, dtype=tf.float32), (4, 3)) / 12.0
    return [(x, tf.reduce_sum(x, axis=1, keepdims=True))] * 2


def test_a_step_extracted_before_a_loop_that_builds_its_model_fails_once_traced(tmp_path):
    [finding] = check_source(ENSEMBLE, select=["TFR303"])
    assert finding.fix is None and "builds a new `model`" in finding.message
    assert EXTRACTED != ENSEMBLE
    eager = _import(ENSEMBLE, tmp_path, "ensemble_eager")
    assert len(eager.main(_dataset(), 2)) == 2  # both members train eagerly
    traced = _import(EXTRACTED, tmp_path, "ensemble_traced")
    with pytest.raises(Exception):  # noqa: B017, PT011 - Keras 2 and 3 raise differently
        traced.main(_dataset(), 2)
