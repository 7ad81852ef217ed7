"""TFR107: a tensor's static shape given as a shape in traced code, rewritten
to the dynamic shape; before/after sources and what is left alone. The
function is traced with `reduce_retracing=True`, under which a trace may see
the batch dimension as `None` (`facts/trace_shapes.py`)."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR107"]

TEMPLATE = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def f(x):
    h = tf.nn.relu(x)
    return {expr}
"""


def _last_line(source: str) -> str:
    return source.rstrip("\n").splitlines()[-1].strip().removeprefix("return ")


@pytest.mark.parametrize(
    "before, after",
    [
        ("tf.random.normal(h.shape)", "tf.random.normal(tf.shape(h))"),
        (
            "tf.random.uniform(shape=h.shape, maxval=2.0)",
            "tf.random.uniform(shape=tf.shape(h), maxval=2.0)",
        ),
        ("tf.zeros(h.shape, tf.float64)", "tf.zeros(tf.shape(h), tf.float64)"),
        ("tf.ones([h.shape[0], 2])", "tf.ones([tf.shape(h)[0], 2])"),
        ("tf.fill((h.shape[0], h.shape[-1]), 7.0)", "tf.fill((tf.shape(h)[0], h.shape[-1]), 7.0)"),
        ("tf.reshape(h, [h.shape[0], -1])", "tf.reshape(h, [tf.shape(h)[0], -1])"),
        ("tf.broadcast_to(1.0, h.shape)", "tf.broadcast_to(1.0, tf.shape(h))"),
        ("tf.random.normal(shape=h.get_shape())", "tf.random.normal(shape=tf.shape(h))"),
        ("tf.ones([h.get_shape()[0], 2])", "tf.ones([tf.shape(h)[0], 2])"),
    ],
)
def test_static_shape_becomes_the_dynamic_shape(before, after):
    source = TEMPLATE.format(expr=before)
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE
    fixed = fix_source(source, select=SELECT)
    assert _last_line(fixed) == after
    assert check_source(fixed, select=SELECT) == []


def test_a_parameter_with_no_evidence_gets_an_unsafe_fix():
    source = TEMPLATE.format(expr="tf.random.normal(x.shape)")
    [finding] = check_source(source, select=SELECT)
    assert finding.fix.applicability == Applicability.UNSAFE
    assert "it assumes `x` is a tensor argument" in finding.fix.message


def test_another_entry_of_unknown_dtype_makes_the_fix_unsafe():
    source = TEMPLATE.format(expr="tf.zeros([h.shape[0], n])").replace("def f(x)", "def f(x, n)")
    [finding] = check_source(source, select=SELECT)
    assert finding.fix.applicability == Applicability.UNSAFE
    assert "int32" in finding.fix.message


def test_a_shape_built_from_a_slice_is_reported_without_fix():
    source = TEMPLATE.format(expr="tf.reshape(h, list(h.shape[:-1]) + [4, 16])")
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "tf.concat" in finding.message


@pytest.mark.parametrize(
    "expr",
    [
        "tf.reshape(h, [-1, h.shape[-1]])",  # the features: known to the trace
        "tf.keras.layers.Dense(h.shape[-1])(h)",  # a Python int is meant
        "tf.zeros(tf.shape(h))",
        "tf.zeros(tf.reduce_sum(h).shape)",  # a scalar's shape is always known
        "tf.zeros((2, 3))",
        # The rank only: known to the trace whenever any dimension is.
        "tf.reshape(h, [-1 if i == 1 else 1 for i in range(h.shape.rank)])",
        "tf.reshape(h, [1] * (len(h.shape) - 1) + [-1])",
        "tf.ones([1 for _ in range(h.shape.ndims)])",
    ],
)
def test_left_alone(expr):
    assert check_source(TEMPLATE.format(expr=expr), select=SELECT) == []


def test_not_traced_is_left_alone():
    source = TEMPLATE.format(expr="tf.random.normal(h.shape)")
    source = source.replace("@tf.function(reduce_retracing=True)\n", "")
    assert check_source(source, select=SELECT) == []


def test_the_fix_adds_nothing_when_tensorflow_is_imported_under_another_name():
    source = textwrap.dedent(
        """\
        import tensorflow as tensorflow_lib


        @tensorflow_lib.function(reduce_retracing=True)
        def f(x):
            h = tensorflow_lib.nn.relu(x)
            return tensorflow_lib.zeros(h.shape)
        """
    )
    fixed = fix_source(source, select=SELECT)
    assert _last_line(fixed) == "tensorflow_lib.zeros(tensorflow_lib.shape(h))"
    assert fixed.count("import") == 1


def test_a_shape_built_into_a_name_from_the_static_shape_is_reported():
    """GPT-style `size_out = list(x.shape[:-1]) + [self.nf]` then
    `tf.reshape(x, size_out)`: reported at the use, without a fix."""
    source = TEMPLATE.format(expr="tf.reshape(h, size_out)").replace(
        "    h = tf.nn.relu(x)\n",
        "    h = tf.nn.relu(x)\n    size_out = list(h.shape[:-1]) + [3, 1]\n",
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None and "`size_out` is built from the static shape" in finding.message


WEIGHT_CONSTRAINT = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def zero_diagonal(kernel):
    return tf.linalg.set_diag(kernel, tf.zeros(kernel.shape[0:-1]))


@tf.function(reduce_retracing=True)
def rows_of(x):
    return tf.zeros(x.shape[0:-1])


layer = tf.keras.layers.Dense(4, kernel_constraint=zero_diagonal)
"""


def test_a_weight_constraint_reads_the_shape_of_its_variable() -> None:
    """Keras calls `zero_diagonal` with the layer's kernel, a variable whose
    shape is known in every trace; `rows_of`, called with anything, is a
    static shape of a likely tensor."""
    lines = [f.start.line for f in check_source(WEIGHT_CONSTRAINT, select=["TFR107"])]
    assert lines == [11]


def test_a_shape_of_the_rank_and_the_channels_is_known() -> None:
    """`[-1, 2] + [1] * (len(x.shape) - 2) + [x.shape[-1]]` reads the rank
    and the last dimension: both known in any trace; the batch size is not."""
    source = """\
import tensorflow as tf


@tf.function(reduce_retracing=True)
def modulate(x, style):
    style = tf.reshape(style, [-1, 2] + [1] * (len(x.shape) - 2) + [x.shape[-1]])
    return x * style[:, 0]


@tf.function(reduce_retracing=True)
def tile_rows(x, style):
    return tf.reshape(style, [x.shape[0], -1])
"""
    assert [f.start.line for f in check_source(source, select=["TFR107"])] == [12]
