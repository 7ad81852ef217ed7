"""A Keras callback setting an attribute of the model it is given
(`self.model.weighting = ...` in `on_epoch_begin`), in any module: the
model's traced `train_step` reads the value of its first trace for the
whole of `fit` (TFR201). The callback's own attributes, and a model that
reads nothing it sets, are not reported."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

CALLBACKS = """
import tensorflow as tf


class Curriculum(tf.keras.callbacks.Callback):
    def __init__(self, schedule):
        super().__init__()
        self.schedule = schedule

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = epoch
        self.model.weighting = self.schedule(epoch)
"""

MODEL = """
import tensorflow as tf


class Weighted(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.weighting = 1.0
        self.schedule = 2.0

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            err = tf.square(self.dense(x, training=True) - y)
            loss = tf.reduce_mean(err * self.weighting * self.schedule)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}
"""


def test_an_attribute_a_callback_sets_on_the_model_is_frozen(tmp_path: Path) -> None:
    (tmp_path / "callbacks.py").write_text(textwrap.dedent(CALLBACKS))
    (tmp_path / "model.py").write_text(textwrap.dedent(MODEL))
    files = [InputFile(str(tmp_path / "callbacks.py")), InputFile(str(tmp_path / "model.py"))]
    result = run(files, RunOptions(rule_codes=("TFR201",), root=str(tmp_path)), jobs=1)
    [finding] = result.findings
    assert finding.path.endswith("model.py") and finding.start.line == 16
    assert "`self.weighting`" in finding.message
    assert "set by the callback method `Curriculum.on_epoch_begin`" in finding.message


SWAPPING = """
import tensorflow as tf


class NextTeacher(tf.keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.model.teacher = tf.keras.models.load_model(f"teacher_{epoch}.keras")


class Distiller(tf.keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.student = student
        self.teacher = teacher

    def train_step(self, data):
        x, y = data
        soft = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.student(x, training=True) - soft))
        grads = tape.gradient(loss, self.student.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.student.trainable_variables))
        return {"loss": loss}
"""


def test_a_model_a_callback_replaces_is_frozen_where_it_is_called(tmp_path: Path) -> None:
    """The traced step calls the teacher of its first trace: the call is the
    read, and the message says the object, not a value, is kept."""
    (tmp_path / "distill.py").write_text(textwrap.dedent(SWAPPING))
    files = [InputFile(str(tmp_path / "distill.py"))]
    result = run(files, RunOptions(rule_codes=("TFR201",), root=str(tmp_path)), jobs=1)
    [finding] = result.findings
    assert finding.start.line == 18 and "`self.teacher`" in finding.message
    assert "the graph keeps calling the object it held at the first trace" in finding.message
    assert "`self.student`" not in finding.message  # set up once, in `__init__`
