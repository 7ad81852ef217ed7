"""TFR107 leaves the first dimension of a tensor the function has just
made to a shape given by Python values (`points = tf.reshape(points,
(n_points, 3))` in a map function): the trace knows it. Reshaped to a
dynamic size, or bound in a branch, it is reported as before."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

LOADER = """
import tensorflow as tf


def load(paths, n_points):
    def preprocess(sample):
        points = sample["points"]
        {reshape}
        order = tf.random.shuffle(tf.range(points.shape[0]))
        return tf.gather(points, order)

    return tf.data.Dataset.from_tensor_slices(paths).map(preprocess)
"""


def _lines(reshape: str) -> list[int]:
    source = textwrap.dedent(LOADER.replace("{reshape}", reshape))
    return [f.start.line for f in check_source(source, select=["TFR107"])]


@pytest.mark.parametrize(
    "reshape",
    ["points = tf.reshape(points, (n_points, 3))", "points = tf.reshape(points, [1024, 3])"],
)
def test_a_dimension_set_from_python_values_is_known(reshape: str) -> None:
    assert _lines(reshape) == []


@pytest.mark.parametrize(
    "reshape",
    [
        "points = tf.reshape(points, (-1, 3))",
        "points = tf.reshape(points, (tf.size(points) // 3, 3))",
        "pass",
    ],
)
def test_a_dimension_the_trace_may_not_know_is_reported(reshape: str) -> None:
    assert _lines(reshape) == [9]


def test_a_shape_entry_that_is_itself_a_static_dimension_is_no_proof() -> None:
    """`n, d = points.shape` then `tf.reshape(points, (n, d))`: the reshape
    is given the dimension it should prove (both are reported)."""
    assert 9 in _lines("n, d = points.shape; points = tf.reshape(points, (n, d))")
