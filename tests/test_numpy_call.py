"""TFR105: `.numpy()`, `float(x)`, `int(x)` and `.item()` on tensors in traced code.

Before/after source tests for the one fix (a `.numpy()` whose value goes
straight back into a TensorFlow op, unsafe), the findings without a fix and
their reasons, and the code the rule must leave alone."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR105"]

# `y_true`/`y_pred` are tensors to the analysis (loss parameter names); `n` is unknown.
TRACED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred, n):
    return {expr}
"""

NOT_TRACED = TRACED.replace("@tf.function\n", "")


def _last_line(source: str) -> str:
    return source.rstrip("\n").splitlines()[-1].strip().removeprefix("return ")


def _fix(expr: str, unsafe: bool = True) -> str:
    return _last_line(fix_source(TRACED.format(expr=expr), select=SELECT, unsafe_fixes=unsafe))


def _findings(expr: str):
    return check_source(TRACED.format(expr=expr), select=SELECT)


FIXED = [
    ("tf.reduce_sum(y_pred.numpy())", "tf.reduce_sum(y_pred)"),
    ("tf.reduce_sum(y_pred.numpy(), axis=0)", "tf.reduce_sum(y_pred, axis=0)"),
    ("tf.reduce_mean(input_tensor=y_pred.numpy())", "tf.reduce_mean(input_tensor=y_pred)"),
    ("tf.reduce_sum((y_true - y_pred).numpy())", "tf.reduce_sum(y_true - y_pred)"),
    ("tf.reduce_sum((y_pred.numpy()))", "tf.reduce_sum((y_pred))"),
    ("tf.maximum(tf.abs(y_pred).numpy(), 0.0)", "tf.maximum(tf.abs(y_pred), 0.0)"),
    ("tf.math.log(y_pred.numpy() )", "tf.math.log(y_pred )"),
    ("tf.convert_to_tensor(y_pred.numpy())", "tf.convert_to_tensor(y_pred)"),
    ("tf.keras.ops.sum(y_pred.numpy())", "tf.keras.ops.sum(y_pred)"),
]


@pytest.mark.parametrize(("before", "after"), FIXED)
def test_numpy_value_back_into_tensorflow_is_an_unsafe_fix(before, after):
    [finding] = _findings(before)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "gradients now flow" in finding.fix.message
    assert "raises `AttributeError` when traced" in finding.message
    assert _fix(before, unsafe=False) == before, "an unsafe fix applied without --unsafe-fixes"
    assert _fix(before) == after


NO_FIX = [
    ("y_pred.numpy()", "used as a NumPy array or a Python value"),
    ("np.mean(y_pred.numpy())", "used as a NumPy array or a Python value"),
    ("y_pred.numpy()[0]", "used as a NumPy array or a Python value"),
    ("len(y_pred.numpy())", "used as a NumPy array or a Python value"),
    ("y_pred.numpy() * 2", "used as a NumPy array or a Python value"),
    ("tf.reduce_sum(*y_pred.numpy())", "used as a NumPy array or a Python value"),
    ("tf.constant(y_pred.numpy())", "`tf.constant` needs a host value"),
    ("float(y_pred)", "raises `TypeError` when traced"),
    ("float(tf.reduce_mean(y_pred))", "`tf.cast(tf.reduce_mean(y_pred), tf.float32)`"),
    ("int(tf.shape(y_pred)[0])", "`tf.cast(tf.shape(y_pred)[0], tf.int32)`"),
    ("y_pred.item()", "tensors have no `.item()`"),
    ("tf.reduce_max(y_pred).item()", "tensors have no `.item()`"),
]


@pytest.mark.parametrize(("before", "reason"), NO_FIX)
def test_finding_without_fix(before, reason):
    [finding] = _findings(before)
    assert finding.fix is None
    assert reason in finding.message
    assert _fix(before) == before


LEFT_ALONE = [
    "n.numpy()",  # not known to be a tensor
    "tf.reduce_sum(n.numpy())",
    "float(n)",
    "int(len(y_pred.shape))",
    "float(y_pred.shape[0])",  # a static dimension, not a tensor
    "y_pred.numpy(1)",  # not the tensor method
    "n.item()",
    "tf.reduce_sum(y_pred)",
]


@pytest.mark.parametrize("expr", LEFT_ALONE)
def test_left_alone(expr):
    assert _findings(expr) == []


@pytest.mark.parametrize("expr", [before for before, _ in FIXED] + [e for e, _ in NO_FIX])
def test_not_traced_is_untouched(expr):
    source = NOT_TRACED.format(expr=expr)
    assert check_source(source, select=SELECT) == []


def test_uses_the_files_tensorflow_alias_in_messages():
    source = textwrap.dedent(
        """\
        import tensorflow as tfx


        @tfx.function
        def f(x):
            y = tfx.square(x)
            return tfx.reduce_sum(y.numpy()) + float(tfx.reduce_max(y))
        """
    )
    findings = check_source(source, select=SELECT)
    assert len(findings) == 2
    assert any("`tfx.stop_gradient(y)`" in (f.fix.message if f.fix else "") for f in findings)
    assert any("`tfx.cast(tfx.reduce_max(y), tfx.float32)`" in f.message for f in findings)
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "return tfx.reduce_sum(y) + float(tfx.reduce_max(y))" in fixed
    assert "import tensorflow as tf\n" not in fixed


def test_a_shadowing_import_of_float_is_not_the_builtin():
    source = textwrap.dedent(
        """\
        import tensorflow as tf
        from numpy import float32 as float


        @tf.function
        def f(y_pred):
            return float(tf.reduce_mean(y_pred))
        """
    )
    assert check_source(source, select=SELECT) == []


def test_keras_loss_call_and_nested_function():
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        class Weighted(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                weights = tf.abs(y_true).numpy()
                return tf.reduce_mean(weights * (y_true - y_pred) ** 2)


        @tf.function
        def outer(y_pred):
            def inner():
                return tf.reduce_sum(y_pred.numpy())
            return inner()
        """
    )
    findings = check_source(source, select=SELECT)
    assert [f.start.line for f in findings] == [6, 13]
    assert findings[0].fix is None and findings[1].fix is not None
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "return tf.reduce_sum(y_pred)\n" in fixed
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed
