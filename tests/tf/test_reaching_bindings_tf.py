"""The reads `tests/test_reaching_bindings.py` finds are reads of tensors:
with `autograph=False` they raise, eagerly they run, and AutoGraph alone
makes the traced function agree (the findings have no fix)."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf
from tests.test_reaching_bindings import CROP, SETTLE

from .equivalence import load_file_module, python_function

pytestmark = pytest.mark.tensorflow


def test_a_flag_bound_to_a_tensor_in_a_branch_needs_autograph(tmp_path) -> None:
    settle = python_function(load_file_module(SETTLE, tmp_path, "settle").settle)
    cases = [(0.2, 0.0), (2.0, 0.0), (0.0, 0.3)]  # close (doubled), far, close from below
    for t, t0 in cases:
        eager = settle(tf.constant(t), tf.constant(t0))
        traced = tf.function(settle)(tf.constant(t), tf.constant(t0))
        np.testing.assert_allclose(traced, eager)
    assert float(settle(tf.constant(0.2), tf.constant(0.0))) == pytest.approx(0.4)
    with pytest.raises(TypeError, match="as a Python `bool` is not allowed"):
        tf.function(settle, autograph=False)(tf.constant(0.2), tf.constant(0.0))


def test_a_conversion_in_the_other_branch_reads_the_tensor(tmp_path) -> None:
    crop = python_function(load_file_module(CROP, tmp_path, "crop").crop_height)
    x = tf.reshape(tf.range(2 * 6 * 6, dtype=tf.float32), (2, 6, 6))
    for channels_first in (False, True):
        eager = crop(x, channels_first)
        traced = tf.function(crop)(x, channels_first)
        np.testing.assert_allclose(traced, eager)
        with pytest.raises(TypeError):
            tf.function(crop, autograph=False)(x, channels_first)
