"""TFR103: NumPy array methods after `.numpy()` in a traced print.

The rewrite prints the tensor in place of its host read, so what follows the
read must work on a tensor and print what the array's method printed: the
reductions TFR105 folds become TensorFlow's (`y.numpy().max()` prints
`tf.reduce_max(y)`, never `y.max()`), `.item()` / `.tolist()` of a scalar
print the tensor, and a method with no faithful TensorFlow form is refused.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from tfrewrite.api import check_source, fix_source
from tfrewrite.findings import Applicability


def traced(body: str, prefix: str = "tf.print") -> str:
    """`body` inside `@tf.function def f(...)`: `y` is a float32 tensor,
    `loss` a float32 scalar, `n` an int32 tensor, `z` a parameter with no
    evidence either way."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return (
        "import sys\nimport tensorflow as tf\n\n@tf.function\n"
        "def f(x: tf.Tensor, z):\n"
        "    y = tf.abs(tf.cast(x, tf.float32))\n"
        "    n = tf.cast(x, tf.int32)\n"
        "    loss = tf.reduce_mean(y)\n"
        f"{body}\n"
        "    return loss\n"
    )


def fix(source: str, unsafe: bool = False) -> str:
    return fix_source(source, select=["TFR103"], unsafe_fixes=unsafe)


def findings(source: str):
    return check_source(source, select=["TFR103"])


def assert_rewrites(before: str, after: str, unsafe: bool = False) -> None:
    source, expected = traced(before), traced(after)
    fixed = fix(source, unsafe)
    assert fixed == expected
    assert fix(fixed, unsafe) == fixed
    assert findings(fixed) == []
    if unsafe:
        assert fix(source) == source, "the fix is unsafe: not applied without --unsafe-fixes"


SAFE = [
    pytest.param(
        'print("max", y.numpy().max())',
        'tf.print("max", tf.reduce_max(y), output_stream=sys.stdout)',
        id="max",
    ),
    pytest.param(
        'print("mean", y.numpy().mean(axis=0))',
        'tf.print("mean", tf.reduce_mean(y, axis=0), summarize=-1, output_stream=sys.stdout)',
        id="mean-axis",
    ),
    pytest.param(
        "print(y.numpy().max(0).sum())",
        "tf.print(tf.reduce_sum(tf.reduce_max(y, 0)), output_stream=sys.stdout)",
        id="chain",
    ),
    pytest.param(
        'print("sum", float(y.numpy().sum()))',
        'tf.print("sum", tf.reduce_sum(y), output_stream=sys.stdout)',
        id="float-of-reduction",
    ),
    pytest.param(
        'print("sum", int(y.numpy().sum()))',
        'tf.print("sum", tf.cast(tf.reduce_sum(y), tf.int64), output_stream=sys.stdout)',
        id="int-of-float-reduction",
    ),
    pytest.param(
        'print("top", int(n.numpy().max()))',
        'tf.print("top", tf.reduce_max(n), output_stream=sys.stdout)',
        id="int-of-integer-max",
    ),
    pytest.param(
        'print("loss", loss.numpy().item())',
        'tf.print("loss", loss, output_stream=sys.stdout)',
        id="item-of-scalar",
    ),
    pytest.param(
        'print("loss", loss.numpy().tolist())',
        'tf.print("loss", loss, output_stream=sys.stdout)',
        id="tolist-of-scalar",
    ),
    pytest.param(
        'print("max", y.numpy().max().item())',
        'tf.print("max", tf.reduce_max(y), output_stream=sys.stdout)',
        id="item-of-full-reduction",
    ),
    pytest.param(
        'print("first", y.numpy()[0])',
        'tf.print("first", y[0], summarize=-1, output_stream=sys.stdout)',
        id="index",
    ),
    pytest.param(
        'print("first", y.numpy().max(axis=1)[0])',
        'tf.print("first", tf.reduce_max(y, axis=1)[0], summarize=-1, output_stream=sys.stdout)',
        id="index-of-reduction",
    ),
    pytest.param(
        'print(f"max={y.numpy().max()}")',
        'tf.print("max=", tf.reduce_max(y), sep="", output_stream=sys.stdout)',
        id="f-string-field",
    ),
    pytest.param(
        'print(loss, "rank", y.numpy().ndim)',
        'tf.print(loss, "rank", y.ndim, output_stream=sys.stdout)',
        id="ndim",
    ),
    pytest.param(
        'print("max", (y * 2).numpy().max())',
        'tf.print("max", tf.reduce_max(y * 2), output_stream=sys.stdout)',
        id="parenthesized-receiver",
    ),
]


