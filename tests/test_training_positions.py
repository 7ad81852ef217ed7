"""Where `training` stands in a call of a Keras class of another module:
the project facts read the class's `call` (`ModuleIndex.
class_training_positions`). `net(x, h, c, "train")` of a class whose
`call(self, x, h, c, mode)` binds no `training` by position runs its
dropout in inference mode in a tape (TFR304); `net(x, True)` of a class
whose `call(self, x, training)` binds it by position trains. A class is a
class whatever its name's case (`lstm_model`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

MODELS = """
import tensorflow as tf


class lstm_model(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.cell = tf.keras.layers.Dense(4)
        self.drop = tf.keras.layers.Dropout(0.2)

    def call(self, x, hidden, state, mode):
        if mode == "train":
            x = self.drop(x)
        return self.cell(x), hidden, state


class Flagged(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.drop = tf.keras.layers.Dropout(0.2)

    def call(self, x, training):
        return self.drop(x, training=training)
"""

TRAIN = """
import tensorflow as tf
from models import *

net = lstm_model()
flagged = Flagged()
opt = tf.keras.optimizers.Adam()


def train_step(x, h, c):
    with tf.GradientTape() as tape:
        out, h, c = net(x, h, c, "train")
        loss = tf.reduce_mean(out) + tf.reduce_mean(flagged(x, True))
    variables = net.trainable_variables + flagged.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss
"""


def test_training_is_placed_by_the_call_of_a_class_of_another_module(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    files = [InputFile(str(tmp_path / "models.py")), InputFile(str(tmp_path / "train.py"))]
    result = run(files, RunOptions(rule_codes=("TFR304",), root=str(tmp_path)), jobs=1)
    assert [(f.start.line, f.message.split("`")[1]) for f in result.findings] == [(12, "net(...)")]
