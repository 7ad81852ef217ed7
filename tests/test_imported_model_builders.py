"""A model a project function of another module builds and returns (`d =
Discriminator()`, `from models import Discriminator`) is a model: called in
a train step's tape without `training=True`, it is reported (TFR304) when
its builder builds a layer that depends on `training`, and not when every
layer it builds ignores it (an `Embedding` and a `Bidirectional(LSTM(8))`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.pipeline.engine import InputFile, RunOptions, run

MODELS = """
import tensorflow as tf


def Encoder(vocabulary):
    tokens = tf.keras.Input((None,))
    embedded = tf.keras.layers.Embedding(vocabulary, 8)(tokens)
    code = tf.keras.layers.Bidirectional(tf.keras.layers.LSTM(4))(embedded)
    return tf.keras.Model(inputs=tokens, outputs=code)


def Discriminator():
    code = tf.keras.Input((8,))
    hidden = tf.keras.layers.Dense(16)(code)
    hidden = tf.keras.layers.BatchNormalization()(hidden)
    return tf.keras.Model(inputs=code, outputs=tf.keras.layers.Dense(1)(hidden))
"""

TRAIN = """
import tensorflow as tf
from models import Discriminator, Encoder


def main(batches):
    e = Encoder(100)
    d = Discriminator()
    optimizer = tf.keras.optimizers.Adam()
    for tokens, labels in batches:
        with tf.GradientTape() as tape:
            score = d(e(tokens))
            loss = tf.reduce_mean(tf.square(score - labels))
        variables = e.trainable_variables + d.trainable_variables
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
"""


def test_a_model_an_imported_builder_returns_is_a_model(tmp_path: Path) -> None:
    (tmp_path / "models.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    files = [InputFile(str(tmp_path / "models.py")), InputFile(str(tmp_path / "train.py"))]
    result = run(files, RunOptions(rule_codes=("TFR304",), root=str(tmp_path)), jobs=1)
    found = sorted((Path(f.path).name, f.start.line, f.message[:6]) for f in result.findings)
    assert found == [("train.py", 12, "`d(...")]
