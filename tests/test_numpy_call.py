"""TFR105: `.numpy()`, `float(x)`, `int(x)` and `.item()` on tensors in traced code.

Before/after source tests for the fixes (the host value followed to its uses;
`tf.stop_gradient` where the value is differentiated, safe; the tensor itself
elsewhere, unsafe), the findings without a fix and their reasons, and the code
the rule must leave alone."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability

SELECT = ["TFR105"]

# A loss by its signature: `y_true`/`y_pred` are tensors and what it computes
# is differentiated. `n` is unknown.
LOSS = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(y_true, y_pred, n):
    return {expr}
"""

# A plain traced function: `t` is a float tensor, nothing shows a gradient.
PLAIN = """\
import numpy as np
import tensorflow as tf


@tf.function
def f(x, n):
    t = tf.abs(x)
{body}
"""

NOT_TRACED = LOSS.replace("@tf.function\n", "")


def _last_line(source: str) -> str:
    return source.rstrip("\n").splitlines()[-1].strip().removeprefix("return ")


def _fix(expr: str, unsafe: bool = True) -> str:
    return _last_line(fix_source(LOSS.format(expr=expr), select=SELECT, unsafe_fixes=unsafe))


def _findings(expr: str):
    return check_source(LOSS.format(expr=expr), select=SELECT)


# In a loss: the host round trip cut the gradient; `tf.stop_gradient` keeps it cut.
IN_A_LOSS = [
    ("tf.reduce_sum(y_pred.numpy())", "tf.reduce_sum(tf.stop_gradient(y_pred))"),
    ("tf.reduce_sum(y_pred.numpy(), axis=0)", "tf.reduce_sum(tf.stop_gradient(y_pred), axis=0)"),
    (
        "tf.reduce_mean(input_tensor=y_pred.numpy())",
        "tf.reduce_mean(input_tensor=tf.stop_gradient(y_pred))",
    ),
    (
        "tf.reduce_sum((y_true - y_pred).numpy())",
        "tf.reduce_sum(tf.stop_gradient(y_true - y_pred))",
    ),
    ("tf.reduce_sum((y_pred.numpy()))", "tf.reduce_sum((tf.stop_gradient(y_pred)))"),
    (
        "tf.maximum(tf.abs(y_pred).numpy(), 0.0)",
        "tf.maximum(tf.stop_gradient(tf.abs(y_pred)), 0.0)",
    ),
    ("tf.convert_to_tensor(y_pred.numpy())", "tf.stop_gradient(y_pred)"),
    ("tf.constant(y_pred.numpy())", "tf.stop_gradient(y_pred)"),
    ("tf.constant(y_pred.numpy(), tf.float64)", "tf.cast(tf.stop_gradient(y_pred), tf.float64)"),
    ("tf.keras.ops.sum(y_pred.numpy())", "tf.keras.ops.sum(tf.stop_gradient(y_pred))"),
    ("y_pred.numpy()", "tf.stop_gradient(y_pred)"),
    ("float(y_pred)", "tf.stop_gradient(tf.cast(y_pred, tf.float32))"),
    ("y_pred.numpy() * 2", "tf.stop_gradient(y_pred) * 2"),
    ("y_pred.numpy()[0]", "tf.stop_gradient(y_pred)[0]"),
    ("y_pred - y_true.numpy()", "y_pred - tf.stop_gradient(y_true)"),
    ("np.mean(y_pred.numpy())", "np.mean(tf.stop_gradient(y_pred))"),  # TFR104 rewrites it
    (
        "y_pred * float(tf.reduce_mean(y_true))",
        "y_pred * tf.stop_gradient(tf.cast(tf.reduce_mean(y_true), y_pred.dtype))",
    ),
    ("tf.zeros([int(tf.shape(y_pred)[0])])", "tf.zeros([tf.shape(y_pred)[0]])"),
    ("y_pred[int(tf.argmax(y_true))]", "y_pred[tf.argmax(y_true)]"),
    ("y_pred[int(tf.reduce_max(y_true))]", "y_pred[tf.cast(tf.reduce_max(y_true), tf.int32)]"),
]


@pytest.mark.parametrize(("before", "after"), IN_A_LOSS)
def test_a_host_read_in_a_loss_becomes_a_gradient_stop(before, after):
    [finding] = _findings(before)
    assert finding.fix is not None and finding.fix.applicability == Applicability.SAFE
    assert _fix(before, unsafe=False) == after
    assert _findings(after) == []


