"""Run-once set-up measured: a module-level metric created under a `None`
guard in a `tf.function` gives, traced, the per-batch accuracy each call
gives eagerly (with AutoGraph on and off: the guard is a Python test)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from tests.lazy_state import LAZY_METRIC
from tests.tf.equivalence import load_file_module, run_eagerly

pytestmark = pytest.mark.tensorflow

BATCHES = [
    (tf.constant([[1.0], [0.0]]), tf.constant([[0.9], [0.2]])),
    (tf.constant([[1.0], [1.0], [0.0]]), tf.constant([[0.1], [0.8], [0.7]])),
    (tf.constant([[0.0]]), tf.constant([[0.4]])),
]


@pytest.mark.parametrize("autograph", [True, False])
def test_lazily_created_metric_agrees_traced_and_eager(tmp_path: Path, autograph: bool) -> None:
    source = LAZY_METRIC
    if not autograph:
        source = source.replace("@tf.function", "@tf.function(autograph=False)")
    eager_module = load_file_module(source, tmp_path, prefix="eager")
    traced_module = load_file_module(source, tmp_path, prefix="traced")
    eager = [float(run_eagerly(eager_module.batch_accuracy, y, p)) for y, p in BATCHES]
    traced = [float(traced_module.batch_accuracy(y, p)) for y, p in BATCHES]
    assert eager == pytest.approx([1.0, 1 / 3, 1.0])
    assert traced == pytest.approx(eager)
