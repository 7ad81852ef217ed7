"""Measured for `tests/test_helper_results.py`'s unpacked helper result:
`if probs[j] > 0.5` on an element of what the helper returns is a tensor
test. With AutoGraph it counts as eagerly; without it, `if` on the
symbolic tensor raises, which is why TFR101 reports it (without a fix: the
condition is not known to be a scalar)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_helper_results import UNPACKED

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow

SOURCE = UNPACKED.replace("RETURNED", "tf.shape(scores)[0]")


def test_the_tensor_test_needs_autograph(tmp_path: Path) -> None:
    import tensorflow as tf

    scores = tf.constant([2.0, -1.0, 0.5, -3.0])
    converted = load_file_module(SOURCE, tmp_path)
    eager = converted.count_confident.python_function(scores)
    assert int(converted.count_confident(scores)) == int(eager) == 2
    plain = load_file_module(
        SOURCE.replace("@tf.function", "@tf.function(autograph=False)"), tmp_path
    )
    with pytest.raises((TypeError, tf.errors.OperatorNotAllowedInGraphError)):
        plain.count_confident(scores)
