"""Measured: a step decorated as TFR302 would, called with a Python counter
that changes every iteration, traces a new graph on every call (why TFR302
withholds its decorator); called with `tf.constant(counter)` it traces
once, and its losses equal the eager step's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.test_changing_step_arguments import STEP

from tfrewrite.api import fix_source

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


def _batches() -> list[tuple[tf.Tensor, tf.Tensor]]:
    rng = np.random.default_rng(0)
    return [
        (
            tf.constant(rng.normal(size=(8, 3)), tf.float32),
            tf.constant(rng.normal(size=(8, 1)), tf.float32),
        )
        for _ in range(4)
    ]


def _run(module, counter) -> tuple[list[float], list[int]]:
    """The losses of four steps, and the step's trace count after each
    (`counter` makes what the loop passes from its Python counter)."""
    tf.keras.utils.set_random_seed(3)
    module.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    module.opt = tf.keras.optimizers.SGD(0.1)
    step = module.train_step
    losses, traces = [], []
    iteration = 0
    for x, y in _batches():
        losses.append(float(step(x, y, counter(iteration))))
        if hasattr(step, "experimental_get_tracing_count"):
            traces.append(step.experimental_get_tracing_count())
        iteration += 1
    return losses, traces


def test_a_changing_counter_retraces_and_a_tensor_does_not(tmp_path: Path) -> None:
    source = STEP.replace("{argument}", "tf.constant(iteration)")
    fixed = fix_source(source, select=["TFR302"])
    assert "@tf.function\ndef train_step" in fixed
    eager_losses, _ = _run(load_file_module(source, tmp_path), tf.constant)
    traced_losses, traces = _run(load_file_module(fixed, tmp_path), tf.constant)
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    assert traces[-1] == traces[1]  # no trace after the optimizer's first
    # The same step handed the Python counter itself: a trace per value.
    python_losses, traces = _run(load_file_module(fixed, tmp_path), int)
    np.testing.assert_allclose(python_losses, eager_losses, rtol=1e-5)
    assert traces[-1] == traces[1] + 2
