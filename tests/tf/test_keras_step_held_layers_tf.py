"""TFR304's fix on a layer a Keras model's own `train_step` calls
(`tests/test_keras_step_held_layers.py`): as written, `fit` runs the
encoder's batch normalization in inference mode (its moving mean never
moves: the statistics of the batch are not used); with the fix's
`training=True`, `fit` trains it as an eager step with `training=True`
does, loss by loss."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from tests.test_keras_step_held_layers import NORMED

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def _fit(source: str, run_eagerly: bool) -> tuple[list[float], np.ndarray]:
    import tensorflow as tf

    tf.keras.utils.set_random_seed(2)
    model = load_module(source).AutoEncoder()
    x = np.linspace(-2.0, 3.0, 48, dtype=np.float32).reshape(16, 3)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), run_eagerly=run_eagerly)
    history = model.fit(x, epochs=3, batch_size=8, shuffle=False, verbose=0)
    return history.history["loss"], model.encoder.norm.moving_mean.numpy()


def test_the_original_never_normalizes_with_batch_statistics() -> None:
    _, moving_mean = _fit(textwrap.dedent(NORMED), run_eagerly=False)
    np.testing.assert_allclose(moving_mean, 0.0)


def test_the_fixed_step_fits_as_its_eager_run_does() -> None:
    fixed = fix_source(textwrap.dedent(NORMED), select=["TFR304"], unsafe_fixes=True)
    traced_losses, traced_mean = _fit(fixed, run_eagerly=False)
    eager_losses, eager_mean = _fit(fixed, run_eagerly=True)
    np.testing.assert_allclose(traced_losses, eager_losses, rtol=1e-5)
    np.testing.assert_allclose(traced_mean, eager_mean, rtol=1e-5, atol=1e-7)
    assert np.abs(traced_mean).max() > 0.0
