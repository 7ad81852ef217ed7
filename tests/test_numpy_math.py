"""TFR104: NumPy math on tensors in traced code -> TensorFlow ops.

Before/after source tests for every mapping and import spelling, the dtype
decisions (safe, unsafe with a reason, refused with a reason), the traced
contexts the rule looks into, and the calls it must leave alone."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source, fix_source_with_findings
from tfrewrite.findings import Applicability

SELECT = ["TFR104"]

# To the analysis: `y_true`/`y_pred` are floating-point tensors (loss parameter
# names), `i` an integer tensor, `b` a boolean tensor, `u` a tensor of unknown
# dtype, and `n` a Python value by its annotation (not a tensor).
TRACED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred, n: int):
    i = tf.cast(y_true, tf.int32)
    b = y_true > 0
    u = tf.constant(n)
    return {expr}
"""

NOT_TRACED = TRACED.replace("@tf.function\n", "")


def _last_line(source: str) -> str:
    return source.rstrip("\n").splitlines()[-1].strip().removeprefix("return ")


def _fix(expr: str, unsafe: bool = False) -> str:
    return _last_line(fix_source(TRACED.format(expr=expr), select=SELECT, unsafe_fixes=unsafe))


def _findings(expr: str):
    return check_source(TRACED.format(expr=expr), select=SELECT)


