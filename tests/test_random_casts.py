"""TFR102 on a plain (not compared) sample that NumPy converts on the way.

`noise.astype(np.float32)` is still a NumPy array, and eager converts an
array to the dtype of the tensor it meets: `x + noise.astype(np.float32)` is
float64 for a float64 `x`. A `tf.cast(noise, tf.float32)` tensor is not
converted (`x + b` raises `TypeError`), so where the converted sample meets a
tensor in arithmetic the conversion goes to that tensor's dtype; where its
own dtype matters (returned, given to an op) it is kept; where neither is
proven the fix is unsafe, with the reason."""

from __future__ import annotations

import pytest
from function_sources import with_body, without_unused_numpy

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR102"]

# `y_true`, `y_pred` (loss parameter names) and `x` (annotated) are tensors;
# `y` is of unknown kind.
SOURCE = """\
import numpy as np
import tensorflow as tf


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
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return x + b
        """,
        """
        noise = tf.random.normal([3], dtype=x.dtype)
        b = noise
        return x + b
        """,
        id="converted-then-meets-a-tensor",
    ),
    pytest.param(
        "m = np.random.rand(4, 3)\nreturn x + m.astype(np.float64)",
        "m = tf.random.uniform([4, 3], dtype=x.dtype)\nreturn x + m",
        id="float64-conversion-meets-a-tensor",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype("float32")
        c = b * 2.0
        return y_pred - c
        """,
        """
        noise = tf.random.normal([3], dtype=y_pred.dtype)
        b = noise
        c = b * 2.0
        return y_pred - c
        """,
        id="meets-a-tensor-after-numbers",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn x + np.float32(noise)",
        "noise = tf.random.normal([3], dtype=x.dtype)\nreturn x + noise",
        id="numpy-scalar-type-conversion",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn x + np.asarray(noise, np.float32)",
        "noise = tf.random.normal([3], dtype=x.dtype)\nreturn x + noise",
        id="asarray-with-a-dtype",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return b
        """,
        """
        noise = tf.random.normal([3])
        b = tf.cast(noise, tf.float32)
        return b
        """,
        id="returned-keeps-the-conversion-dtype",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn noise.astype(np.float16)",
        "noise = tf.random.normal([3])\nreturn tf.cast(noise, tf.float16)",
        id="returned-float16-keeps-the-conversion-dtype",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return tf.cast(b, tf.float16) + tf.cast(x, tf.float16)
        """,
        """
        noise = tf.random.normal([3])
        b = tf.cast(noise, tf.float32)
        return tf.cast(b, tf.float16) + tf.cast(x, tf.float16)
        """,
        id="cast-again-keeps-the-conversion-dtype",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn x + tf.constant(noise, dtype=tf.float32)",
        "noise = tf.random.normal([3])\nreturn x + tf.cast(noise, tf.float32)",
        id="tf-constant-makes-a-tensor-already",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nb = noise.astype(x.dtype)\nreturn x + b, b",
        "noise = tf.random.normal([3], dtype=x.dtype)\nb = tf.cast(noise, x.dtype)\n"
        "return x + b, b",
        id="converted-to-the-dtype-of-the-tensor-it-meets",
    ),
    pytest.param(
        "return x + np.random.normal(size=(3,)).astype(np.float32)",
        "return x + tf.random.normal([3], dtype=x.dtype)",
        id="conversion-of-the-draw-is-folded",
    ),
]


@pytest.mark.parametrize(("body", "after"), SAFE)
def test_converted_samples_take_the_dtype_eager_gives_them(body: str, after: str) -> None:
    source = _source(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None, finding.message
    assert finding.fix.applicability is Applicability.SAFE, finding.fix.message
    assert fix_source(source, select=SELECT) == _after(after)


ADAPTS = "eager converts NumPy's array to the tensor's dtype there"

# (before body, after body with unsafe fixes, a part of the reason)
UNSAFE = [
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return x + b, b
        """,
        """
        noise = tf.random.normal([3], dtype=x.dtype)
        b = tf.cast(noise, tf.float32)
        return x + b, b
        """,
        "the sample, held in `b`, meets the tensor `x` as a float32 array: " + ADAPTS,
        id="meets-a-tensor-and-is-returned",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn x + noise.astype(np.int32)",
        "noise = tf.random.normal([3], dtype=x.dtype)\nreturn x + tf.cast(noise, tf.int32)",
        "meets the tensor `x` as an int32 array: " + ADAPTS + ", an int32 tensor is not "
        "converted; the conversion may change the values",
        id="integer-conversion-truncates",
    ),
    pytest.param(
        "noise = np.random.normal(size=(3,))\nreturn x + noise.astype(np.float16)",
        "noise = tf.random.normal([3], dtype=x.dtype)\nreturn x + tf.cast(noise, tf.float16)",
        "as a float16 array: " + ADAPTS,
        id="float16-conversion-rounds",
    ),
    pytest.param(
        "i = np.random.randint(0, 3, size=(3,))\nreturn x + i.astype(np.float32)",
        "i = tf.cast(tf.random.uniform([3], minval=0, maxval=3, dtype=tf.int64), x.dtype)\n"
        "return x + tf.cast(i, tf.float32)",
        "as a float32 array: " + ADAPTS,
        id="integer-sample-converted-to-float",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return y + b
        """,
        """
        noise = tf.random.normal([3])
        b = tf.cast(noise, tf.float32)
        return y + b
        """,
        "the sample, held in `b`, meets `y`, whose dtype is not known",
        id="meets-a-value-of-unknown-dtype",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        b = noise.astype(np.float32)
        return tf.reduce_sum(b) + x
        """,
        """
        noise = tf.random.normal([3])
        b = tf.cast(noise, tf.float32)
        return tf.reduce_sum(b) + x
        """,
        "is passed to `tf.reduce_sum(...)`: a host value adapts to the dtype the op needs",
        id="given-to-an-op",
    ),
    pytest.param(
        """
        noise = np.random.normal(size=(3,))
        return noise.astype(np.float32) + noise.astype(np.float64) + x
        """,
        """
        noise = tf.random.normal([3], dtype=x.dtype)
        return tf.cast(noise, tf.float32) + tf.cast(noise, tf.float64) + x
        """,
        "the sample is converted more than once",
        id="converted-twice",
    ),
]


@pytest.mark.parametrize(("body", "after", "reason"), UNSAFE)
def test_converted_samples_of_unproven_dtype_are_unsafe(body: str, after: str, reason: str) -> None:
    source = _source(body)
    (finding,) = check_source(source, select=SELECT)
    assert finding.fix is not None, finding.message
    assert finding.fix.applicability is Applicability.UNSAFE
    assert reason in finding.fix.message, finding.fix.message
    assert fix_source(source, select=SELECT) == source
    assert fix_source(source, select=SELECT, unsafe_fixes=True) == _after(after)


def test_a_converted_python_sample_takes_the_dtype_of_the_tensor_it_meets() -> None:
    """TFR106 shares the rewrite: `np.float32(r)` of a Python draw is a NumPy
    scalar, which eager converts to `x`'s dtype."""
    source = (
        "import random\n\nimport numpy as np\nimport tensorflow as tf\n\n\n"
        "@tf.function\ndef f(x: tf.Tensor):\n"
        "    r = random.random()\n    return x + np.float32(r)\n"
    )
    (finding,) = check_source(source, select=["TFR106"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
    fixed = fix_source(source, select=["TFR106"])
    assert "r = tf.random.uniform([], dtype=x.dtype)\n    return x + r\n" in fixed, fixed
