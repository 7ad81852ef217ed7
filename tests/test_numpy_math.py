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
# dtype, and `n` unknown (not a tensor).
TRACED = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred, n):
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
    ("np.sum(i)", "accumulates integers in int64"),
    ("np.prod(b)", "`b` is boolean"),
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
    ("np.mean(y_pred).astype(np.float32)", "`.astype(...)` is NumPy array API"),
    ("np.abs(y_pred).reshape(-1)", "`.reshape` is NumPy array API"),
]


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
        def f(y_true, y_pred, n):
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
        "tf.reduce_mean(tf.square(y_true - y_pred)) + np.sum(i) + np.var(y_pred, ddof=1) "
        "+ tf.reduce_mean(u)"
    )
    remaining = check_source(once, select=SELECT)
    assert sorted(f.message.split("`")[1] for f in remaining) == ["np.sum(...)", "np.var(...)"]