SAFE = [
    # reductions
    ("np.mean(y_pred)", "tf.reduce_mean(y_pred)"),
    ("np.mean(y_pred, -1)", "tf.reduce_mean(y_pred, -1)"),
    ("np.mean(y_pred, axis=-1)", "tf.reduce_mean(y_pred, axis=-1)"),
    ("np.mean(y_pred, axis=None)", "tf.reduce_mean(y_pred, axis=None)"),
    ("np.mean(y_pred, axis=(0, 1))", "tf.reduce_mean(y_pred, axis=(0, 1))"),
    ("np.mean(y_pred, axis=0, keepdims=True)", "tf.reduce_mean(y_pred, axis=0, keepdims=True)"),
    ("np.mean(y_pred, 1, None, None, True)", "tf.reduce_mean(y_pred, 1, True)"),
    ("np.mean(a=y_pred)", "tf.reduce_mean(input_tensor=y_pred)"),
    ("np.mean(y_pred, dtype=None, out=None)", "tf.reduce_mean(y_pred)"),
    ("np.mean(y_pred, where=True)", "tf.reduce_mean(y_pred)"),
    ("np.sum(y_pred, axis=1)", "tf.reduce_sum(y_pred, axis=1)"),
    ("np.sum(y_pred, initial=None)", "tf.reduce_sum(y_pred)"),
    ("np.prod(y_pred)", "tf.reduce_prod(y_pred)"),
    ("np.max(y_pred, axis=-1)", "tf.reduce_max(y_pred, axis=-1)"),
    ("np.amax(y_pred)", "tf.reduce_max(y_pred)"),
    ("np.min(y_pred, keepdims=True)", "tf.reduce_min(y_pred, keepdims=True)"),
    ("np.amin(y_pred)", "tf.reduce_min(y_pred)"),
    ("np.std(y_pred)", "tf.math.reduce_std(y_pred)"),
    ("np.std(y_pred, axis=0, ddof=0)", "tf.math.reduce_std(y_pred, axis=0)"),
    ("np.var(y_pred, -1, keepdims=True)", "tf.math.reduce_variance(y_pred, -1, keepdims=True)"),
    # integer and boolean means are float64 in NumPy
    ("np.mean(i)", "tf.reduce_mean(tf.cast(i, tf.float64))"),
    ("np.mean(b, axis=0)", "tf.reduce_mean(tf.cast(b, tf.float64), axis=0)"),
    ("np.std(i)", "tf.math.reduce_std(tf.cast(i, tf.float64))"),
    # element-wise
    ("np.square(y_pred)", "tf.square(y_pred)"),
    ("np.sqrt(y_pred)", "tf.sqrt(y_pred)"),
    ("np.abs(y_pred)", "tf.abs(y_pred)"),
    ("np.absolute(y_pred)", "tf.abs(y_pred)"),
    ("np.exp(y_pred)", "tf.exp(y_pred)"),
    ("np.log(y_pred)", "tf.math.log(y_pred)"),
    ("np.log(y_pred + 1e-7)", "tf.math.log(y_pred + 1e-7)"),
    ("np.log1p(y_pred)", "tf.math.log1p(y_pred)"),
    ("np.tanh(y_pred)", "tf.tanh(y_pred)"),
    ("np.sign(y_pred)", "tf.sign(y_pred)"),
    ("np.floor(y_pred)", "tf.floor(y_pred)"),
    ("np.ceil(y_pred)", "tf.math.ceil(y_pred)"),
    ("np.round(y_pred)", "tf.round(y_pred)"),
    ("np.round(y_pred, 0)", "tf.round(y_pred)"),
    ("np.around(y_pred, decimals=0)", "tf.round(y_pred)"),
    ("np.abs(i)", "tf.abs(i)"),
    ("np.square(u)", "tf.square(u)"),
    # binary
    ("np.maximum(y_pred, 0.0)", "tf.maximum(y_pred, 0.0)"),
    ("np.minimum(y_true, y_pred)", "tf.minimum(y_true, y_pred)"),
    ("np.maximum(i, 1)", "tf.maximum(i, 1)"),
    ("np.maximum(u, 0)", "tf.maximum(u, 0)"),
    ("np.maximum(0.5, y_pred)", "tf.maximum(y_pred, 0.5)"),
    # clip
    ("np.clip(y_pred, 0, 1)", "tf.clip_by_value(y_pred, 0, 1)"),
    ("np.clip(y_pred, 1e-7, 1.0 - 1e-7)", "tf.clip_by_value(y_pred, 1e-7, 1.0 - 1e-7)"),
    ("np.clip(y_pred, -1.0, 1.0)", "tf.clip_by_value(y_pred, -1.0, 1.0)"),
    (
        "np.clip(y_pred, a_min=0.0, a_max=1.0)",
        "tf.clip_by_value(y_pred, clip_value_min=0.0, clip_value_max=1.0)",
    ),
    ("np.clip(y_pred, 0.0, None)", "tf.maximum(y_pred, 0.0)"),
    ("np.clip(y_pred, None, 1.0)", "tf.minimum(y_pred, 1.0)"),
    ("np.clip(y_pred, a_min=None, a_max=1.0)", "tf.minimum(y_pred, 1.0)"),
    ("np.clip(y_pred, min=0.0)", "tf.maximum(y_pred, 0.0)"),
    # where
    ("np.where(b, y_pred, 0.0)", "tf.where(b, y_pred, 0.0)"),
    ("np.where(y_pred > 0.5, y_pred, y_true)", "tf.where(y_pred > 0.5, y_pred, y_true)"),
    # joins
    ("np.concatenate([y_true, y_pred])", "tf.concat([y_true, y_pred], axis=0)"),
    ("np.concatenate((y_true, y_pred), axis=-1)", "tf.concat((y_true, y_pred), axis=-1)"),
    ("np.concatenate([y_true, y_pred], 1)", "tf.concat([y_true, y_pred], 1)"),
    ("np.stack([y_true, y_pred])", "tf.stack([y_true, y_pred])"),
    ("np.stack([y_true, y_pred], axis=1)", "tf.stack([y_true, y_pred], axis=1)"),
    ("np.stack([b, b])", "tf.stack([b, b])"),
    # nested calls: fixed from the inside out
    ("np.mean(np.square(y_true - y_pred))", "tf.reduce_mean(tf.square(y_true - y_pred))"),
    ("np.sum(np.abs(y_pred), axis=1)", "tf.reduce_sum(tf.abs(y_pred), axis=1)"),
    ("np.exp(-np.abs(y_pred))", "tf.exp(-tf.abs(y_pred))"),
    ("np.sqrt(np.mean(np.square(y_pred)))", "tf.sqrt(tf.reduce_mean(tf.square(y_pred)))"),
    (
        "np.mean(np.maximum(1.0 - y_true * y_pred, 0.0))",
        "tf.reduce_mean(tf.maximum(1.0 - y_true * y_pred, 0.0))",
    ),
    # parentheses around the call are kept
    ("(np.mean(y_pred))", "(tf.reduce_mean(y_pred))"),
    # shape and dtype are shared by arrays and tensors
    ("np.abs(y_pred).shape", "tf.abs(y_pred).shape"),
    # a leading Python number would take TensorFlow's default dtype (int32,
    # float32) and clash with the tensor: the tensor goes first
    ("np.maximum(0, y_pred)", "tf.maximum(y_pred, 0)"),
    ("np.minimum(1.0 ,  y_pred)", "tf.minimum(y_pred ,  1.0)"),
    ("np.where(b, 0, y_pred)", "tf.where(tf.logical_not(b), y_pred, 0)"),
    ("np.where(y_true > 0.5, 1.0, y_pred)", "tf.where(tf.logical_not(y_true > 0.5), y_pred, 1.0)"),
    # NumPy counts booleans in int64
    ("np.sum(b)", "tf.reduce_sum(tf.cast(b, tf.int64))"),
    ("np.prod(b, axis=0)", "tf.reduce_prod(tf.cast(b, tf.int64), axis=0)"),
    # a float64/int64 NumPy scalar meeting a tensor takes its dtype: so does the cast
    ("y_pred + np.mean(b)", "y_pred + tf.reduce_mean(tf.cast(b, y_pred.dtype))"),
    ("y_pred - 0.5 * np.mean(i)", "y_pred - 0.5 * tf.reduce_mean(tf.cast(i, y_pred.dtype))"),
    ("np.mean(b) < y_pred", "tf.reduce_mean(tf.cast(b, y_pred.dtype)) < y_pred"),
    ("y_true * np.sum(b)", "y_true * tf.reduce_sum(tf.cast(b, y_true.dtype))"),
    ("-np.mean(b) * y_pred", "-tf.reduce_mean(tf.cast(b, y_pred.dtype)) * y_pred"),
    # conversions of the result are rewritten with it
    ("np.mean(y_pred).astype(np.float32)", "tf.cast(tf.reduce_mean(y_pred), tf.float32)"),
    ("tf.constant(np.sum(y_pred, axis=0))", "tf.reduce_sum(y_pred, axis=0)"),
    (
        "tf.convert_to_tensor(np.mean(b), tf.float32)",
        "tf.cast(tf.reduce_mean(tf.cast(b, tf.float64)), tf.float32)",
    ),
    # power: a Python number base keeps its place, as an operator
    ("np.power(y_pred, 2)", "tf.pow(y_pred, 2)"),
    ("np.power(y_pred, 0.5)", "tf.pow(y_pred, 0.5)"),
    ("np.power(i, 2)", "tf.pow(i, 2)"),
    ("np.power(2.0, y_pred)", "2.0 ** y_pred"),
    ("np.power(10.0, y_pred - 1.0)", "10.0 ** (y_pred - 1.0)"),
    ("np.power(x1=y_true, x2=y_pred)", "tf.pow(x=y_true, y=y_pred)"),
    # norm: the 2-norm of all elements, or along one axis
    ("np.linalg.norm(y_pred)", "tf.norm(y_pred)"),
    ("np.linalg.norm(y_pred, axis=-1)", "tf.norm(y_pred, axis=-1)"),
    ("np.linalg.norm(y_pred, None, 1, True)", "tf.norm(y_pred, axis=1, keepdims=True)"),
    ("np.linalg.norm(y_pred, axis=None, keepdims=False)", "tf.norm(y_pred)"),
    # argmax: NumPy flattens without an axis
    ("np.argmax(y_pred)", "tf.argmax(tf.reshape(y_pred, [-1]))"),
    ("np.argmax(y_pred, axis=None)", "tf.argmax(tf.reshape(y_pred, [-1]))"),
    ("np.argmax(y_pred, axis=-1)", "tf.argmax(y_pred, axis=-1)"),
    ("np.argmin(i, 1)", "tf.argmin(i, 1)"),
    ("np.argmax(u, 0)", "tf.argmax(u, 0)"),
    # builtin max/min on tensors
    ("max(y_pred, 0.0)", "tf.maximum(y_pred, 0.0)"),
    ("min(0.0, y_pred)", "tf.minimum(y_pred, 0.0)"),
    ("max(y_true, y_pred, 1.0)", "tf.maximum(tf.maximum(y_true, y_pred), 1.0)"),
    ("min([y_true, y_pred])", "tf.minimum(y_true, y_pred)"),
    ("max(i, 1)", "tf.maximum(i, 1)"),
    ("max(y_pred)", "tf.reduce_max(y_pred)"),
    ("max(np.abs(y_pred), 1e-7)", "tf.maximum(tf.abs(y_pred), 1e-7)"),
    # `~`, `&`, `|` of boolean tensors are boolean: averaged in float64
    ("np.mean(~b)", "tf.reduce_mean(tf.cast(~b, tf.float64))"),
    ("np.mean(b & (y_pred > 0))", "tf.reduce_mean(tf.cast(b & (y_pred > 0), tf.float64))"),
]


