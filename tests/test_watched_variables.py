"""A tape that watches a model's variables and differentiates with respect
to them trains that model (a REINFORCE update spelled with
`tape.watch(model_params)`): it is no frozen model's input gradient, so a
dropout layer called there without `training=True` is reported (TFR304)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self):
        self.model = tf.keras.Sequential(
            [tf.keras.layers.Dense(8), tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(2)]
        )
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    def update(self, states, actions):
        params = WATCHED
        with tf.GradientTape() as tape:
            tape.watch(params)
            policies = self.model(states)
            loss = -tf.reduce_sum(actions * tf.math.log(policies + 1e-5))
        grads = tape.gradient(loss, params)
        self.optimizer.apply_gradients(zip(grads, params))
        return loss


agent = Agent()
for episode in range(10):
    agent.update(tf.ones((4, 3)), tf.ones((4, 2)))
"""


def _codes(watched: str) -> list[tuple[str, int]]:
    source = textwrap.dedent(AGENT).replace("WATCHED", watched)
    return [(f.code, f.start.line) for f in check_source(source, select=["TFR304"])]


def test_watched_model_variables_are_trained() -> None:
    assert _codes("self.model.trainable_variables") == [("TFR304", 16)]


def test_a_watched_input_leaves_the_model_frozen() -> None:
    # Gradient with respect to the watched batch: an adversarial input.
    source = textwrap.dedent(AGENT).replace("WATCHED", "states")
    assert not check_source(source, select=["TFR304"])
