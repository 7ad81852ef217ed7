"""TFR304 follows a model a builder returns beside plain values (`return
generator, discriminators, len(discriminators), 0`) into the attributes a
trainer unpacks it to: the generator's class (another module's, with batch
normalization) reads `training`, and its `call` takes a second input where
Keras would take `training`, so the call with two positional arguments is
still missing the flag."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

MODELS = """
    import tensorflow as tf


    class Generator(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tf.keras.layers.Dense(8)
            self.norm = tf.keras.layers.{norm}()

        def call(self, z, code, extra=None):
            return self.norm(self.dense(tf.concat([z, code], axis=-1)))
"""

TRAIN = """
    import tensorflow as tf
    from gan.models import Generator


    def build_networks():
        generator = Generator()
        critics = []
        start_epoch = 0
        return generator, critics, len(critics), start_epoch


    class Trainer:
        def __init__(self):
            self.generator, self.critics, self.n_critics, _ = build_networks()
            self.optimizer = tf.keras.optimizers.Adam()

        @tf.function
        def train_step(self, z, code):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.generator(z, code))
            grads = tape.gradient(loss, self.generator.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.generator.trainable_variables))
            return loss
"""


def _found(tmp_path: Path, norm: str) -> list[tuple[str, int]]:
    files = {
        "gan/__init__.py": "",
        "gan/models.py": MODELS.replace("{norm}", norm),
        "gan/train.py": TRAIN,
    }
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_a_builder_returned_model_with_batch_norm_is_reported(tmp_path: Path) -> None:
    assert _found(tmp_path, "BatchNormalization") == [("train.py", 20)]


def test_one_that_ignores_training_is_not(tmp_path: Path) -> None:
    assert _found(tmp_path, "LayerNormalization") == []