@pytest.mark.parametrize(("before", "after"), SAFE)
def test_safe_mapping(before, after):
    findings = _findings(before)
    assert findings and all(f.fix and f.fix.applicability == Applicability.SAFE for f in findings)
    assert _fix(before) == after


UNSAFE = [
    ("np.mean(u)", "tf.reduce_mean(u)", "the dtype of `u` is not known"),
    ("np.sum(u)", "tf.reduce_sum(u)", "accumulates integers in int64"),
    ("np.sqrt(u)", "tf.sqrt(u)", "the dtype of `u` is not known"),
    ("np.round(u)", "tf.round(u)", "the dtype of `u` is not known"),
    ("np.maximum(u, 0.5)", "tf.maximum(u, 0.5)", "NumPy promotes integers to float64"),
    (
        "np.maximum(y_pred, n)",
        "tf.maximum(y_pred, n)",
        "`n` is not known to be a tensor or a Python number",
    ),
    ("np.clip(y_pred, 0.0, n)", "tf.clip_by_value(y_pred, 0.0, n)", "are not number literals"),
    ("np.where(u, y_pred, 0.0)", "tf.where(u, y_pred, 0.0)", "`u` is not known to be boolean"),
    ("np.concatenate([y_pred, n])", "tf.concat([y_pred, n], axis=0)", "`n` is not known"),
    ("np.sum(i)", "tf.reduce_sum(tf.cast(i, tf.int64))", "NumPy accumulates unsigned integers"),
    (
        "tf.reduce_sum(y_pred) + np.mean(b)",
        "tf.reduce_sum(y_pred) + tf.reduce_mean(tf.cast(b, tf.float64))",
        "the float64 result meets `tf.reduce_sum(y_pred)`",
    ),
    ("np.power(i, n)", "tf.pow(i, n)", "`n` may be negative"),
    ("max(u, 0.5)", "tf.maximum(u, 0.5)", "the dtype of `u` is not known"),
    ("max(y_pred, n)", "tf.maximum(y_pred, n)", "`n` is not known to be a tensor"),
    # log2: no TensorFlow op; parenthesized where an operator would bind into it
    ("np.log2(y_pred)", "tf.math.log(y_pred) / math.log(2.0)", "can miss an exact power of two"),
    (
        "1.0 / np.log2(y_pred + 1.0)",
        "1.0 / (tf.math.log(y_pred + 1.0) / math.log(2.0))",
        "TensorFlow has no `log2`",
    ),
    (
        "np.log2(y_pred).shape",
        "(tf.math.log(y_pred) / math.log(2.0)).shape",
        "TensorFlow has no `log2`",
    ),
    (
        "-np.log2(y_pred) - 1.0",
        "-(tf.math.log(y_pred) / math.log(2.0)) - 1.0",
        "TensorFlow has no `log2`",
    ),
    (
        "2.0 * np.log2(y_pred)",
        "2.0 * (tf.math.log(y_pred) / math.log(2.0))",
        "TensorFlow has no `log2`",
    ),
]