PLAIN_FIXES = [
    pytest.param(
        "    return tf.reduce_sum(t.numpy())",
        "    return tf.reduce_sum(t)",
        "gradients now flow through `t`",
        id="into-an-op",
    ),
    pytest.param(
        "    v = t.numpy()\n    return tf.reduce_sum(v) * 2.0",
        "    v = t\n    return tf.reduce_sum(v) * 2.0",
        "gradients now flow",
        id="through-a-name",
    ),
    pytest.param(
        "    return tf.reduce_mean(model(x).numpy())",
        "    return tf.reduce_mean(model(x))",
        "it assumes `model(x)` is a tensor",
        id="model-output",
    ),
    pytest.param(
        "    return helper(t.numpy())",
        "    return helper(t)",
        "is passed to `helper(...)`, which is not known to accept a tensor",
        id="unknown-callee",
    ),
    pytest.param(
        "    return x * float(tf.reduce_sum(t))",
        "    return x * tf.cast(tf.reduce_sum(t), tf.float32)",
        "the Python number meets `x`, whose dtype it would take",
        id="float-meets-unknown",
    ),
]


@pytest.mark.parametrize(("before", "after", "reason"), PLAIN_FIXES)
def test_elsewhere_the_tensor_itself_is_an_unsafe_fix(before, after, reason):
    source = PLAIN.format(body=before)
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert reason in finding.fix.message
    assert fix_source(source, select=SELECT) == source
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed == PLAIN.format(body=after)
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


PLAIN_SAFE = [
    pytest.param(
        "    tf.print('t', t.numpy(), float(tf.reduce_sum(t)))\n    return t",
        "    tf.print('t', t, tf.reduce_sum(t))\n    return t",
        id="printed-by-tf-print",
    ),
    pytest.param(
        "    k = int(tf.shape(x)[0])\n    return tf.zeros([k])",
        "    k = tf.shape(x)[0]\n    return tf.zeros([k])",
        id="int-into-a-shape",
    ),
    pytest.param(
        "    with tf.GradientTape() as tape:\n        y = tf.reduce_sum(t.numpy() * x)\n"
        "    return tape.gradient(y, x)",
        "    with tf.GradientTape() as tape:\n        y = tf.reduce_sum(tf.stop_gradient(t) * x)\n"
        "    return tape.gradient(y, x)",
        id="inside-a-tape",
    ),
]


@pytest.mark.parametrize(("before", "after"), PLAIN_SAFE)
def test_safe_where_no_gradient_changes(before, after):
    source = PLAIN.format(body=before)
    findings = check_source(source, select=SELECT)
    assert findings and all(f.fix and f.fix.applicability == Applicability.SAFE for f in findings)
    fixed = fix_source(source, select=SELECT)
    assert fixed == PLAIN.format(body=after)
    assert check_source(fixed, select=SELECT) == []


NO_FIX = [
    ("tf.reduce_sum(*y_pred.numpy(), axis=0)", "is unpacked with `*`"),
    ("len(y_pred.numpy())", "is passed to `len(...)`, which needs a Python value"),
    ("y_pred.numpy().tolist()", "`.tolist` called or read"),
    ("int(tf.shape(y_pred)[0]) * y_pred", "the Python int meets `y_pred`"),
    ("y_pred.item()", "tensors have no `.item()`"),
    ("tf.reduce_max(y_pred).item()", "tensors have no `.item()`"),
    ("f'{y_pred.numpy()}'", "is formatted into a string"),
    ("print('Tracing with', y_pred.numpy())", "printed by Python `print`"),
    ("'%s' % y_pred.numpy()", "is formatted into a string"),
    ("range(int(tf.reduce_max(y_pred)))", "is passed to `range(...)`"),
]


@pytest.mark.parametrize(("before", "reason"), NO_FIX)
def test_finding_without_fix(before, reason):
    findings = _findings(before)
    assert findings
    assert all(f.fix is None for f in findings)
    assert any(reason in f.message for f in findings), [f.message for f in findings]
    assert _fix(before) == before


def test_a_python_print_of_the_value_is_left_to_tfr103():
    """A host read written inside the print's arguments is TFR103's: it
    prints the tensor in its place (so a train step with
    `print(f"loss {loss.numpy():.3f}")` is decorated in the same run)."""
    source = PLAIN.format(body="    print('t', t.numpy())\n    return t")
    assert check_source(source, select=SELECT) == []
    [finding] = check_source(source, select=["TFR103", "TFR105"])
    assert finding.code == "TFR103" and finding.fix is not None
    fixed = fix_source(source, select=["TFR103", "TFR105"])
    assert "tf.print('t', t, summarize=-1, output_stream=sys.stdout)" in fixed


