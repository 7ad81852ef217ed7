"""A part of a model the step trains (`ae.encoder` of a trained `ae`,
whose variables are among the model's) called in the tape, or in a helper
the tape runs, without `training=True` runs its batch normalization in
inference mode: TFR304, whatever the part is called. A part of a model
the step does not train stays a frozen network's."""

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
        self.enc = tf.keras.Sequential(layers)
        self.dec = tf.keras.layers.Dense(8)

    def call(self, x, training=False):
        return self.dec(self.enc(x, training=training))


ae = AutoEncoder()
critic = AutoEncoder()
optimizer = tf.keras.optimizers.SGD(0.1)


def latent_loss(x):
    z = ae.enc(x)
    return tf.reduce_mean(tf.square(z))


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        x_hat = ae(x, training=True)
        z = ae.enc(x)
        score = critic.enc(x_hat)
        loss = tf.reduce_mean(tf.square(x - x_hat)) + latent_loss(x) + tf.reduce_mean(z + score)
    grads = tape.gradient(loss, ae.trainable_variables)
    optimizer.apply_gradients(zip(grads, ae.trainable_variables))
"""


def test_parts_of_the_trained_model_are_model_calls(tmp_path: Path) -> None:
    path = tmp_path / "step.py"
    path.write_text(textwrap.dedent(STEP))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(path))], options, jobs=1)
    # `ae.enc(x)` in the helper and in the tape; not the frozen `critic.enc`.
    assert sorted(f.start.line for f in result.findings) == [22, 30]