@pytest.mark.parametrize(("before", "after", "reason"), UNSAFE)
def test_unsafe_mapping(before, after, reason):
    [finding] = _findings(before)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert reason in finding.fix.message
    assert _fix(before) == before, "an unsafe fix applied without --unsafe-fixes"
    assert _fix(before, unsafe=True) == after


REFUSED = [
    ("np.var(y_pred, axis=0, ddof=1)", "only `ddof=0`"),
    ("np.std(y_pred, 0, None, None, 1)", "only `ddof=0`"),
    ("np.sum(y_pred, dtype=np.float64)", "`dtype=` changes the dtype"),
    ("np.mean(y_pred, out=n)", "`out=` writes into an existing array"),
    ("np.mean(y_pred, where=b)", "`where=` masks elements"),
    ("np.max(y_pred, initial=0)", "`initial=` seeds the reduction"),
    ("np.round(y_pred, 2)", "rounds to integers only"),
    ("np.square(y_pred, out=None)", "`out=` has no TensorFlow counterpart"),
    ("np.mean(y_pred, foo=1)", "`foo=` has no TensorFlow counterpart"),
    ("np.mean(y_pred, *n)", "the unpacked argument `*n`"),
    ("np.prod(y_pred, dtype=np.int64)", "`dtype=` changes the dtype"),
    ("np.max(b)", "`b` is boolean"),
    ("np.sqrt(i)", "takes floats only"),
    ("np.floor(i)", "NumPy returns integers unchanged"),
    ("np.maximum(i, 0.5)", "NumPy promotes the result to float64"),
    ("np.clip(y_pred, 1, 0)", "the lower bound exceeds the upper"),
    ("np.maximum(y_pred, i)", "`y_pred` is floating and `i` integer"),
    ("np.concatenate([i, y_pred])", "`i` is integer and `y_pred` floating"),
    ("np.where(b, i, y_pred)", "NumPy promotes them to a common dtype"),
    ("np.stack([b, y_true])", "`b` is boolean and `y_true` floating"),
    ("np.clip(y_pred, None, None)", "both bounds are `None`"),
    ("np.clip(y_pred, -1.0)", "`a_min` is given without `a_max`"),
    ("np.clip(y_pred, a_max=1.0)", "`a_max` is given without `a_min`"),
    ("np.clip(y_pred, a_min=0.0, max=1.0)", "`a_min` is given without `a_max`"),
    ("np.clip(y_pred, 0.0, 1.0, min=0.0)", "both `a_min=` and `min=`"),
    ("np.where(b)", "with one argument returns index arrays"),
    ("np.where(b, 1.0, 0.0)", "neither value is a tensor"),
    ("np.where(y_pred, y_pred, 0.0)", "is a numeric tensor"),
    ("np.concatenate([y_true, y_pred], axis=None)", "`axis=None` flattens"),
    ("np.concatenate([*n, y_pred])", "a starred element"),
    ("np.matmul(y_true, y_pred)", "ranks are not known"),
    ("np.dot(y_true, y_pred)", "ranks are not known"),
    ("np.abs(y_pred).reshape(-1)", "has `.reshape` called or read, NumPy array API"),
    ("float(np.mean(y_pred))", "is passed to `float(...)`, which needs a Python value"),
    ("range(np.argmax(y_pred))", "is passed to `range(...)`"),
    ("np.power(i, -1)", "raises an integer tensor to a negative power"),
    ("np.power(i, 0.5)", "NumPy promotes the result to float64"),
    ("np.log2(i)", "takes floats only"),
    ("np.linalg.norm(y_pred, 2)", "`ord=2`: only the default 2-norm"),
    ("np.linalg.norm(y_pred, ord=1, axis=0)", "`ord=1`: only the default 2-norm"),
    ("np.linalg.norm(y_pred, axis=(0, 1))", "an axis pair picks a matrix norm"),
    ("np.linalg.norm(y_pred, axis=n)", "`axis=n` is not one integer"),
    ("np.linalg.norm(i)", "takes floats only"),
    ("np.argmax(b)", "`b` is boolean"),
    ("np.argmax(y_pred, axis=0, keepdims=True)", "`tf.argmax` has no `keepdims`"),
]

