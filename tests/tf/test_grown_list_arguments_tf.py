"""Measured: the step of `tests/grown_list_arguments.py` under
`tf.function`, called once per episode with the episode's growing lists,
traces once per episode (every new length is a new signature): why TFR302
leaves it eager."""

from __future__ import annotations

import sys

import pytest
import tensorflow as tf
from tests.grown_list_arguments import SCRIPT, STEPS

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_every_episode_traces_the_step_again() -> None:
    steps = load_module(STEPS, "steps")
    steps.train_step = tf.function(steps.train_step)
    sys.modules["steps"] = steps
    try:
        script = load_module(SCRIPT)
    finally:
        sys.modules.pop("steps", None)
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    script.main(4, model, tf.keras.optimizers.SGD(0.01))
    assert steps.TRACES == [3, 4, 5, 6]
