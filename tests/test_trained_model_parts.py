"""A part of a model the step trains (`ae.encoder` of a trained `ae`,
whose variables are among the model's) called in the tape, or in a helper
the tape runs, without `training=True` runs its batch normalization in
inference mode: TFR304. A part of a model the step does not train stays a
frozen network's, and a method of the trained model (`ae.sample(x)`) is no
model call."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

STEP = """
import tensorflow as tf


class AutoEncoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        layers = [tf.keras.layers.Dense(4), tf.keras.layers.BatchNormalization()]
        self.encoder = tf.keras.Sequential(layers)
        self.dec = tf.keras.layers.Dense(8)

    def sample(self, x):
        return tf.random.normal(tf.shape(x))

    def call(self, x, training=False):
        return self.dec(self.encoder(x, training=training))


ae = AutoEncoder()
critic = AutoEncoder()
optimizer = tf.keras.optimizers.SGD(0.1)


def latent_loss(x):
    z = ae.encoder(x)
    return tf.reduce_mean(tf.square(z))


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        x_hat = ae(x, training=True)
        z = ae.encoder(x)
        score = critic.encoder(x_hat)
        noise = ae.sample(x)
        loss = tf.reduce_mean(tf.square(x - x_hat)) + latent_loss(x) + tf.reduce_mean(z + score)
    grads = tape.gradient(loss, ae.trainable_variables)
    optimizer.apply_gradients(zip(grads, ae.trainable_variables))
"""


def test_parts_of_the_trained_model_are_model_calls(tmp_path: Path) -> None:
    path = tmp_path / "step.py"
    path.write_text(textwrap.dedent(STEP))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(path))], options, jobs=1)
    # `ae.encoder(x)` in the helper and in the tape; not the frozen `critic.encoder`.
    assert sorted(f.start.line for f in result.findings) == [25, 33]