BUILTINS_REFUSED = [
    ("max(i, 0.5)", "`i` is an integer tensor and `0.5` a Python float"),
    ("max(i, y_pred)", "`i` is integer and `y_pred` floating"),
    ("min(y_pred, key=abs)", "`key=` has no TensorFlow counterpart"),
    ("max(y_pred, default=0.0)", "`default=` has no TensorFlow counterpart"),
    ("max(*n, y_pred)", "the unpacked argument `*n`"),
    ("max([*n, y_pred])", "a starred element"),
    ("max(b, y_pred > 1.0)", "is boolean; `tf.maximum` takes numbers"),
]


@pytest.mark.parametrize(("before", "reason"), BUILTINS_REFUSED)
def test_builtin_extremum_refused_with_reason(before, reason):
    [finding] = _findings(before)
    assert finding.fix is None
    assert "compares tensors as Python bools" in finding.message
    assert "not rewritten: " in finding.message and reason in finding.message
    assert _fix(before, unsafe=True) == before


@pytest.mark.parametrize(
    "expr", ["max(n, 1)", "max(len(n), 2)", "min(y_pred.shape[0], 4)", "max(1.0, 2.0) * y_pred"]
)
def test_builtin_extremum_of_python_values_is_left_alone(expr):
    assert _findings(expr) == []


def test_shadowed_builtin_max_is_left_alone():
    source = "from mylib import max\n" + TRACED.format(expr="max(y_pred, 0.0)")
    assert check_source(source, select=SELECT) == []


