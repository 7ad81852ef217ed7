"""Source shared by `tests/test_frozen_resamples.py` and its TF test: a
physics-informed trainer that draws new collocation points before every
epoch, kept on `self` through a local name, and trains them in a
`tf.function` step that takes no arguments."""

from __future__ import annotations

SOURCE = """
import numpy as np
import tensorflow as tf


class Sampler:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def draw(self):
        points = self.rng.uniform(-1.0, 1.0, (16, 2)).astype(np.float32)
        return points, np.sin(points[:, :1])


class Trainer:
    def __init__(self, network, sampler):
        self.network = network
        self.sampler = sampler
        self.resample()

    def resample(self):
        {binding}
        self.points = points
        self.targets = targets

    def train(self, epochs):
        optimizer = tf.keras.optimizers.SGD(0.01)
        seen = []

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.network(self.points) - self.targets) ** 2)
            grads = tape.gradient(loss, self.network.trainable_variables)
            optimizer.apply_gradients(zip(grads, self.network.trainable_variables))
            return tf.reduce_sum(self.points)

        for _ in range(epochs):
            self.resample()
            seen.append(float(step()))
        return seen
"""


def source(binding: str = "points, targets = self.sampler.draw()") -> str:
    return SOURCE.format(binding=binding).lstrip()
