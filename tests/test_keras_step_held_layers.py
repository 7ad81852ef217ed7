"""TFR304 on a layer a Keras model holds, called in its own `train_step`
without `training` (`z = self.encoder(data)` in a VAE's step): `fit` runs
`train_step` outside any call context, so the layer gets no `training`
and its batch normalization runs in inference mode while the model
trains (`tests/tf/test_keras_step_held_layers_tf.py`). A held layer of
`Dense` layers only computes the same either way, and `self(x)` in the
model's `call` gets the flag from the call context."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

MODEL = """
import tensorflow as tf


class Encoder(tf.keras.layers.Layer):
    def __init__(self, units=4, **kwargs):
        super().__init__(**kwargs)
        self.dense = tf.keras.layers.Dense(units)
        {norm}

    def call(self, x):
        return {body}


class AutoEncoder(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.encoder = Encoder()
        self.decoder = tf.keras.layers.Dense(3)

    def call(self, x):
        return self.decoder(self.encoder(x))

    def train_step(self, data):
        with tf.GradientTape() as tape:
            z = self.encoder(data)
            loss = tf.reduce_mean((self.decoder(z) - data) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {{"loss": loss}}
"""

NORMED = MODEL.format(
    norm="self.norm = tf.keras.layers.BatchNormalization()", body="self.norm(self.dense(x))"
)
PLAIN = MODEL.format(norm="", body="self.dense(x)")


def test_a_held_layer_with_batch_norm_in_the_step_is_reported() -> None:
    findings = check_source(textwrap.dedent(NORMED), select=["TFR304"])
    assert [(f.start.line, f.message.split(" is ")[0]) for f in findings] == [
        (26, "`self.encoder(...)`")
    ]


def test_held_layers_that_ignore_training_are_not() -> None:
    assert check_source(textwrap.dedent(PLAIN), select=["TFR304"]) == []


def test_the_fix_passes_training() -> None:
    fixed = fix_source(textwrap.dedent(NORMED), select=["TFR304"], unsafe_fixes=True)
    assert "z = self.encoder(data, training=True)" in fixed
