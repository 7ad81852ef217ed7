"""TFR304 on a model whose sublayers come from a class its constructor is
handed (`Head(3, Plain)`, then `self.backbone = backbone(...)`) and from
layers a loop builds into a local name before appending it (`conv =
Conv2D(...)`, `self.outs.append(conv)`): the head is judged by what those
build, in any module. Convolutions only: `training=True` changes nothing,
no finding. A backbone class with dropout, or an appended `Dropout`: the
finding stays."""

from __future__ import annotations

from pathlib import Path

from tests.passed_layer_classes import project
from tests.projects import check_project, found_lines


def _found(tmp_path: Path, **kwargs: str) -> list[tuple[str, int]]:
    return found_lines(check_project(tmp_path, project(**kwargs), ("TFR304",)))


def test_a_head_of_convolutions_ignores_training(tmp_path: Path) -> None:
    assert _found(tmp_path) == []


def test_a_backbone_class_with_dropout_needs_training(tmp_path: Path) -> None:
    assert _found(tmp_path, backbone="Noisy") == [("trainer.py", 15)]


def test_an_appended_dropout_needs_training(tmp_path: Path) -> None:
    assert _found(tmp_path, out="Dropout(0.5)") == [("trainer.py", 15)]


# An agent handed its models by a script that builds them as `Sequential`
# stacks (`actor = tf.keras.Sequential([...])`, then `Agent(actor)`), its
# constructor's parameter annotated as any Keras model.
AGENT = """
import tensorflow as tf


class Agent:
    def __init__(self, actor: tf.keras.Model, optimizer: tf.keras.optimizers.Optimizer):
        self.actor = actor
        self.optimizer = optimizer

    @tf.function
    def train(self, states, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.actor(states) - targets))
        grads = tape.gradient(loss, self.actor.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.actor.trainable_weights))
        return loss


def main():
    actor = tf.keras.Sequential([
        tf.keras.layers.Dense(64, activation="relu"),
        LAYER,
        tf.keras.layers.Dense(1),
    ])
    agent = Agent(actor, tf.keras.optimizers.Adam(1e-3))
    for _ in range(3):
        agent.train(tf.ones((4, 2)), tf.zeros((4, 1)))
"""


def test_a_sequential_of_dense_layers_handed_to_an_agent_ignores_training(tmp_path: Path) -> None:
    agent = AGENT.replace("LAYER", 'tf.keras.layers.Dense(64, activation="relu")')
    assert found_lines(check_project(tmp_path, {"agent.py": agent}, ("TFR304",))) == []


def test_a_sequential_with_dropout_handed_to_an_agent_needs_training(tmp_path: Path) -> None:
    agent = AGENT.replace("LAYER", "tf.keras.layers.Dropout(0.2)")
    found = check_project(tmp_path, {"agent.py": agent}, ("TFR304",))
    assert found_lines(found) == [("agent.py", 12)]


# A model whose `call` takes `training` and never reads it, of Dense layers:
# a class nested in the trainer whose step calls it (`self.Encoder()`).
UNREAD_FLAG = """
import tensorflow as tf


class Trainer:
    class Encoder(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.hidden = tf.keras.layers.Dense(8, activation="relu")
            self.out = tf.keras.layers.Dense(2)

        def call(self, x, training=None, mask=None):
            return self.out(self.hidden(x))

    def __init__(self):
        self.encoder = self.Encoder()
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step(self, x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(self.encoder(x))
        grads = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.encoder.trainable_variables))
"""


def test_a_training_flag_the_call_never_reads_changes_nothing(tmp_path: Path) -> None:
    assert found_lines(check_project(tmp_path, {"model.py": UNREAD_FLAG}, ("TFR304",))) == []


def test_a_training_flag_the_call_reads_may_change_the_result(tmp_path: Path) -> None:
    model = UNREAD_FLAG.replace(
        "return self.out(self.hidden(x))",
        "h = self.hidden(x)\n"
        "            if training:\n"
        "                h = h * 0.5\n"
        "            return self.out(h)",
    )
    found = check_project(tmp_path, {"model.py": model}, ("TFR304",))
    assert found_lines(found) == [("model.py", 24)]