def test_log2_adds_the_math_import_once_and_uses_an_alias():
    source = TRACED.format(expr="np.log2(y_pred) + np.log2(y_true)")
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed.count("import math\n") == 1
    assert _last_line(fixed) == (
        "tf.math.log(y_pred) / math.log(2.0) + tf.math.log(y_true) / math.log(2.0)"
    )
    aliased = "import math as m\n" + source
    assert _last_line(fix_source(aliased, select=SELECT, unsafe_fixes=True)) == (
        "tf.math.log(y_pred) / m.log(2.0) + tf.math.log(y_true) / m.log(2.0)"
    )


LISTS_OF_TENSORS = [
    ("np.mean([y_true, y_pred])", "`y_true`"),
    ("np.sum((y_pred, 1.0), axis=0)", "`y_pred`"),
    ("np.maximum([y_pred], 0.0)", "`y_pred`"),
]


@pytest.mark.parametrize(("before", "tensor"), LISTS_OF_TENSORS)
def test_a_list_holding_a_tensor_is_reported_without_fix(before, tensor):
    """NumPy stacks the list on the host, which fails on symbolic tensors;
    the dtype of the stacked array depends on all elements (a Python float
    makes float64), so no rewrite is offered."""
    [finding] = _findings(before)
    assert finding.fix is None
    assert f"on a list holding the tensor {tensor}" in finding.message
    assert "not rewritten: NumPy stacks the list" in finding.message
    assert _fix(before, unsafe=True) == before


def test_a_list_of_python_values_is_left_alone():
    assert _findings("np.mean([1.0, 2.0]) + y_pred") == []


@pytest.mark.parametrize(("before", "reason"), REFUSED)
def test_refused_with_reason(before, reason):
    findings = _findings(before)
    assert len(findings) == 1
    [finding] = findings
    assert finding.fix is None
    assert "raises when traced; not rewritten: " in finding.message
    assert reason in finding.message
    assert _fix(before, unsafe=True) == before


LEFT_ALONE = [
    "np.mean(n)",  # not a tensor: NumPy on Python values is fine
    "np.sqrt(2.0) * y_pred",
    "np.mean([1.0, 2.0])",
    "np.concatenate(n)",  # a name, not a list display: not known to hold tensors
    "np.mean(*n)",
    "np.random.normal(size=3)",  # TFR102's business
    "np.float32(1.0) * y_pred",  # not a mapped function
    "np.mean(y_pred.numpy())",  # TFR105's business
    "tf.reduce_mean(y_pred)",
]


@pytest.mark.parametrize("expr", LEFT_ALONE)
def test_left_alone(expr):
    assert _findings(expr) == []


@pytest.mark.parametrize(
    "expr", [before for before, _ in SAFE[:10]] + ["np.mean(np.square(y_true - y_pred))"]
)
def test_not_traced_is_untouched(expr):
    source = NOT_TRACED.format(expr=expr)
    assert check_source(source, select=SELECT) == []
    assert fix_source(source, select=SELECT) == source


@pytest.mark.parametrize(
    ("imports", "call", "expected_call"),
    [
        ("import numpy as np", "np.mean(y_pred)", "tf.reduce_mean(y_pred)"),
        ("import numpy", "numpy.mean(y_pred)", "tf.reduce_mean(y_pred)"),
        ("import numpy as onp", "onp.square(y_pred)", "tf.square(y_pred)"),
        ("from numpy import mean", "mean(y_pred)", "tf.reduce_mean(y_pred)"),
        ("from numpy import mean as avg", "avg(y_pred)", "tf.reduce_mean(y_pred)"),
        (
            "from numpy import clip, log",
            "log(clip(y_pred, 0.1, 1.0))",
            "tf.math.log(tf.clip_by_value(y_pred, 0.1, 1.0))",
        ),
    ],
)
def test_import_spellings(imports, call, expected_call):
    source = (
        f"{imports}\nimport tensorflow as tf\n\n\n@tf.function\ndef f(y_pred):\n    return {call}\n"
    )
    fixed = fix_source(source, select=SELECT)
    assert _last_line(fixed) == expected_call
    # The fix leaves NumPy unused: its import goes.
    assert fixed.startswith("import tensorflow as tf\n")


