"""A Keras model every `compile` of the project runs eagerly
(`run_eagerly=True`): its `train_step` is not traced code, so a NumPy draw
in it is fresh on every batch and nothing is reported. Compiled without the
flag anywhere, it is traced again."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

MODEL = """
import numpy as np
import tensorflow as tf
from tensorflow import keras


class Jittered(keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = keras.layers.Dense(1)

    def train_step(self, data):
        x, y = data
        noise = np.random.uniform()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.dense(x, training=True) - y)) * noise
        grads = tape.gradient(loss, self.dense.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.dense.trainable_variables))
        return {{"loss": loss}}


{use}
"""

LOCAL = """
def train(x, y):
    model = Jittered()
    model.compile(optimizer="sgd"{flag})
    model.fit(x, y)
"""

MODULE_LEVEL = """
model = Jittered()
model.compile(optimizer="sgd"{flag})
"""


def _codes(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, str]]:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    options = RunOptions(rule_codes=("TFR102",), root=str(tmp_path))
    result = run([InputFile(str(tmp_path / name)) for name in files], options, jobs=1)
    return sorted((Path(f.path).name, f.code) for f in result.findings)


def test_a_model_compiled_to_run_eagerly_is_not_traced(tmp_path: Path) -> None:
    source = MODEL.format(use=LOCAL.format(flag=", run_eagerly=True"))
    assert _codes(tmp_path, {"model.py": source}) == []


def test_a_module_level_model_compiled_to_run_eagerly(tmp_path: Path) -> None:
    source = MODEL.format(use=MODULE_LEVEL.format(flag=", run_eagerly=True"))
    assert _codes(tmp_path, {"model.py": source}) == []


def test_a_model_compiled_as_usual_is_traced(tmp_path: Path) -> None:
    source = MODEL.format(use=LOCAL.format(flag=""))
    assert _codes(tmp_path, {"model.py": source}) == [("model.py", "TFR102")]


def test_run_eagerly_false_is_traced(tmp_path: Path) -> None:
    source = MODEL.format(use=LOCAL.format(flag=", run_eagerly=False"))
    assert _codes(tmp_path, {"model.py": source}) == [("model.py", "TFR102")]


def test_compiled_eagerly_in_one_module_and_as_usual_in_another(tmp_path: Path) -> None:
    """Another module compiles the class without the flag: traced there."""
    model = MODEL.format(use=LOCAL.format(flag=", run_eagerly=True"))
    other = """
    from model import Jittered

    serving = Jittered()
    serving.compile(optimizer="adam")
    """
    assert _codes(tmp_path, {"model.py": model, "serve.py": other}) == [("model.py", "TFR102")]


def test_self_compile_in_the_models_own_method(tmp_path: Path) -> None:
    """The model compiles itself, eagerly, when it is built."""
    built = "        self.dense = keras.layers.Dense(1)\n"
    compiles = '        self.compile(optimizer="sgd", run_eagerly=True)\n'
    source = MODEL.format(use="").replace(built, built + compiles)
    assert _codes(tmp_path, {"model.py": source}) == []
