"""Hazards found running tfrewrite on public TF2 research code, shown real
under TensorFlow: the rewrite tfrewrite now withholds fails once traced, and
the code runs as written eagerly."""

from __future__ import annotations

import pytest

from tfrewrite.api import check_source

from .equivalence import load_file_module

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


def _dataset():
    import tensorflow as tf

    x = tf.reshape(tf.range(12, dtype=tf.float32), (4, 3)) / 12.0
    return [(x, tf.reduce_sum(x, axis=1, keepdims=True))] * 2


def test_a_step_extracted_before_a_loop_that_builds_its_model_fails_once_traced(tmp_path):
    [finding] = check_source(ENSEMBLE, select=["TFR303"])
    assert finding.fix is None and "builds a new `model`" in finding.message
    assert EXTRACTED != ENSEMBLE
    eager = load_file_module(ENSEMBLE, tmp_path, "ensemble_eager")
    assert len(eager.main(_dataset(), 2)) == 2  # both members train eagerly
    traced = load_file_module(EXTRACTED, tmp_path, "ensemble_traced")
    with pytest.raises(Exception):  # noqa: B017, PT011 - Keras 2 and 3 raise differently
        traced.main(_dataset(), 2)


HAND_DRAWN_BATCH = """\
import numpy as np
import tensorflow as tf


def main(epochs):
    x_train = np.linspace(0.0, 1.0, 48, dtype="float32").reshape(16, 3)
    y_train = x_train.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)
    for epoch in range(epochs):
        perm = np.random.permutation(16)
        for batch in tf.data.Dataset.range(2):
            with tf.GradientTape() as tape:
                idx = perm[:8]
                loss = tf.reduce_mean(tf.square(model(x_train[idx], training=True) - y_train[idx]))
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
    return float(loss)
"""

# What extracting the step (taking `perm`) would give.
HAND_DRAWN_EXTRACTED = HAND_DRAWN_BATCH.replace(
    """    for epoch in range(epochs):""",
    """
    @tf.function
    def train_step(perm):
        with tf.GradientTape() as tape:
            idx = perm[:8]
            loss = tf.reduce_mean(tf.square(model(x_train[idx], training=True) - y_train[idx]))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss

    for epoch in range(epochs):""",
).replace(
    """            with tf.GradientTape() as tape:
                idx = perm[:8]
                loss = tf.reduce_mean(tf.square(model(x_train[idx], training=True) - y_train[idx]))
            grads = tape.gradient(loss, model.trainable_weights)
            optimizer.apply_gradients(zip(grads, model.trainable_weights))
""",
    """            loss = train_step(perm)
""",
)


def test_a_step_indexing_a_numpy_array_with_its_argument_fails_once_traced(tmp_path):
    [finding] = check_source(HAND_DRAWN_BATCH, select=["TFR303"])
    assert finding.fix is None and "indexes the NumPy array `x_train`" in finding.message
    assert "loss = train_step(perm)" in HAND_DRAWN_EXTRACTED
    eager = load_file_module(HAND_DRAWN_BATCH, tmp_path, "hand_drawn_eager")
    assert eager.main(2) >= 0.0  # trains as written
    traced = load_file_module(HAND_DRAWN_EXTRACTED, tmp_path, "hand_drawn_traced")
    with pytest.raises(Exception, match="symbolic"):  # noqa: PT011 - the error class varies
        traced.main(2)


FILTER_ASCENT = """\
import tensorflow as tf


def ascent_step(feature_extractor, image_var, optimizer):
    with tf.GradientTape() as tape:
        tape.watch(image_var)
        loss = tf.reduce_mean(feature_extractor(tf.expand_dims(image_var[0], 0)))
    grads = tape.gradient(loss, image_var)
    grads = tf.math.l2_normalize(grads)
    optimizer.apply_gradients(zip(grads * -1, image_var))
    return loss


def visualize(steps):
    tf.keras.utils.set_random_seed(0)
    inputs = tf.keras.Input((6, 6, 3))
    feature_extractor = tf.keras.Model(inputs, tf.keras.layers.Conv2D(2, 3)(inputs))
    image_var = [tf.Variable(tf.reshape(tf.range(108, dtype=tf.float32), (6, 6, 3)) / 108.0)]
    optimizer = tf.keras.optimizers.SGD(1.0)
    for _ in range(steps):
        loss = ascent_step(feature_extractor, image_var, optimizer)
    return float(loss)
"""


def test_a_step_zipping_a_stacked_gradient_tensor_fails_once_decorated(tmp_path):
    [finding] = check_source(FILTER_ASCENT, select=["TFR302"])
    assert finding.fix is None and "iterates over the tensor `grads * -1`" in finding.message
    eager = load_file_module(FILTER_ASCENT, tmp_path, "ascent_eager")
    assert isinstance(eager.visualize(3), float)  # runs as written
    decorated = FILTER_ASCENT.replace("def ascent_step", "@tf.function\ndef ascent_step")
    traced = load_file_module(decorated, tmp_path, "ascent_traced")
    with pytest.raises(Exception, match="Iterating over a symbolic"):  # noqa: PT011
        traced.visualize(3)
