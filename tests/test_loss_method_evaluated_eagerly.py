"""TFR301 and a model's decorated loss method that its decorated step
differentiates and a script also calls in an eager evaluation loop
through the object (`model.compute_loss(x)`): there the decorator does
the tracing, so it is not redundant and is left alone. Without that loop
it is a nested, redundant boundary and is reported."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = textwrap.dedent(
    """
    import tensorflow as tf


    class AutoEncoder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.net = tf.keras.layers.Dense(4)

        @tf.function
        def compute_loss(self, x):
            return tf.reduce_mean(tf.square(self.net(x) - x))

        @tf.function
        def train(self, x):
            with tf.GradientTape() as tape:
                loss = self.compute_loss(x)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.trainable_variables))


    def run(model, train_batches, test_batches):
        for x in train_batches:
            model.train(x)
        mean = tf.keras.metrics.Mean()
        for x in test_batches:
            mean(model.compute_loss(x))
        return mean.result()
    """
)


def test_a_loss_method_an_eager_loop_calls_through_the_object_keeps_its_decorator() -> None:
    assert check_source(SOURCE, select=["TFR301"]) == []


def test_without_that_loop_the_nested_decorator_is_reported() -> None:
    source = SOURCE.replace("mean(model.compute_loss(x))", "mean(x)")
    [finding] = check_source(source, select=["TFR301"])
    assert "nested, redundant graph boundary" in finding.message
