"""Measured for TFR207 (`tests/test_caught_op_errors.py`): eagerly the
`except tf.errors.InvalidArgumentError` around an out-of-range scatter
falls back; traced, with or without AutoGraph, the op's error is raised
from the call of the traced step instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.test_caught_op_errors import SOURCE

from .equivalence import load_file_module

pytestmark = pytest.mark.tensorflow


@pytest.mark.parametrize("autograph", [True, False])
def test_the_handler_runs_eagerly_and_never_traced(tmp_path: Path, autograph: bool) -> None:
    import tensorflow as tf

    source = SOURCE.format(caught="tf.errors.InvalidArgumentError", decorator="", imports="")
    step = load_file_module(source, tmp_path).step
    targets = tf.constant([1.0, 2.0, 3.0])
    outside = (tf.constant([[7]]), tf.constant([10.0]))
    assert float(step(targets, *outside)) == pytest.approx(2.0)  # the fallback
    inside = (tf.constant([[1]]), tf.constant([8.0]))
    traced = tf.function(step, autograph=autograph)
    assert float(traced(targets, *inside)) == pytest.approx(4.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        traced(targets, *outside)
