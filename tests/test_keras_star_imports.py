"""`from tensorflow.keras.layers import *` binds Keras' public names
(`facts/keras_public_names.py`, read from Keras itself): `Dense` and
`LSTMCell` in such a file are Keras layers, as an explicit import makes
them, unless the file binds the name itself."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index

DECODER = """
import tensorflow as tf
from tensorflow.keras.layers import *


class Decoder(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.cell = LSTMCell(4)
        self.out = Dense(2)

    @tf.function
    def call(self, x, states):
        h, states = self.cell(x, states)
        return self.out(h)
"""


def test_star_imported_keras_names_resolve() -> None:
    index = build_index(textwrap.dedent(DECODER), "decoder.py", "decoder")
    assert index.imports["Dense"] == "tensorflow.keras.layers.Dense"
    assert index.imports["LSTMCell"] == "tensorflow.keras.layers.LSTMCell"
    assert "Decoder" not in index.imports


def test_a_layer_built_from_star_imported_sublayers_is_reported() -> None:
    findings = check_source(textwrap.dedent(DECODER))
    assert [f.code for f in findings] == ["TFR308"]


def test_a_name_the_file_binds_itself_is_its_own() -> None:
    source = textwrap.dedent(DECODER) + "\n\ndef Dense(units):\n    return units\n"
    index = build_index(source, "decoder.py", "decoder")
    assert "Dense" not in index.imports
