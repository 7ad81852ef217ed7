"""The fact TFR304 leaves alone a model whose `call` defaults `training` to
True (`tests/test_tape_model_evidence.py`): called without the flag inside
a traced train step's tape, such a model runs its `Dropout` in training
mode; with the default None it runs in inference mode, which is the hazard
TFR304 reports."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import tensorflow as tf
from test_tape_model_evidence import DEFAULT_TRAINING

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _dropped_fraction(default: str) -> float:
    """Run the step's forward pass (the model called without `training`, in
    a tape, traced) on ones and count the units `Dropout` zeroed."""
    module = load_module(textwrap.dedent(DEFAULT_TRAINING).replace("{default}", default))
    tf.random.set_seed(0)

    @tf.function
    def forward(x):
        with tf.GradientTape():
            return module.model(x)

    x = tf.ones([64, 3])
    module.model(x)  # build outside the trace
    module.model.dense.kernel.assign(tf.ones([3, 4]))
    module.model.dense.bias.assign(tf.ones([4]))
    out = forward(x).numpy()
    return float(np.mean(out == 0.0))


def test_a_call_defaulting_training_to_true_drops_units_without_the_flag() -> None:
    assert _dropped_fraction("True") > 0.3


def test_a_call_defaulting_training_to_none_drops_nothing_without_the_flag() -> None:
    assert _dropped_fraction("None") == 0.0
