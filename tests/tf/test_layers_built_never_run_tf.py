"""Measured: the model of `tests/layers_built_never_run.py` computes the
same with `training=True` and without it (its batch normalization is
built, never run, so Keras never even builds its weights), so TFR304 leaving its
train step alone is right; once the block runs the normalization, the two
modes differ."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.layers_built_never_run import MODEL

from .equivalence import assert_same, load_module

pytestmark = pytest.mark.tensorflow


def _outputs(source: str):
    module = load_module(source)
    x = tf.constant(np.random.default_rng(0).normal(2.0, 1.0, size=(16, 3)).astype("float32"))
    module.net(x)
    return module, module.net(x, training=True), module.net(x)


def test_a_normalization_never_run_leaves_both_modes_equal() -> None:
    module, training, inference = _outputs(MODEL)
    assert_same(training, inference)
    assert not module.net.block.norm.built  # never run, so never even built


def test_a_normalization_run_makes_the_modes_differ() -> None:
    source = MODEL.replace("return self.dense(x)", "return self.norm(self.dense(x))")
    _, training, inference = _outputs(source)
    assert not np.allclose(training.numpy(), inference.numpy(), atol=1e-4)
