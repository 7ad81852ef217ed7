"""TFR304 judges a model by the layers it builds, following project layer
classes into the modules that define them: an encoder of sine-activated
`Dense` subclasses (Keras' own `call`, which ignores `training`), whose
`call` takes `training` only to ignore it, computes the same with
`training=True`: no finding. A project layer holding `Dropout` still is
one."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

LAYERS = """
    import tensorflow as tf


    class SineDense(tf.keras.layers.Dense):
        def __init__(self, units, w0=30.0):
            super().__init__(units, activation=None)
            self.w0 = w0


    class Noisy(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.drop = tf.keras.layers.Dropout(0.5)

        def call(self, x):
            return self.drop(x)
"""

ENCODER = """
    import tensorflow as tf
    from lib import layers


    class Encoder(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            blocks = [layers.SineDense(units)]
            blocks.append(layers.{last}(units))
            self.net = tf.keras.Sequential(blocks)

        def call(self, inputs, training=None):
            return tf.reduce_mean(self.net(inputs), axis=1)
"""

TRAIN = """
    import tensorflow as tf
    from lib.encoder import Encoder

    encoder = Encoder(8)
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(encoder(x)))
        grads = tape.gradient(loss, encoder.trainable_variables)
        optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
        return loss
"""


def _found(tmp_path: Path, last: str) -> list[tuple[str, int]]:
    files = {
        "lib/__init__.py": "",
        "lib/layers.py": LAYERS,
        "lib/encoder.py": ENCODER.replace("{last}", last),
        "train.py": TRAIN,
    }
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_an_encoder_of_dense_subclasses_ignores_training(tmp_path: Path) -> None:
    assert _found(tmp_path, "SineDense") == []


def test_a_project_layer_holding_dropout_reads_it(tmp_path: Path) -> None:
    assert _found(tmp_path, "Noisy") == [("train.py", 11)]
