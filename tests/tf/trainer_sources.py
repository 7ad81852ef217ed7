"""What the verify tests' projects share: the data a script trains on, and
a trainer class (a `train_step` with a tape and an update, and a loop
method calling it per batch) under the names and constructor each test
gives."""

from __future__ import annotations

# The data every script trains on: 40 rows, batches of 16 (a short last one).
DATASET = """
import numpy as np
import tensorflow as tf


def make_dataset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], dtype="float32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
"""

_TRAINER = """

class {name}:
    def __init__(self, model{parameters}):
        self.model = model
        self.optimizer = tf.keras.optimizers.SGD({rate})

    def train_step(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        return loss

    def {loop}(self, dataset, epochs):
        for epoch in range(epochs):
            for x, y in dataset:
                loss = self.train_step(x, y)
        return loss
"""


def trainer_class(name: str, loop: str, rate: str = "0.05", parameters: str = "") -> str:
    """The class `name` whose method `loop` trains, with SGD at `rate` (a
    number, or a parameter of `__init__` listed in `parameters`)."""
    return _TRAINER.format(name=name, loop=loop, rate=rate, parameters=parameters)
