"""Measured for TFR201 (`tests/test_frozen_resamples.py`): the points a
trainer draws again before every epoch reach the step eagerly; traced once
without arguments, the step keeps training the first draw."""

from __future__ import annotations

import pytest
from tests.frozen_resamples import source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _sums(eager: bool) -> list[float]:
    import tensorflow as tf

    module = load_module(source())
    network = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    trainer = module.Trainer(network, module.Sampler(0))
    tf.config.run_functions_eagerly(eager)
    try:
        return trainer.train(3)
    finally:
        tf.config.run_functions_eagerly(False)


def test_the_trace_keeps_the_first_draw() -> None:
    eager, traced = _sums(eager=True), _sums(eager=False)
    assert len(set(eager)) == 3  # a new draw every epoch
    assert len(set(traced)) == 1  # the first draw, frozen
    assert traced[0] == pytest.approx(eager[0], rel=1e-5)
