"""The rewritten training loops reach the same losses as the originals: the
original runs as written (loss decorated, step eager / tape inline), the
rewrite runs with the decorator on the step, both seeded on the same data."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tfrewrite.api import fix_source_with_findings

from .equivalence import load_module

SETUP = """
    import keras
    import numpy as np
    import tensorflow as tf


    def make_data():
        rng = np.random.default_rng(0)
        x = rng.normal(size=(200, 8)).astype("float32")
        y = (x[:, :3].argmax(axis=1)).astype("int32")
        return tf.data.Dataset.from_tensor_slices((x, y)).batch(48)


    def make_model():
        keras.utils.set_random_seed(0)
        return keras.Sequential(
            [keras.Input((8,)), keras.layers.Dense(16, activation="tanh"), keras.layers.Dense(3)]
        )
"""

LOSS_DECORATED = (
    SETUP
    + """

    @tf.function
    def loss_fn(labels, logits):
        return tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        )


    def train_step(model, optimizer, x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.SGD(learning_rate=0.1)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                losses.append(float(train_step(model, optimizer, x, y)))
        return losses
"""
)

INLINE = (
    SETUP
    + """

    def train(epochs):
        model = make_model()
        optimizer = keras.optimizers.Adam(learning_rate=0.01)
        losses = []
        for epoch in range(epochs):
            for x, y in make_data():
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = tf.reduce_mean(
                        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits)
                    )
                losses.append(float(loss))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return losses
"""
)

# Logging written inside the tape block: the rewrite moves it after the step.
INLINE_LOGGING_IN_TAPE = INLINE.replace(
    """
                    )
                losses.append(float(loss))""",
    """
                    )
                    losses.append(float(loss))""",
)
assert INLINE_LOGGING_IN_TAPE != INLINE


@pytest.mark.parametrize(
    ("source", "codes"),
    [
        # TFR301's fix moves the decorator onto the step, which also settles TFR302.
        pytest.param(LOSS_DECORATED, {"TFR301"}, id="decorator-moved-to-step"),
        pytest.param(INLINE, {"TFR303"}, id="inline-tape-extracted"),
        pytest.param(INLINE_LOGGING_IN_TAPE, {"TFR303"}, id="logging-moved-out-of-the-tape"),
    ],
)
def test_rewritten_loop_reaches_the_same_losses(source, codes):
    original_source = textwrap.dedent(source)
    rewritten, fixed, remaining = fix_source_with_findings(
        original_source, "loop.py", ["TFR3"], unsafe_fixes=True
    )
    assert {f.code for f in fixed} == codes
    assert remaining == []
    assert rewritten.count("@tf.function") == 1
    original = load_module(original_source).train(3)
    module = load_module(rewritten)
    after = module.train(3)
    assert len(original) == len(after) == 15
    # The step really runs traced now: TensorFlow kept a concrete function.
    step = getattr(module, "train_step", None)
    if step is not None:
        assert step.experimental_get_tracing_count() >= 1
    np.testing.assert_allclose(after, original, rtol=1e-5, atol=1e-6)
    assert original[-1] < original[0]  # it trained
