"""A step that reuses one name for its tapes (`with tf.GradientTape() as
tape:` for the critic, then again for the actor) differentiates in each
block what the `gradient` call after it names: the critic called in the
actor's tape is evaluated, not trained, and is no TFR304 finding."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

AGENT = """
import tensorflow as tf


class Actor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.norm = tf.keras.layers.BatchNormalization()
        self.out = tf.keras.layers.Dense(1)

    def call(self, x, training=False):
        return self.out(self.norm(x, training=training))


class Agent:
    def __init__(self):
        self.actor = Actor()
        self.critic = Actor()

    @tf.function
    def learn(self, states, targets):
        with tf.GradientTape() as tape:
            critic_loss = tf.reduce_mean(tf.square(self.critic(states) - targets))
        grads = tape.gradient(critic_loss, self.critic.trainable_variables)
        self.critic_optimizer.apply_gradients(zip(grads, self.critic.trainable_variables))
        with tf.GradientTape() as tape:
            actor_loss = -tf.reduce_mean(self.critic(self.actor(states)))
        grads = tape.gradient(actor_loss, self.actor.trainable_variables)
        self.actor_optimizer.apply_gradients(zip(grads, self.actor.trainable_variables))
"""


def test_each_block_trains_what_the_gradient_after_it_names(tmp_path: Path) -> None:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(AGENT))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(path))], options, jobs=1)
    called = [(f.start.line, f.start.column) for f in result.findings]
    # The critic in its own tape, the actor in the actor's: not the critic there.
    assert called == [(23, 52), (27, 54)]
