"""Models and updates reached across the project: a model a project function
of another module builds and returns (`d = Discriminator()`, `from models
import Discriminator`) is a model, reported (TFR304) when called in a train
step's tape without `training=True` if its builder builds a layer that
depends on `training`, not when every layer it builds ignores it (an
`Embedding` and a `Bidirectional(LSTM(8))`); gradients handed with a
model's variables to an optimizer the project writes are applied."""

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


SAM_LOOP = """
import tensorflow as tf


def train(model, optimizer, batches):
    for images, labels in batches:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(images, training=True) - labels))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.first_step(grads, model.trainable_variables)
"""


def test_gradients_handed_to_an_optimizer_of_the_project_apply_them() -> None:
    """`optimizer.first_step(grads, model.trainable_variables)`: a sharpness-
    aware optimizer the project writes applies what the tape computed; the
    loop is a training loop (TFR303), as with `apply_gradients`."""
    from tfrewrite.api import check_source

    found = [(f.code, f.start.line) for f in check_source(textwrap.dedent(SAM_LOOP))]
    assert ("TFR303", 7) in found
    plain = SAM_LOOP.replace("optimizer.first_step(", "logger.record(")
    assert "TFR303" not in {f.code for f in check_source(textwrap.dedent(plain))}


HEAD_BUILDER = """
import tensorflow as tf


def make_head(width):
    return tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.ReLU()])


def make_tower(width):
    return tf.keras.Sequential([tf.keras.layers.Dense(width), tf.keras.layers.Dropout(0.2)])


head = make_head(4)
tower = make_tower(4)
optimizer = tf.keras.optimizers.Adam()


@tf.function
def step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(head(tower(x)) - y))
    variables = head.trainable_variables + tower.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss
"""


def test_a_builder_of_this_module_says_whether_its_model_reads_training(tmp_path: Path) -> None:
    (tmp_path / "step.py").write_text(textwrap.dedent(HEAD_BUILDER))
    options = RunOptions(rule_codes=("TFR304",), root=str(tmp_path))
    result = run([InputFile(str(tmp_path / "step.py"))], options, jobs=1)
    assert [f.message.split()[0] for f in result.findings] == ["`tower(...)`"]
