"""What a module-level helper returns, for the arguments a traced function
hands it (`facts/tensors.py`, `TensorFacts._helper_result_kind`): `half(x)`
for `def half(x): return x * 0.5` is a tensor when `x` is one. Rules then
see NumPy math, conditions and `.numpy()` on a helper's result as they see
them on the tensor itself."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source, fix_source

HELPER = """
import numpy as np
import tensorflow as tf


def half(x):
    return x * 0.5


def offset():
    return 3.0


def depth(n):
    if n <= 0:
        return 0
    return depth(n - 1) + 1


@tf.function
def magnitude(x):
    return np.abs({call})


magnitude(tf.ones(3))
"""


def _codes(call: str, code: str = "TFR104") -> list[str]:
    source = textwrap.dedent(HELPER).replace("{call}", call)
    return [f.code for f in check_source(source, select=[code])]


def test_numpy_math_on_a_helpers_tensor_result_is_found_and_fixed() -> None:
    assert _codes("half(x)") == ["TFR104"]
    fixed = fix_source(HELPER.replace("{call}", "half(x)"), select=["TFR104"])
    assert "return tf.abs(half(x))" in fixed


def test_a_helper_returning_a_python_number_is_not_a_tensor() -> None:
    assert _codes("offset()") == []


def test_a_recursive_helper_is_left_unknown() -> None:
    assert _codes("depth(3)") == []


MUTUALLY_RECURSIVE = """
import numpy as np
import tensorflow as tf


def outer(x, n):
    if n > 0:
        w = inner(x, n - 1)
        return w
    return x


def inner(x, n):
    z = outer(x * 2.0, n)
    return z


@tf.function
def magnitude(x):
    return np.abs(outer(x, 3))
"""


def test_helpers_calling_each_other_through_locals_are_left_unknown() -> None:
    """`outer` binds what `inner` returns, which binds what `outer` returns:
    the facts of each helper are built while its caller's are, and the cycle
    is seen there too (the file is checked, not given up as too deep)."""
    assert [f.code for f in check_source(MUTUALLY_RECURSIVE, select=["TFR104"])] == []


def test_a_condition_on_a_helpers_tensor_result_is_a_tensor_if() -> None:
    source = """
import tensorflow as tf


def energy(x):
    return tf.reduce_sum(x * x)


@tf.function
def clip(x):
    if energy(x) > 1.0:
        x = x / 2.0
    return x


clip(tf.ones(3))
"""
    assert [f.code for f in check_source(source, select=["TFR101"])] == ["TFR101"]


UNPACKED = """
import tensorflow as tf


def split_scores(scores):
    return tf.nn.sigmoid(scores), RETURNED


@tf.function
def count_confident(scores):
    count = tf.constant(0)
    probs, size = split_scores(scores)
    for j in tf.range(size):
        if probs[j] > 0.5:
            count += 1
    return count
"""


def test_an_element_of_a_tuple_a_helper_returns_is_what_it_returns_there() -> None:
    """`probs, size = split_scores(scores)`: `probs` is the helper's first
    element, a tensor; the second is what the helper puts there."""
    source = textwrap.dedent(UNPACKED.replace("RETURNED", "tf.shape(scores)[0]"))
    assert [(f.code, f.start.line) for f in check_source(source, select=["TFR101"])] == [
        ("TFR101", 14)
    ]


def test_a_helper_returning_something_else_leaves_the_elements_unknown() -> None:
    source = textwrap.dedent(
        UNPACKED.replace("return tf.nn.sigmoid(scores), RETURNED", "return [scores] * 2")
    )
    assert check_source(source, select=["TFR101"]) == []
