"""One name for each TensorFlow object: `tf.compat.v2.X` and the
`tf.compat.v1` names that are the TensorFlow 2 object itself read as `tf.X`
(measured by `scripts/tf_compat_aliases.py`), so what is known of `tf.X`
holds for code upgraded from TensorFlow 1; TensorFlow 1's own versions keep
their names."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.canonical_names import canonical_name


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("tensorflow.compat.v1.reshape", "tensorflow.reshape"),
        ("tensorflow.compat.v1.nn.relu", "tensorflow.nn.relu"),
        ("tensorflow.compat.v1.GradientTape", "tensorflow.GradientTape"),
        ("tensorflow.compat.v2.random.normal", "tensorflow.random.normal"),
        ("tensorflow.python.keras.layers.Dense", "tensorflow.keras.layers.Dense"),
        # TensorFlow 1's own functions and classes: other objects.
        ("tensorflow.compat.v1.reduce_sum", "tensorflow.compat.v1.reduce_sum"),
        ("tensorflow.compat.v1.Variable", "tensorflow.compat.v1.Variable"),
        ("tensorflow.compat.v1.get_variable", "tensorflow.compat.v1.get_variable"),
        ("tensorflow.reshape", "tensorflow.reshape"),
    ],
)
def test_a_name_reads_as_tensorflow_2_names_the_same_object(written: str, meant: str) -> None:
    assert canonical_name(written) == meant


FLATTEN = """
import tensorflow as tf


@tf.function
def flatten(x):
    [n, h, w, c] = x.shape
    return tf.compat.v1.reshape(x, shape=[n, h * w * c])
"""


def test_a_static_shape_given_to_the_compat_spelling_of_reshape_is_reported() -> None:
    """`tf.compat.v1.reshape` takes its shape as `tf.reshape` does: the
    static batch dimension `n` there fails once the trace does not know it."""
    findings = check_source(textwrap.dedent(FLATTEN), select=["TFR107"])
    assert [(f.code, f.start.line) for f in findings] == [("TFR107", 8)]
