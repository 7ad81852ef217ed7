"""What TFR304 leaves alone, measured: a model whose `call` defaults
`training` to True, called without the flag in a traced train step, runs
its batch normalization in training mode (batch statistics, moving
averages updated); one defaulting to None runs it in inference mode."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.trains_by_default import MODELS, STEP

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_the_default_decides_the_mode_under_tracing() -> None:
    models = load_module(MODELS, "models")
    import sys

    sys.modules["models"] = models
    try:
        step = load_module(STEP)
    finally:
        sys.modules.pop("models", None)
    x = np.random.default_rng(0).normal(3.0, 1.0, size=(8, 3)).astype("float32")
    step.train_step(tf.constant(x))
    moved = np.abs(step.generator.norm.moving_mean.numpy()).max()
    still = np.abs(step.critic.norm.moving_mean.numpy()).max()
    assert moved > 0.0  # training mode: the moving mean was updated
    assert still == 0.0  # inference mode: the moving mean never moved
