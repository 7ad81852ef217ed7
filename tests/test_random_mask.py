"""TFR102 on compared samples (masks): the comparison is cast where NumPy gave
its boolean array a number's dtype.

`(np.random.rand(n) > p).astype("float32")` is converted already, and
`(np.random.rand(n) > p) * 1.0` is NumPy's float64: the rewrite follows the
dtype the value has after each step (`Use.dtype`), not the spelling, and
refuses only where a boolean really meets arithmetic with no cast possible."""

from __future__ import annotations

import pytest
from function_sources import with_body, without_unused_numpy

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR102"]

# `y_true`, `y_pred` (loss parameter names) and `x` (annotated) are tensors;
# `y` is of unknown kind; `P` is a Python number.
SOURCE = """\
import numpy as np
import tensorflow as tf

P = 0.3


@tf.function
def f(y_true, y_pred, x: tf.Tensor, y):
{body}
"""


def _source(body: str) -> str:
    return with_body(SOURCE, body)


def _after(body: str) -> str:
    return without_unused_numpy(_source(body))


# (before body, after body): safe fixes
SAFE = [
    pytest.param(
        """
        mask = (np.random.rand(3) > 0.5).astype("float32")
        err = tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        return err
        """,
        """
        mask = tf.cast(tf.random.uniform([3]) > 0.5, y_true.dtype)
        err = tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        return err
        """,
        id="astype-string-meets-a-tensor",
    ),
    pytest.param(
        """
        mask = (np.random.uniform(size=(3,)) < P).astype(np.float32)
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """,
        """
        mask = tf.cast(tf.random.uniform([3]) < P, y_true.dtype)
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """,
        id="astype-np-float32-meets-a-tensor",
    ),
    pytest.param(
        "return y_pred * (np.random.rand(3) > 0.5).astype('float32')",
        "return y_pred * tf.cast(tf.random.uniform([3]) > 0.5, y_pred.dtype)",
        id="astype-inline",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype('float32') * 2.0\nreturn y_pred * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, y_pred.dtype) * 2.0\nreturn y_pred * mask",
        id="astype-then-a-number",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype(int)\nreturn x * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, x.dtype)\nreturn x * mask",
        id="astype-int-meets-a-tensor",
    ),
    pytest.param(
        "mask = np.asarray(np.random.rand(3) > 0.5, np.float32)\nreturn y_pred * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, y_pred.dtype)\nreturn y_pred * mask",
        id="asarray-with-a-dtype",
    ),
    pytest.param(
        "return y_pred * np.float32(np.random.rand() > 0.5)",
        "return y_pred * tf.cast(tf.random.uniform([]) > 0.5, y_pred.dtype)",
        id="numpy-scalar-type",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype(y_pred.dtype)\nreturn y_pred * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, y_pred.dtype)\nreturn y_pred * mask",
        id="astype-a-tensor-dtype",
    ),
    # converted and never meeting a tensor: the conversion's own dtype
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype(np.float32)\nreturn mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)\nreturn mask",
        id="astype-returned",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype(np.float32)\nreturn tf.cast(mask, tf.int32)",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)\nreturn tf.cast(mask, tf.int32)",
        id="astype-then-tf-cast",
    ),
    # a boolean in arithmetic with a number: NumPy's float64 / int64, or the
    # dtype of the tensor the result meets
    pytest.param(
        "return (np.random.rand(3) > 0.5) * 1.0",
        "return tf.cast(tf.random.uniform([3]) > 0.5, tf.float64) * 1.0",
        id="times-a-float-returned",
    ),
    pytest.param(
        "return (np.random.rand(3) > 0.5) + 1",
        "return tf.cast(tf.random.uniform([3]) > 0.5, tf.int64) + 1",
        id="plus-an-int-returned",
    ),
    pytest.param(
        "return (np.random.rand(3) > 0.5) / 2",
        "return tf.cast(tf.random.uniform([3]) > 0.5, tf.float64) / 2",
        id="true-division-returned",
    ),
    pytest.param(
        """
        mask = (np.random.rand(3) > 0.5) * 1.0
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """,
        """
        mask = tf.cast(tf.random.uniform([3]) > 0.5, y_true.dtype) * 1.0
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """,
        id="times-a-float-then-a-tensor",
    ),
    pytest.param(
        "mask = np.random.rand(3) > 0.5\nmask *= 1.0\nreturn y_pred * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, y_pred.dtype)\nmask *= 1.0\n"
        "return y_pred * mask",
        id="augmented-assignment",
    ),
    # unchanged: the boolean itself is used, or cast by TensorFlow
    pytest.param(
        "keep = np.random.rand(4) < 0.8\nreturn tf.where(keep, x, tf.zeros_like(x))",
        "keep = tf.random.uniform([4]) < 0.8\nreturn tf.where(keep, x, tf.zeros_like(x))",
        id="boolean-condition",
    ),
    pytest.param(
        "keep = np.random.rand(4) < 0.8\nreturn x * keep / 0.8",
        "keep = tf.cast(tf.random.uniform([4]) < 0.8, x.dtype)\nreturn x * keep / 0.8",
        id="boolean-times-a-tensor",
    ),
]


