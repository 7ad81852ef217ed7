"""TFR105 on Keras' `get_value` (`tf.keras.backend.get_value(v)`, `K.get_value`):
traced, it leaves the graph to read the value, so a variable is read once,
at trace time, and a symbolic tensor raises. The variable itself takes its
place (an unsafe fix: gradients then flow through it). A project method of
that name is not Keras'."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

WEIGHTED = """
import tensorflow as tf
from tensorflow.keras import backend as K

weight = tf.Variable(20.0)


@tf.function
def weighted(x):
    return tf.keras.backend.get_value(weight) * x + K.get_value(weight)
"""


def test_keras_get_value_in_traced_code_is_reported_and_rewritten() -> None:
    source = textwrap.dedent(WEIGHTED)
    findings = check_source(source, select=["TFR105"])
    assert [f.start.line for f in findings] == [10, 10]
    assert "read once, at trace time" in findings[0].message
    assert all(f.fix is not None and f.fix.applicability == "unsafe" for f in findings)
    fixed = fix_source(source, select=["TFR105"], unsafe_fixes=True)
    assert "get_value" not in fixed and "weight.read_value() * x" in fixed


def test_a_project_method_named_get_value_is_not_keras() -> None:
    source = """
    import tensorflow as tf


    class Table:
        def get_value(self, key):
            return self.values[key]


    @tf.function
    def lookup(table, x):
        return table.get_value("scale") * x
    """
    assert check_source(textwrap.dedent(source), select=["TFR105"]) == []
