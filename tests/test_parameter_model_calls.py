"""TFR304 on a model a step is handed as a parameter: every call site
passes `self.pi`, a model the class keeps, so the step's `model(obs)` is
that model's call. A model of `Dense` layers (whose own methods call
`self.predict`, Keras' API, which builds nothing) computes the same with
`training=True`: no finding. One holding `Dropout` is reported."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

MODELS = """
    import tensorflow as tf


    class PolicyNet(tf.keras.Model):
        def __init__(self, units):
            super().__init__()
            self.hidden = tf.keras.Sequential([tf.keras.layers.Dense(units, activation="relu")])
            self.mu = tf.keras.layers.Dense(2)

        def call(self, obs):
            return self.mu(self.hidden(obs))

        def act(self, obs):
            return self.predict(obs)
"""

AGENT = """
    import tensorflow as tf
    from models import PolicyNet


    class Agent:
        def __init__(self):
            self.pi = PolicyNet(16)
            self.optimizer = tf.keras.optimizers.Adam()

        def update(self, obs, target):
            return self.train_one_step(self.pi, self.optimizer, obs, target)

        @tf.function
        def train_one_step(self, model, optimizer, obs, target):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(obs) - target))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
"""


def _found(tmp_path: Path, models: str) -> list[tuple[str, int]]:
    files = {"models.py": models, "agent.py": AGENT}
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_a_parameter_every_caller_fills_with_a_dense_model(tmp_path: Path) -> None:
    assert _found(tmp_path, MODELS) == []


def test_a_parameter_filled_with_a_model_holding_dropout(tmp_path: Path) -> None:
    noisy = MODELS.replace(
        '[tf.keras.layers.Dense(units, activation="relu")]',
        '[tf.keras.layers.Dense(units, activation="relu"), tf.keras.layers.Dropout(0.2)]',
    )
    assert _found(tmp_path, noisy) == [("agent.py", 16)]