def test_a_value_needed_as_a_python_int_is_refused_with_the_name():
    source = PLAIN.format(
        body="    k = int(tf.shape(x)[0])\n    for i in range(k):\n        x = x * 0.5\n"
        "    return x"
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is None
    assert "the value, held in `k`, is passed to `range(...)`" in finding.message


LEFT_ALONE = [
    "float(n)",
    "int(len(y_pred.shape))",
    "float(y_pred.shape[0])",  # a static dimension, not a tensor
    "y_pred.numpy(1)",  # not the tensor method
    "n.item()",
    "'text'.numpy()",
    "tf.reduce_sum(y_pred)",
]


@pytest.mark.parametrize("expr", LEFT_ALONE)
def test_left_alone(expr):
    assert _findings(expr) == []


@pytest.mark.parametrize("expr", [before for before, _ in IN_A_LOSS] + [e for e, _ in NO_FIX])
def test_not_traced_is_untouched(expr):
    source = NOT_TRACED.format(expr=expr)
    assert check_source(source, select=SELECT) == []


def test_uses_the_files_tensorflow_alias():
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
    assert all("`tfx.stop_gradient(" in f.fix.message for f in findings if f.fix)
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "return tfx.reduce_sum(y) + tfx.cast(tfx.reduce_max(y), tfx.float32)" in fixed
    assert "import tensorflow as tf\n" not in fixed


def test_adds_the_tensorflow_import_for_a_gradient_stop():
    source = textwrap.dedent(
        """\
        from tensorflow import keras


        def loss(y_true, y_pred):
            w = keras.ops.abs(y_true).numpy()
            return keras.ops.mean(w * (y_true - y_pred))


        keras.Sequential().compile(loss=loss)
        """
    )
    fixed = fix_source(source, select=SELECT)
    assert "import tensorflow as tf\n" in fixed
    assert "w = tf.stop_gradient(keras.ops.abs(y_true))" in fixed


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
    assert findings[0].fix is not None and findings[0].fix.applicability == Applicability.SAFE
    assert findings[1].fix is not None and findings[1].fix.applicability == Applicability.UNSAFE
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert "weights = tf.stop_gradient(tf.abs(y_true))\n" in fixed
    assert "return tf.reduce_sum(y_pred)\n" in fixed
    assert fix_source(fixed, select=SELECT, unsafe_fixes=True) == fixed


def test_a_value_stored_into_a_variable_needs_no_gradient_stop():
    source = PLAIN.format(
        body="    with tf.GradientTape() as tape:\n        lr = t * 0.1\n"
        "        opt.lr.assign(lr.numpy())\n    return t"
    )
    [finding] = check_source(source, select=SELECT)
    assert finding.fix is not None
    assert "opt.lr.assign(lr)" in fix_source(source, select=SELECT, unsafe_fixes=True)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(
            "    return step.numpy(), t.numpy()",
            "    return step.read_value(), t",
            id="module-variable-returned",
        ),
        pytest.param(
            "    return opt.lr.numpy()",
            "    return tf.identity(opt.lr)",
            id="attribute-returned",
        ),
        pytest.param(
            "    return tf.reduce_sum(opt.lr.numpy())",
            "    return tf.reduce_sum(opt.lr)",
            id="attribute-read-by-an-op",
        ),
    ],
)
def test_a_variable_returned_is_a_snapshot(body, expected):
    """`v.numpy()` copies the value; `v` itself would change with later assignments."""
    header = "step = tf.Variable(0)\n\n\n"
    source = PLAIN.format(body=body).replace("@tf.function", header + "@tf.function")
    fixed = fix_source(source, select=SELECT, unsafe_fixes=True)
    assert fixed == PLAIN.format(body=expected).replace("@tf.function", header + "@tf.function")


def test_a_host_value_printed_by_a_rewritten_print_is_fixed_with_it():
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        @tf.function
        def f(x):
            loss = tf.reduce_sum(x)
            loss_value = loss.numpy()
            print("loss %.4f" % loss_value)
            return loss
        """
    )
    [finding] = check_source(source, select=["TFR105"])
    assert finding.fix is not None and finding.fix.applicability == Applicability.UNSAFE
    assert "TFR103 rewrites into `tf.print` in the same run" in finding.fix.message
    fixed = fix_source(source, select=["TFR103", "TFR105"], unsafe_fixes=True)
    assert "loss_value = loss\n" in fixed and "print(" not in fixed.replace("tf.print(", "")


def test_a_host_value_printed_by_a_print_that_stays_python_is_refused():
    source = textwrap.dedent(
        """\
        import tensorflow as tf


        @tf.function
        def f(x, *rest):
            loss = tf.reduce_sum(x)
            loss_value = loss.numpy()
            print("loss", loss_value, *rest)
            return loss
        """
    )
    [finding] = check_source(source, select=["TFR105"])
    assert finding.fix is None and "printed by Python `print`" in finding.message
