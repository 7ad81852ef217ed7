"""TFR301's fix on a decorated loss method of a module-level object
(`tests/test_loss_objects_of_modules.py`): the decorator removed, the
step run traced (without AutoGraph) trains as the original run eagerly,
loss by loss and weight by weight."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tests.test_loss_objects_of_modules import LOSSES, TRAIN

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

# The script without its training loop: the test drives the step.
SCRIPT = textwrap.dedent(LOSSES) + textwrap.dedent(
    TRAIN.replace("from losses import LossModule\n", "").split("\n\n    for _")[0]
)


def _train(source: str, eager: bool) -> tuple[list[float], list[np.ndarray]]:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(3)
    module = load_module(source)
    step = module.train_step
    if eager:
        run = step.python_function
    else:
        run = tf.function(step.python_function, autograph=False)
    lr = tf.constant(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(4, 2))
    hr = tf.constant(np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2))
    tf.config.run_functions_eagerly(eager)
    try:
        losses = [float(run(lr, hr)) for _ in range(4)]
    finally:
        tf.config.run_functions_eagerly(False)
    return losses, [v.numpy() for v in module.generator.trainable_variables]


def test_the_fixed_step_traced_trains_as_the_original_eagerly() -> None:
    fixed = fix_source(SCRIPT, select=["TFR301"])
    assert fixed.count("@tf.function") == SCRIPT.count("@tf.function") - 1
    assert "@tf.function\n    def content_loss" not in fixed
    eager_losses, eager_weights = _train(SCRIPT, eager=True)
    traced_losses, traced_weights = _train(fixed, eager=False)
    assert eager_losses[-1] < eager_losses[0]  # it trains
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    for eager, traced in zip(eager_weights, traced_weights, strict=True):
        np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-6)
