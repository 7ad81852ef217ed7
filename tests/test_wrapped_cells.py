"""TFR204 on Keras wrappers built in traced code (`RNN(cell)`): their
variables are their cell's. A cell of the file that holds no variable (a
CRF decoding cell computing from the transition matrix it is given) makes
none; a Keras cell or a cell with weights does."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


class DecodeCell(tf.keras.layers.Layer):
    def __init__(self, transitions, **kwargs):
        super().__init__(**kwargs)
        self._transitions = tf.expand_dims(transitions, 0)
        self.state_size = transitions.shape[-1]

    def call(self, inputs, states):
        scores = tf.expand_dims(states[0], 2) + self._transitions
        new_state = inputs + tf.reduce_max(scores, [1])
        return new_state, [new_state]


class GatedCell(tf.keras.layers.Layer):
    state_size = 3

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], 3))

    def call(self, inputs, states):
        new_state = tf.matmul(inputs, self.kernel) + states[0]
        return new_state, [new_state]


@tf.function
def decode(inputs, transitions, state):
    layer = tf.keras.layers.RNN({cell}, return_sequences=True)
    return layer(inputs, initial_state=state)
"""


def test_a_wrapper_of_a_weightless_cell_of_the_file_is_not_reported() -> None:
    source = SOURCE.replace("{cell}", "DecodeCell(transitions)")
    assert check_source(textwrap.dedent(source), select=["TFR204"]) == []


def test_a_wrapper_of_a_cell_with_weights_is_reported() -> None:
    for cell in ("GatedCell()", "tf.keras.layers.GRUCell(4)"):
        source = SOURCE.replace("{cell}", cell)
        findings = check_source(textwrap.dedent(source), select=["TFR204"])
        assert any("a Keras `RNN` layer is built on every call" in f.message for f in findings)


def test_a_cell_deriving_from_a_weighted_keras_cell_is_reported() -> None:
    source = SOURCE.replace("{cell}", "PlainGRU(3)") + textwrap.dedent(
        """

        class PlainGRU(tf.keras.layers.GRUCell):
            def call(self, inputs, states):
                return super().call(inputs, states)
        """
    )
    findings = check_source(textwrap.dedent(source), select=["TFR204"])
    assert any("a Keras `RNN` layer is built on every call" in f.message for f in findings)
