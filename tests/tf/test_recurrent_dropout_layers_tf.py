"""Measured: a decoder holding an `LSTM` built without dropout computes the
same with `training=True` as without (what TFR304 reads: no finding); one
built with `dropout=` does not."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from tests.test_recurrent_dropout_layers import DECODER

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


@pytest.mark.parametrize("keywords", ["", ", dropout=0.5"])
def test_training_changes_only_the_lstm_with_dropout(keywords: str) -> None:
    module = load_module(textwrap.dedent(DECODER.replace("{keywords}", keywords)))
    tf.keras.utils.set_random_seed(1)
    decoder = module.Decoder(16)
    tokens = tf.constant(np.arange(12).reshape(3, 4) % 100)
    state = [tf.ones((3, 16)), tf.zeros((3, 16))]
    inference = decoder(tokens, state).numpy()
    training = decoder(tokens, state, training=True).numpy()
    assert np.allclose(inference, training) is (keywords == "")
