"""Hazards tfrewrite reports without a fix, shown to be real under TensorFlow:
what the finding says happens when traced does happen, and the form the rule
leaves alone runs traced as it runs eagerly."""

from __future__ import annotations

import pytest
import tensorflow as tf

from tfrewrite.api import check_source

from .equivalence import load_file_module, python_function

pytestmark = pytest.mark.tensorflow


GROWN_IN_GRAPH_LOOP = """\
import tensorflow as tf


@tf.function
def powers(x):
    outputs = []
    for i in tf.range(3):
        outputs.append(x ** tf.cast(i, x.dtype))
    return tf.stack(outputs)
"""


def test_a_list_grown_in_a_tensor_loop_fails_traced_as_reported(tmp_path):
    [finding] = check_source(GROWN_IN_GRAPH_LOOP, select=["TFR202"])
    assert "InaccessibleTensorError" in finding.message
    powers = load_file_module(GROWN_IN_GRAPH_LOOP, tmp_path, "grown_in_graph_loop").powers
    with pytest.raises(Exception) as raised:  # noqa: PT011 - the type is not public API
        powers(tf.constant(2.0))
    assert type(raised.value).__name__ == "InaccessibleTensorError"
    # Eagerly the same Python runs as written.
    assert python_function(powers)(tf.constant(2.0)).numpy().tolist() == [1.0, 2.0, 4.0]


def test_a_list_grown_in_a_python_range_loop_is_left_alone_and_works_traced(tmp_path):
    source = GROWN_IN_GRAPH_LOOP.replace("tf.range(3)", "range(3)")
    assert check_source(source, select=["TFR202"]) == []
    powers = load_file_module(source, tmp_path, "grown_in_python_loop").powers
    assert powers(tf.constant(2.0)).numpy().tolist() == [1.0, 2.0, 4.0]


FROZEN_THROUGH_ATTRIBUTES = """\
import tensorflow as tf


class Schedule:
    margin = 1.0


@tf.function
def scaled(x):
    return x * Schedule.margin


def train():
    k = 1.0

    @tf.function
    def shifted(x):
        return x + k

    seen = []
    for epoch in range(3):
        Schedule.margin = float(epoch)
        k = float(epoch)
        seen.append((float(scaled(tf.constant(1.0))), float(shifted(tf.constant(1.0)))))
    return seen
"""


def test_state_rebound_through_an_attribute_or_a_closure_is_frozen_as_reported(tmp_path):
    found = check_source(FROZEN_THROUGH_ATTRIBUTES, select=["TFR201"])
    assert sorted(f.message.split(" is ")[0] for f in found) == ["`Schedule.margin`", "`k`"]
    module = load_file_module(FROZEN_THROUGH_ATTRIBUTES, tmp_path, "frozen_through_attributes")
    assert module.train() == [(0.0, 1.0)] * 3  # traced: the first epoch's values
    tf.config.run_functions_eagerly(True)
    try:
        assert module.train() == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]
    finally:
        tf.config.run_functions_eagerly(False)