@pytest.mark.parametrize(("body", "after"), SAFE)
def test_masks_are_cast_where_numpy_converted_them(body: str, after: str) -> None:
    source = _source(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None, finding.message
    assert finding.fix.applicability is Applicability.SAFE, finding.fix.message
    fixed = fix_source(source, select=SELECT)
    assert fixed == _after(after)
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


# (before body, after body, why it is unsafe)
UNSAFE = [
    pytest.param(
        """
        mask = (np.random.rand(3) > 0.5).astype("float32")
        return tf.reduce_sum(y_pred * mask) / tf.reduce_sum(mask)
        """,
        """
        mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)
        return tf.reduce_sum(y_pred * mask) / tf.reduce_sum(mask)
        """,
        "held in `mask`, meets the tensor `y_pred` as a float32 array: NumPy's array takes "
        "the other operand's dtype there, a float32 tensor does not",
        id="converted-mask-with-another-use",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype('float32')\nreturn y * mask",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)\nreturn y * mask",
        "meets `y`, whose dtype is not known as a float32 array",
        id="converted-mask-meets-an-unknown",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype('float32')\nreturn tf.reduce_sum(mask)",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float32)\nreturn tf.reduce_sum(mask)",
        "is passed to `tf.reduce_sum(...)`: a host value adapts to the dtype the op needs",
        id="converted-mask-given-to-an-op",
    ),
    pytest.param(
        "mask = (np.random.rand(3) > 0.5) * 1.0\nreturn tf.reduce_sum(mask)",
        "mask = tf.cast(tf.random.uniform([3]) > 0.5, tf.float64) * 1.0\n"
        "return tf.reduce_sum(mask)",
        "is passed to `tf.reduce_sum(...)`",
        id="promoted-mask-given-to-an-op",
    ),
]


@pytest.mark.parametrize(("body", "after", "reason"), UNSAFE)
def test_masks_whose_dtype_is_not_proven_are_unsafe(body: str, after: str, reason: str) -> None:
    source = _source(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None, finding.message
    assert finding.fix.applicability is Applicability.UNSAFE
    assert reason in finding.fix.message, finding.fix.message
    assert fix_source(source, select=SELECT) == source
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == _after(after)


BOOLEAN_IN_ARITHMETIC = (
    "in arithmetic a NumPy boolean array converts to the other operand's dtype, a boolean "
    "tensor does not; wrap the comparison in `tf.cast`"
)

# (body, the reason the finding gives)
REFUSALS = [
    pytest.param(
        "mask = (np.random.rand(3) > 0.5).astype(bool)\nreturn y_pred * mask",
        "the comparison of the sample, held in `mask`, meets the tensor `y_pred`: "
        + BOOLEAN_IN_ARITHMETIC,
        id="astype-bool-keeps-a-boolean",
    ),
    pytest.param(
        "keep = np.random.rand(4) < 0.8\nreturn x * keep + tf.cast(keep, tf.int32)",
        "the comparison of the sample, held in `keep`, meets the tensor `x`: "
        + BOOLEAN_IN_ARITHMETIC,
        id="boolean-in-arithmetic-and-used-as-a-boolean",
    ),
    pytest.param(
        "return y * (np.random.rand(4) < 0.8)",
        "the comparison of the sample meets `y`, whose dtype is not known: "
        + BOOLEAN_IN_ARITHMETIC,
        id="boolean-meets-an-unknown",
    ),
    pytest.param(
        "keep = np.random.rand(3) > 0.5\nreturn (keep * 1.0) * y_pred + tf.reduce_sum(keep * 1.0)",
        "the comparison of the sample, held in `keep`, meets the number `1.0` in arithmetic, "
        "where NumPy computes a boolean array in float64: " + BOOLEAN_IN_ARITHMETIC,
        id="promoted-mask-meets-a-tensor-and-an-op",
    ),
]


@pytest.mark.parametrize(("body", "reason"), REFUSALS)
def test_a_boolean_in_arithmetic_without_one_cast_is_refused(body: str, reason: str) -> None:
    source = _source(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert f"not rewritten: {reason}" in finding.message, finding.message
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == source


def test_numpy_where_on_a_mask_is_refused_for_what_it_is() -> None:
    """`np.where` needs a NumPy condition: that is the reason, not the
    boolean arithmetic `np.where` replaces."""
    source = _source(
        """
        mask = np.where(np.random.rand(3) > 0.5, 1.0, 0.0)
        return tf.reduce_mean(tf.square(y_true - y_pred) * mask)
        """
    )
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is None
    assert finding.message.endswith(
        "not rewritten: the sample is passed to `np.where(...)`, which needs a Python or "
        "NumPy value"
    ), finding.message
    assert "boolean" not in finding.message


def test_a_conversion_of_the_draw_itself_is_not_a_mask() -> None:
    """`.astype` on the draw (before the comparison) folds into the draw as
    before; the comparison after it is the boolean that meets arithmetic."""
    source = _source("keep = np.random.rand(3).astype(np.float32) < 0.5\nreturn y_pred * keep")
    fixed = fix_source(source, select=SELECT)
    assert fixed == _after(
        "keep = tf.cast(tf.random.uniform([3], dtype=tf.float32) < 0.5, y_pred.dtype)\n"
        "return y_pred * keep"
    )
