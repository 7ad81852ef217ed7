"""TFR306 on a loop over a parameter fed short batches, under TensorFlow:
the original's mean of per-batch accuracies differs from the accuracy over
the examples when the last batch is short; the unsafe fix (weights by
batch size) gives the accuracy over the examples."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.short_batch_parameters import SOURCE

from tfrewrite.api import fix_source

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_the_fix_averages_over_examples() -> None:
    rng = np.random.default_rng(0)
    features = rng.normal(size=(10, 3)).astype("float32")
    labels = np.eye(2, dtype="float32")[rng.integers(0, 2, size=10)]
    tf.keras.utils.set_random_seed(2)
    model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(2)])
    exact = np.mean(np.argmax(model(features), axis=1) == np.argmax(labels, axis=1))
    original = load_module(SOURCE).main(model, features, labels)
    fixed = load_module(fix_source(SOURCE, select=["TFR306"], unsafe_fixes=True))
    assert not np.isclose(original, exact)  # batches of 4, 4 and 2 weigh alike
    np.testing.assert_allclose(fixed.main(model, features, labels), exact, rtol=1e-6)
