"""A Keras model's `test_step` runs traced where Keras runs the model
(`fit`, `evaluate`): a project that hands no model to Keras and calls the
method itself from its eager loop runs it as a plain method, so `.numpy()`
there is no TFR105. Saving a `tf.train.Checkpoint` hands Keras nothing."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

MODEL = """
import tensorflow as tf


class AutoEncoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.net = tf.keras.layers.Dense(4)

    def call(self, x):
        return self.net(x)

    def test_step(self, x):
        return {"x": x.numpy(), "y": self.call(x).numpy()}
"""

SCRIPT = """
import numpy as np
import tensorflow as tf

from model import AutoEncoder

if __name__ == "__main__":
    net = AutoEncoder()
    checkpoint = tf.train.Checkpoint(net=net)
    outputs = []
    for x in np.ones((3, 2, 4), np.float32):
        outputs.append(net.test_step(tf.constant(x)))
    checkpoint.save("ckpt")
"""


def test_a_step_hook_the_project_calls_itself_runs_eagerly(tmp_path: Path) -> None:
    assert check_project(tmp_path, {"model.py": MODEL, "main.py": SCRIPT}, ("TFR105",)) == []


def test_a_model_handed_to_fit_runs_its_hook_traced(tmp_path: Path) -> None:
    script = SCRIPT.replace(
        'checkpoint.save("ckpt")', "net.compile('sgd', 'mse')\n    net.fit(batches)"
    )
    found = check_project(tmp_path, {"model.py": MODEL, "main.py": script}, ("TFR105",))
    assert found_lines(found) == [("model.py", 13), ("model.py", 13)]


def test_a_symbolic_input_hands_no_step_hook_to_keras(tmp_path: Path) -> None:
    """A symbolic `Input` traces a model's `call` with shapes Keras
    chooses; it never runs a step hook: a `test_step` the project calls
    itself stays a plain method."""
    model = MODEL.replace(
        "self.net = tf.keras.layers.Dense(4)",
        "self.net = tf.keras.layers.Dense(4)\n        self.inputs = tf.keras.Input((4,))",
    )
    assert check_project(tmp_path, {"model.py": model, "main.py": SCRIPT}, ("TFR105",)) == []
