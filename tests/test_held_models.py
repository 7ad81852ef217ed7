"""Models kept in an object: `parts = Parts()`, then `enc = parts.encoder`
in a training loop, where `Parts` (in another module) keeps a Keras model in
`self.encoder`, built by a method that returns one, by Keras itself, or of
a Keras model class of the project. `enc(x)` in the tape is then a model
call (TFR304); an attribute holding a plain object is not."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tfrewrite.facts.index import build_index
from tfrewrite.pipeline.engine import InputFile, RunOptions, run

PARTS = """
import tensorflow as tf
from tensorflow.keras import Sequential
from tensorflow.keras.layers import BatchNormalization, Dense, Dropout


class Critic(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = Dense(4)
        self.drop = Dropout(0.3)

    def call(self, x, training=None):
        return self.drop(self.hidden(x), training=training)


class Buffer:
    def __call__(self, x):
        return x


class Parts(object):
    def __init__(self):
        self.encoder = self.make_encoder()
        self.decoder = Sequential([Dense(4), BatchNormalization(), Dense(3)])
        self.critic = Critic()
        self.buffer = Buffer()

    def make_encoder(self):
        model = Sequential([Dense(4), BatchNormalization(), Dense(2)])
        return model
"""

TRAIN = """
import tensorflow as tf
from parts import Parts


def train(batches, steps):
    parts = Parts()
    enc = parts.encoder
    dec = parts.decoder
    critic = parts.critic
    buffer = parts.buffer
    opt = tf.keras.optimizers.Adam()
    for _ in range(steps):
        x = next(batches)
        with tf.GradientTape() as tape:
            y = dec(enc(buffer(x)))
            loss = tf.reduce_mean(tf.square(y - x)) + tf.reduce_mean(critic(y))
            variables = (
                enc.trainable_variables + dec.trainable_variables + critic.trainable_variables
            )
        grads = tape.gradient(loss, variables)
        opt.apply_gradients(zip(grads, variables))
"""


def test_pass_one_records_what_a_local_name_takes_from_a_built_object() -> None:
    index = build_index(textwrap.dedent(TRAIN), "train.py", "train")
    assert index.functions["train"].attribute_aliases == {
        "enc": "parts.Parts.encoder",
        "dec": "parts.Parts.decoder",
        "critic": "parts.Parts.critic",
        "buffer": "parts.Parts.buffer",
    }


def test_models_kept_in_an_object_are_called_without_training(tmp_path: Path) -> None:
    (tmp_path / "parts.py").write_text(textwrap.dedent(PARTS))
    (tmp_path / "train.py").write_text(textwrap.dedent(TRAIN))
    files = [InputFile(str(tmp_path / "parts.py")), InputFile(str(tmp_path / "train.py"))]
    result = run(files, RunOptions(rule_codes=("TFR304",), root=str(tmp_path)), jobs=1)
    called = sorted(f.message.split("`")[1] for f in result.findings)
    assert called == ["critic(...)", "dec(...)", "enc(...)"]  # not the plain `buffer`
