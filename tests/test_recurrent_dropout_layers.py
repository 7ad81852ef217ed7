"""A recurrent layer reads `training` only when built with `dropout=` or
`recurrent_dropout=`: TFR304 judges a project class holding an `LSTM` by
how its methods build it (keyword arguments it cannot see, `**kwargs`,
count as dropout)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from tests.projects import check_project, found_lines

DECODER = """
    import tensorflow as tf


    class Decoder(tf.keras.Model):
        def __init__(self, units, **kwargs):
            super().__init__()
            self.embed = tf.keras.layers.Embedding(100, 8)
            self.lstm = tf.keras.layers.LSTM(units{keywords})
            self.out = tf.keras.layers.Dense(100)

        def call(self, tokens, state):
            return self.out(self.lstm(self.embed(tokens), initial_state=state))
"""

STEP = """
    import tensorflow as tf
    from nets.decoder import Decoder

    decoder = Decoder(16)
    optimizer = tf.keras.optimizers.Adam()


    @tf.function
    def train_step(tokens, state, targets):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(decoder(tokens, state) - targets))
        grads = tape.gradient(loss, decoder.trainable_variables)
        optimizer.apply_gradients(zip(grads, decoder.trainable_variables))
        return loss
"""


def _found(tmp_path: Path, keywords: str) -> list[tuple[str, int]]:
    files = {
        "nets/__init__.py": "",
        "nets/decoder.py": DECODER.replace("{keywords}", keywords),
        "train.py": STEP,
    }
    return found_lines(check_project(tmp_path, files, ("TFR304",)))


def test_an_lstm_without_dropout_ignores_training(tmp_path: Path) -> None:
    assert _found(tmp_path, ", return_sequences=True") == []


@pytest.mark.parametrize("keywords", [", dropout=0.2", ", recurrent_dropout=0.1", ", **kwargs"])
def test_an_lstm_with_dropout_reads_it(tmp_path: Path, keywords: str) -> None:
    assert _found(tmp_path, keywords) == [("train.py", 11)]


def test_a_wrapper_reads_training_as_the_layer_it_wraps() -> None:
    """`Bidirectional(GRU(8))` in a `Sequential` computes the same with
    `training=True`; wrapping a `GRU` built with `dropout=` it does not."""
    from tfrewrite.api import check_source

    source = textwrap.dedent(
        """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Bidirectional(tf.keras.layers.GRU(8{drop}))])
        optimizer = tf.keras.optimizers.Adam()


        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss
        """
    )
    assert check_source(source.replace("{drop}", ""), select=["TFR304"]) == []
    found = check_source(source.replace("{drop}", ", dropout=0.2"), select=["TFR304"])
    assert [f.start.line for f in found] == [11]
