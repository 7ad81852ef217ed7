"""TFR304 asks what a model an object's own method builds holds: a critic
kept as `self.critic = self.make_critic()`, whose builder adds layers one by
one to a `Sequential`, is called without `training` in a penalty term a
decorated step differentiates. Layer normalization ignores the flag, so the
call is right as written; batch normalization reads it."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

CRITIC = """
    import tensorflow as tf


    class Critic:
        def __init__(self, width):
            self.width = width
            self.critic = self.make_critic()
            self.optimizer = tf.keras.optimizers.Adam()

        def make_critic(self):
            net = tf.keras.Sequential()
            net.add(tf.keras.layers.Dense(self.width))
            net.add(tf.keras.layers.{norm}())
            net.add(tf.keras.layers.Dense(1))
            return net

        def smoothness(self, points):
            with tf.GradientTape() as inner:
                inner.watch(points)
                scores = self.critic(points)
            slopes = inner.gradient(scores, points)
            return tf.reduce_mean(tf.square(tf.norm(slopes, axis=1) - 1.0))

        @tf.function
        def step(self, points):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(self.critic(points, training=True))
                loss += self.smoothness(points)
            grads = tape.gradient(loss, self.critic.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
            return loss
"""


def _found(tmp_path: Path, norm: str) -> list[tuple[str, int]]:
    files = {"critic.py": CRITIC.replace("{norm}", norm)}
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_a_critic_of_layers_that_ignore_training_is_not_reported(tmp_path: Path) -> None:
    assert _found(tmp_path, "LayerNormalization") == []


def test_one_with_batch_normalization_is(tmp_path: Path) -> None:
    assert _found(tmp_path, "BatchNormalization") == [("critic.py", 20)]
