"""The metric `tests/test_metric_counters.py` reports, run by Keras over
batches of 4, 4 and 2 examples: counting calls gives the mean of the three
batch means, not the mean over the 10 examples that `keras.metrics.Mean`
(and the metric counting examples) gives. The rule has no fix here."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow

_MEAN = "tf.reduce_mean(tf.abs(y_true - y_pred))"
_SIZE = "tf.cast(tf.shape(y_true)[0], tf.float32)"


def _evaluate(added: str, counted: str) -> float:
    import tensorflow as tf
    from tests.test_metric_counters import METRIC

    source = METRIC.format(added=added, counted=counted, result="self.error / self.batches")
    metric = load_module(textwrap.dedent(source)).BatchError()
    y_true = np.zeros((10, 1), np.float32)
    y_pred = np.arange(10, dtype=np.float32).reshape(10, 1)
    for start in (0, 4, 8):
        metric.update_state(tf.constant(y_true[start : start + 4]), y_pred[start : start + 4])
    return float(metric.result())


def test_counting_calls_weighs_the_short_batch_like_a_full_one() -> None:
    per_call = _evaluate(_MEAN, "1")
    per_example = _evaluate(f"{_MEAN} * {_SIZE}", _SIZE)
    assert per_call == pytest.approx((1.5 + 5.5 + 8.5) / 3)
    assert per_example == pytest.approx(4.5)  # the mean of 0..9
