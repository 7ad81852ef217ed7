"""Measured: a counter a traced method keeps on `self` through a local name
counts traces, not calls (eagerly 2, 4, 6 after three calls; traced 2, 2,
2), while the variable it guards moves on every call: what TFR202 reports
(no fix)."""

from __future__ import annotations

from pathlib import Path

import pytest
import tensorflow as tf
from tests.counted_attributes import COUNTER_THROUGH_A_NAME
from tests.tf.equivalence import load_file_module, run_eagerly

pytestmark = pytest.mark.tensorflow


def test_the_counter_counts_traces(tmp_path: Path) -> None:
    module = load_file_module(COUNTER_THROUGH_A_NAME, tmp_path)
    eager, traced = module.Logger(), module.Logger()
    values = tf.constant([1.0, 2.0])
    eager_steps, traced_steps = [], []
    for _ in range(3):
        run_eagerly(eager.log, values)
        traced.log(values)
        eager_steps.append(eager.step)
        traced_steps.append(traced.step)
    assert eager_steps == [2, 4, 6]
    assert traced_steps == [2, 2, 2]
    assert float(traced.total) == float(eager.total) == 18.0