def test_uses_the_files_tensorflow_alias():
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tfx


        @tfx.function
        def f(y_pred):
            return np.mean(np.log1p(y_pred))
        """
    )
    fixed = fix_source(source, select=SELECT)
    assert _last_line(fixed) == "tfx.reduce_mean(tfx.math.log1p(y_pred))"
    assert "import tensorflow as tf\n" not in fixed


def test_adds_tensorflow_import_once():
    source = textwrap.dedent(
        """\
        import numpy as np
        from tensorflow import keras


        def loss(y_true, y_pred):
            return np.mean(np.abs(y_true - y_pred)) + np.max(np.square(y_pred))


        keras.Sequential().compile(loss=loss)
        """
    )
    fixed = fix_source(source, select=SELECT)
    assert fixed.count("import tensorflow as tf\n") == 1
    assert (
        "return tf.reduce_mean(tf.abs(y_true - y_pred)) + tf.reduce_max(tf.square(y_pred))" in fixed
    )


def test_keras_loss_call_and_nested_function():
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        class Huberish(tf.keras.losses.Loss):
            def call(self, y_true, y_pred):
                err = np.abs(y_true - y_pred)
                return np.mean(np.minimum(err, 1.0))


        @tf.function
        def outer(y_true, y_pred):
            def inner():
                return np.sum(np.square(y_pred))
            return inner()
        """
    )
    fixed, applied, remaining = fix_source_with_findings(source, select=SELECT)
    # `inner` returns the result to a caller the rewrite cannot follow: unsafe
    [unsafe] = remaining
    assert "the result is returned from `inner` to its callers" in unsafe.fix.message
    fixed, applied, remaining = fix_source_with_findings(source, select=SELECT, unsafe_fixes=True)
    assert remaining == []
    assert "err = tf.abs(y_true - y_pred)" in fixed
    assert "return tf.reduce_mean(tf.minimum(err, 1.0))" in fixed
    assert "return tf.reduce_sum(tf.square(y_pred))" in fixed


def test_names_bound_to_rewritten_calls_count_as_tensors():
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(y_true, y_pred):
            p = np.clip(y_pred, 1e-7, 1.0)
            err = np.square(y_true - p)
            return np.mean(np.log(p)) + np.sum(err)
        """
    )
    findings = check_source(source, select=SELECT)
    assert len(findings) == 5
    assert all(f.fix and f.fix.applicability == Applicability.SAFE for f in findings)
    fixed = fix_source(source, select=SELECT)
    assert "p = tf.clip_by_value(y_pred, 1e-7, 1.0)" in fixed
    assert "err = tf.square(y_true - p)" in fixed
    assert "return tf.reduce_mean(tf.math.log(p)) + tf.reduce_sum(err)" in fixed
    assert check_source(fixed, select=SELECT) == []


@pytest.mark.parametrize(
    "binding",
    [
        "p = np.clip(y_pred, 0.0, 1.0)\n    p = n",  # one binding is not a tensor
        "p = np.clip(y_pred, 0.0, 1.0)\n    p += n",  # augmented: unknown
        "p = np.clip(y_pred, 0.0, 1.0)\n    for p in n:\n        pass",
        "p, q = np.clip(y_pred, 0.0, 1.0), n",
        "p = np.clip(y_pred, 0.0, 1.0)\n    with n as p:\n        pass",
        "p = np.clip(y_pred, 0.0, 1.0)\n    import p",
        "p = np.mean(n)",  # NumPy on a value not known to be a tensor
        "p = np.dot(y_true, y_pred)",  # never rewritten: stays NumPy
    ],
)
def test_names_with_other_bindings_are_not_tensors(binding):
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(y_true, y_pred, n: int):
            {binding}
            return np.log(p)
        """
    ).format(binding=binding)
    assert not any("np.log" in f.message for f in check_source(source, select=SELECT))


def test_a_parameter_is_not_inferred_from_its_rebinding():
    source = TRACED.format(expr="n").replace(
        "    return n", "    n = np.abs(y_pred)\n    return np.log(n)"
    )
    assert not any("np.log" in f.message for f in check_source(source, select=SELECT))


def test_multiline_call_keeps_layout_and_comments():
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(y_true, y_pred):
            return np.mean(
                np.square(y_true - y_pred),  # squared error
                axis=-1,  # per sample
            )
        """
    )
    fixed = fix_source(source, select=SELECT)
    assert fixed == source.replace("np.mean(", "tf.reduce_mean(").replace(
        "np.square", "tf.square"
    ).replace("import numpy as np\n", "")


def test_refuses_when_a_dropped_argument_carries_a_comment():
    source = textwrap.dedent(
        """\
        import numpy as np
        import tensorflow as tf


        @tf.function
        def f(y_pred):
            return np.mean(
                y_pred,
                dtype=None,  # explicit default
            )
        """
    )
    [finding] = check_source(source, select=SELECT)
    assert "comments would be lost" in finding.message
    assert fix_source(source, select=SELECT) == source


def test_fix_is_idempotent_over_a_mixed_function():
    source = TRACED.format(
        expr="np.mean(np.square(y_true - y_pred)) + np.sum(i) + np.var(y_pred, ddof=1) + np.mean(u)"
    )
    once = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fix_source(once, select=SELECT, unsafe_fixes=True) == once
    assert _last_line(once) == (
        "tf.reduce_mean(tf.square(y_true - y_pred)) + tf.reduce_sum(tf.cast(i, tf.int64)) "
        "+ np.var(y_pred, ddof=1) + tf.reduce_mean(u)"
    )
    remaining = check_source(once, select=SELECT)
    assert sorted(f.message.split("`")[1] for f in remaining) == ["np.var(...)"]


FOLLOWED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred):
    b = y_true > 0
{body}
"""


