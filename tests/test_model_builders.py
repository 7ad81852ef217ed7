"""A function every `return` of which gives a Keras model it builds
(`keras.Model(inputs, outputs)`, `keras.Sequential([...])`) returns a
model: what a caller binds its result to is one (`self.online_encoder =
self.get_encoder()`), and calling it in a train step's tape without
`training=True` is TFR304 whatever its name."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

SOURCE = """
import tensorflow as tf


def make_head(width):
    head = tf.keras.Sequential([tf.keras.layers.Dropout(0.1), tf.keras.layers.Dense(width)])
    return head


class Learner(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.online_encoder = self.get_encoder()
        self.head = make_head(4)
        self.scale = self.get_scale()

    def get_encoder(self):
        inputs = tf.keras.layers.Input((8,))
        x = tf.keras.layers.Dense(4)(inputs)
        outputs = tf.keras.layers.BatchNormalization()(x)
        return tf.keras.Model(inputs, outputs)

    def get_scale(self):
        return tf.Variable(1.0)

    @tf.function
    def learn(self, batch):
        with tf.GradientTape() as tape:
            z = self.online_encoder(batch)
            y = self.head(z)
            loss = tf.reduce_mean(y) * self.scale
        params = self.online_encoder.trainable_variables + self.head.trainable_variables
        gradients = tape.gradient(loss, params)
        self.optimizer.apply_gradients(zip(gradients, params))
        return loss
"""


@pytest.mark.parametrize(
    ("function", "returns_model"),
    [("make_head", True), ("Learner.get_encoder", True), ("Learner.get_scale", False)],
)
def test_pass_one_reads_which_functions_build_a_model(function: str, returns_model: bool) -> None:
    index = build_index(textwrap.dedent(SOURCE), "learner.py", "learner")
    assert index.functions[function].returns_model is returns_model


def test_a_model_a_method_builds_is_called_without_training(tmp_path: Path) -> None:
    path = tmp_path / "learner.py"
    path.write_text(textwrap.dedent(SOURCE))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(path))], options, jobs=1)
    assert [(f.start.line, f.start.column) for f in result.findings] == [(29, 17), (30, 17)]


PAIR = """
import tensorflow as tf


def build_pair(width):
    inputs = tf.keras.layers.Input((width,))
    actor = tf.keras.Model(inputs, tf.keras.layers.BatchNormalization()(inputs))
    critic = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    return actor, critic


def build_with_optimizer(width):
    return tf.keras.Sequential([tf.keras.layers.Dense(width)]), tf.keras.optimizers.Adam()


class Agent:
    def __init__(self):
        self.actor, self.critic = build_pair(4)

    @tf.function
    def learn(self, states):
        with tf.GradientTape() as tape:
            loss = -tf.reduce_mean(self.actor(states))
        grads = tape.gradient(loss, self.actor.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.actor.trainable_variables))
"""


def test_each_model_a_builder_returns_in_a_tuple_is_a_model(tmp_path: Path) -> None:
    index = build_index(textwrap.dedent(PAIR), "agent.py", "agent")
    assert index.functions["build_pair"].returns_model
    assert not index.functions["build_with_optimizer"].returns_model
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(PAIR))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(path))], options, jobs=1)
    assert [f.start.line for f in result.findings] == [23]
