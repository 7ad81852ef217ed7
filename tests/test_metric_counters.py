"""TFR306 in a `keras.metrics.Metric` that counts its `update_state` calls
(`self.count.assign_add(1)`) and divides what it adds up by that count:
the mean of per-batch values (`rules/training/metric_counters.py`)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

METRIC = """
    import tensorflow as tf


    class BatchError(tf.keras.metrics.Metric):
        def __init__(self, name="batch_error", **kwargs):
            super().__init__(name=name, **kwargs)
            self.error = self.add_weight(name="error", initializer="zeros")
            self.batches = self.add_weight(name="batches", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            self.error.assign_add({added})
            self.batches.assign_add({counted})

        def result(self):
            return {result}
"""

_MEAN = "tf.reduce_mean(tf.abs(y_true - y_pred))"


def _found(added: str = _MEAN, counted: str = "1", result: str = "self.error / self.batches"):
    source = METRIC.format(added=added, counted=counted, result=result)
    findings = check_source(textwrap.dedent(source).lstrip(), select=["TFR306"])
    return [(f.start.line, f.fix) for f in findings]


def test_a_metric_counting_its_calls_is_reported_where_it_counts():
    assert _found() == [(12, None)]


def test_a_float_count_or_a_safe_division_is_the_same_metric():
    assert _found(counted="1.0", result="tf.math.divide_no_nan(self.error, self.batches)") == [
        (12, None)
    ]


def test_a_metric_counting_examples_is_not_reported():
    assert _found(counted="tf.cast(tf.shape(y_true)[0], tf.float32)") == []


def test_a_value_weighted_by_the_batch_size_is_not_reported():
    weighted = f"{_MEAN} * tf.cast(tf.shape(y_true)[0], tf.float32)"
    assert _found(added=weighted) == []


def test_a_class_that_is_no_metric_is_not_reported():
    source = METRIC.format(added=_MEAN, counted="1", result="self.error / self.batches")
    source = source.replace("(tf.keras.metrics.Metric)", "(tf.Module)")
    assert check_source(textwrap.dedent(source).lstrip(), select=["TFR306"]) == []
