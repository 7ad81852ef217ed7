"""Measured: a loop averaging one per-batch list twice (a figure logged and
the one returned), over 70 examples in batches of 32, 32 and 6. Both
averages over-weight the short batch as written; after `fix
--unsafe-fixes` (TFR306: the first fix records the batch sizes, the next
round weights the second average with them) both are the mean over
examples."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from tests.tf.equivalence import load_file_module

from tfrewrite.api import fix_source

pytestmark = pytest.mark.tensorflow

SOURCE = """
import numpy as np
import tensorflow as tf


def evaluate(dataset):
    losses = []
    for x, y in dataset.batch(32):
        losses.append(float(tf.reduce_mean(x - y)))
    logged = np.mean(losses)
    return logged, np.mean(losses)
"""


def test_both_averages_become_the_mean_over_examples(tmp_path: Path) -> None:
    fixed = fix_source(SOURCE, select=["TFR306"], unsafe_fixes=True)
    assert fixed.count("weights=batch_sizes") == 2
    values = np.arange(70, dtype="float32") ** 2
    dataset = tf.data.Dataset.from_tensor_slices((values, np.zeros_like(values)))
    original = load_file_module(SOURCE, tmp_path, prefix="original").evaluate(dataset)
    rewritten = load_file_module(fixed, tmp_path, prefix="fixed").evaluate(dataset)
    exact = float(values.mean())
    assert all(abs(v - exact) > 1.0 for v in original)
    assert rewritten == pytest.approx((exact, exact), rel=1e-6)