@pytest.mark.parametrize(
    ("body", "expected", "applicability"),
    [
        pytest.param(
            "    rate = np.mean(b)\n    return y_pred * rate\n",
            "    rate = tf.reduce_mean(tf.cast(b, y_pred.dtype))\n    return y_pred * rate\n",
            Applicability.SAFE,
            id="named-result-meets-a-tensor",
        ),
        pytest.param(
            "    m = np.mean(y_pred, axis=0)\n    return tf.constant(m) + 1.0\n",
            "    m = tf.reduce_mean(y_pred, axis=0)\n    return m + 1.0\n",
            Applicability.SAFE,
            id="named-result-through-tf-constant",
        ),
        pytest.param(
            "    m = np.max(y_pred)\n    return np.asarray(m, dtype=np.float64)\n",
            "    m = tf.reduce_max(y_pred)\n    return tf.cast(m, tf.float64)\n",
            Applicability.SAFE,
            id="named-result-through-np-asarray",
        ),
        pytest.param(
            "    rate = np.mean(b)\n    return y_pred * rate, y_true + rate\n",
            "    rate = tf.reduce_mean(tf.cast(b, tf.float64))\n"
            "    return y_pred * rate, y_true + rate\n",
            Applicability.UNSAFE,
            id="named-result-meets-two-tensors",
        ),
        pytest.param(
            "    m = np.mean(y_pred)\n    return helper(m)\n",
            "    m = tf.reduce_mean(y_pred)\n    return helper(m)\n",
            Applicability.UNSAFE,
            id="passed-to-an-unknown-function",
        ),
    ],
)
def test_the_result_is_followed_to_its_uses(body, expected, applicability):
    source = FOLLOWED.format(body=body.rstrip("\n"))
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability == applicability
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    after = FOLLOWED.format(body=expected.rstrip("\n"))
    if "np." not in after.replace("import numpy as np\n", "", 1):
        after = after.replace("import numpy as np\n", "", 1)  # the fix leaves NumPy unused
    assert fixed == after
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


def test_a_named_result_that_needs_a_host_value_is_refused():
    source = FOLLOWED.format(body="    n = np.argmax(y_pred)\n    return [1.0, 2.0, 3.0][n]")
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "the result, held in `n`," in finding.message


LIKELY = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x):
    return {expr}
"""


@pytest.mark.parametrize(
    "expr, after",
    [
        ("np.power(x, 2)", "tf.pow(x, 2)"),
        ("np.linalg.norm(x)", "tf.norm(x)"),
        ("max(x, 0.0)", "tf.maximum(x, 0.0)"),
    ],
)
def test_a_parameter_with_no_evidence_is_a_likely_tensor(expr, after):
    """A traced function's parameter is a tensor whenever it is called with
    one, as AutoGraph assumes: reported, with a fix that says it assumes so."""
    source = LIKELY.format(expr=expr)
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "it assumes `x` is a tensor argument" in finding.fix.message
    assert fix_source(source, select=SELECT) == source
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert _last_line(fixed) == after


@pytest.mark.parametrize(
    "function",
    [
        "def f(x=2.0):\n    return np.power(x, 2)",
        "def f(x: float):\n    return np.power(x, 2)",
        "def f(num_steps):\n    return np.power(num_steps, 2)",
        "def f(x):\n    s = tf.constant(x)\n    return s * np.power(x, 2)",
    ],
)
def test_a_parameter_with_python_evidence_is_not_a_likely_tensor(function):
    """A default, an annotation, a name or a use that says Python value."""
    source = LIKELY.replace("def f(x):\n    return {expr}", function)
    assert check_source(source, select=SELECT) == []
