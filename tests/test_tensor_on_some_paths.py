"""A name bound to a tensor on one path and to a Python value on another
(`n = tf.shape(x)[1]` when the width is dynamic, `n = x.shape[1]` when it is
not) is a tensor in the traces that take the first path: a Python `if` on
it needs AutoGraph there (TFR101). It is reported without a fix: in the
traces that take the other path the condition is a Python bool, which
`tf.cond` rejects. A name that is a Python value on every path stays one.
Other rules' fixes never rest on it (`TensorFacts.some_paths` is for
findings only)."""

from __future__ import annotations

from tfrewrite.api import check_source, fix_source

SOURCE = """
import tensorflow as tf


def scale(x, dynamic):
    if dynamic:
        n = tf.shape(x)[1]
    else:
        n = {static}
    if n > 3:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


@tf.function
def step(x):
    return scale(x, True) + scale(x, False)
"""


def _source(static: str = "x.shape[1]") -> str:
    return SOURCE.format(static=static).lstrip()


def test_a_tensor_on_one_path_makes_the_if_need_autograph() -> None:
    findings = check_source(_source(), select=["TFR101"])
    assert [f.start.line for f in findings] == [9]
    assert findings[0].fix is None
    assert "`n` is a tensor on some paths to it and a Python value on others" in (
        findings[0].message
    )
    assert fix_source(_source(), select=["TFR101"], unsafe_fixes=True) == _source()


def test_python_values_on_every_path_are_no_tensor() -> None:
    source = _source().replace("n = tf.shape(x)[1]", "n = len(x)")
    assert check_source(source, select=["TFR101"]) == []


def test_a_later_binding_on_every_path_replaces_the_branches() -> None:
    source = _source().replace("    if n > 3:", "    n = 4\n    if n > 3:")
    assert check_source(source, select=["TFR101"]) == []