@pytest.mark.parametrize(("before", "after"), SAFE)
def test_array_method_after_host_read_is_folded(before: str, after: str) -> None:
    assert_rewrites(before, after)


UNSAFE = [
    pytest.param(
        'print("mean %.2f" % y.numpy().mean())',
        'tf.print(tf.strings.join(["mean ", tf.strings.as_string(tf.reduce_mean(y), '
        "precision=2)]), output_stream=sys.stdout)",
        "assumes a floating-point tensor",
        id="percent-format",
    ),
    pytest.param(
        'print(f"mean {y.numpy().mean():.3f}")',
        'tf.print(tf.strings.join(["mean ", tf.strings.as_string(tf.reduce_mean(y), '
        "precision=3)]), output_stream=sys.stdout)",
        "assumes a floating-point tensor",
        id="f-string-spec",
    ),
    pytest.param(
        'print("max", z.numpy().max())',
        'tf.print("max", tf.reduce_max(z), output_stream=sys.stdout)',
        "the dtype of `z` is not known",
        id="unknown-dtype",
    ),
]


@pytest.mark.parametrize(("before", "after", "note"), UNSAFE)
def test_array_method_fold_resting_on_an_assumption_is_unsafe(
    before: str, after: str, note: str
) -> None:
    source = traced(before)
    fixed = fix(source, unsafe=True)
    # Layout aside (a long `tf.print` is split one argument per line).
    assert ast.dump(ast.parse(fixed)) == ast.dump(ast.parse(traced(after)))
    assert fix(fixed, unsafe=True) == fixed
    assert fix(source) == source
    (finding,) = findings(source)
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert note in finding.fix.message


REFUSED = [
    pytest.param(
        'print("values", y.numpy().tolist())',
        "`y.numpy().tolist()` prints a Python list",
        id="tolist-of-array",
    ),
    pytest.param(
        'print("value", y.numpy().item())',
        "`y.numpy().item()` needs a one-element array",
        id="item-of-array",
    ),
    pytest.param(
        'print("value", y.numpy()[0].item())',
        "`y.numpy()[0].item()` needs a one-element array",
        id="item-of-indexed-array",
    ),
    pytest.param(
        'print("value", y.numpy().item(0))',
        "`y.numpy().item(0)` is called with arguments",
        id="item-with-arguments",
    ),
    pytest.param(
        'print("ints", y.numpy().astype("int32"))',
        '`y.numpy().astype("int32")` calls a NumPy array method a tensor does not have',
        id="astype",
    ),
    pytest.param(
        'print("argmax", y.numpy().argmax())',
        "`y.numpy().argmax()` calls a NumPy array method a tensor does not have",
        id="argmax",
    ),
    pytest.param(
        'print("t", y.numpy().T)',
        "`y.numpy().T` reads a NumPy array attribute a tensor does not have",
        id="transpose-attribute",
    ),
    pytest.param(
        "print(loss, y.numpy().shape)",
        "`y.numpy().shape` is the NumPy array's `shape`",
        id="shape-beside-a-value",
    ),
    pytest.param(
        'print("some", y.numpy()[[0, 2]])',
        "`y.numpy()[[0, 2]]` indexes the array with a list or a mask",
        id="list-index",
    ),
    pytest.param(
        'print("positive", y.numpy()[y.numpy() > 0])',
        "`y.numpy()[y.numpy() > 0]` indexes the array with a list or a mask",
        id="mask-index",
    ),
    pytest.param(
        'print("total", n.numpy().sum())',
        "`n` is an integer tensor: NumPy's `.sum()` computes it in int64",
        id="integer-sum",
    ),
    pytest.param(
        'print("mean", y.numpy().mean(dtype="float64"))',
        "`.mean(...)` is called with `dtype=`",
        id="reduction-argument",
    ),
]


@pytest.mark.parametrize(("body", "reason"), REFUSED)
def test_array_method_without_a_tensorflow_form_is_refused(body: str, reason: str) -> None:
    source = traced(body)
    assert fix(source, unsafe=True) == source
    (finding,) = findings(source)
    assert finding.fix is None
    assert "not rewritten: " + reason in finding.message, finding.message


def test_static_facts_of_the_array_alone_stay_a_trace_time_message() -> None:
    """`y.numpy().shape` alone prints no value: TFR103 leaves it (TFR105
    reports the host read)."""
    assert findings(traced('print("shape", y.numpy().shape)')) == []


def test_formatting_inside_tf_print_folds_the_reduction() -> None:
    assert_rewrites(
        'tf.print("max %s" % y.numpy().max())',
        'tf.print("max ", tf.reduce_max(y), sep="")',
    )
