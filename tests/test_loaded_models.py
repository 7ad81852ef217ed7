"""TFR304 on a model kept in an attribute that a `load` method may also
fill with `keras.models.load_model(path)`: the loaded model is one the
project built and saved, so what the attribute holds is judged by its
builders. A model of `Dense` layers needs no `training=True`; one with
dropout does; an attribute only ever loaded may hold anything."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

AGENT = """
    import tensorflow as tf


    class Agent:
        def __init__(self, units):
            self.units = units
            self.critic = self.make_critic()
            self.optimizer = tf.keras.optimizers.Adam(1e-3)

        def make_critic(self):
            inputs = tf.keras.Input(shape=(4,))
            hidden = tf.keras.layers.Dense(self.units, activation="relu")(inputs)
            {extra}
            return tf.keras.Model(inputs, tf.keras.layers.Dense(1)(hidden))

        def restore(self, path):
            self.critic = tf.keras.models.load_model(path)

        @tf.function
        def value(self, states):
            return self.critic(states)
"""

ONLY_LOADED = """
    import tensorflow as tf


    class Agent:
        def __init__(self, path):
            self.critic = tf.keras.models.load_model(path)
            self.optimizer = tf.keras.optimizers.Adam(1e-3)

        @tf.function
        def value(self, states):
            return self.critic(states)
"""


# A learner stepping the agent's critic in its tape, driven by a loop.
LEARNER = """

    class Learner:
        def __init__(self, agent):
            self.agent = agent

        def learn(self, states, targets):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((self.agent.value(states) - targets) ** 2)
            grads = tape.gradient(loss, self.agent.critic.trainable_variables)
            self.agent.optimizer.apply_gradients(zip(grads, self.agent.critic.trainable_variables))


    def main(batches):
        learner = Learner(Agent({argument}))
        for states, targets in batches:
            learner.learn(states, targets)
"""


def _check(tmp_path: Path, agent: str, argument: str = "8") -> list[tuple[str, int]]:
    source = agent + LEARNER.format(argument=argument)
    return found_lines(check_project(tmp_path, {"agent.py": source}, ("TFR304",)))


def test_a_loaded_model_is_judged_by_the_builder_of_the_attribute(tmp_path: Path) -> None:
    assert _check(tmp_path, AGENT.format(extra="")) == []


def test_a_builder_with_dropout_still_needs_training(tmp_path: Path) -> None:
    extra = "hidden = tf.keras.layers.Dropout(0.2)(hidden)"
    assert _check(tmp_path, AGENT.format(extra=extra)) == [("agent.py", 21)]


def test_a_model_only_ever_loaded_may_hold_anything(tmp_path: Path) -> None:
    assert _check(tmp_path, ONLY_LOADED, '"critic.keras"') == [("agent.py", 11)]
