"""What `tf.py_function` does to the Python it is handed, measured: inside
a `Dataset.map` function, the nested function runs eagerly per element
(`k.numpy()` works, and each element gets a fresh NumPy draw), which is why
tfrewrite reports nothing there; called directly, it is traced and fails."""

from __future__ import annotations

import numpy as np
import pytest
from tests.test_eager_callables import LAMBDA, NESTED

from .equivalence import load_module

pytestmark = pytest.mark.tensorflow


def test_a_function_handed_to_py_function_runs_per_element() -> None:
    np.random.seed(0)
    module = load_module(NESTED)
    picks = [tuple(int(v) for v in pair.numpy()) for pair in module.picked.repeat(8)]
    assert len(set(picks)) > 2  # fresh draws, not one sample per trace
    assert all({a, b} <= {1, 2, 3, 4, 5, 6, 7, 8} and a != b for a, b in picks)


def test_the_same_function_called_directly_fails_to_trace() -> None:
    source = NESTED.replace(
        "return tf.py_function(draw, inp=[key], Tout=tf.int64)", "return draw(key)"
    )
    with pytest.raises(AttributeError):  # `k.numpy()` on a symbolic tensor
        load_module(source)


def test_a_lambda_handed_to_numpy_function_runs_on_each_element() -> None:
    """The lambda's `.numpy()` works on each element; the draw beside the
    call (TFR102) is made once, at trace time: the same offset every time."""
    module = load_module(LAMBDA)
    sizes = [int(v) for v in module.loaded.repeat(3)]
    offset = sizes[0] - 1
    assert sizes == [1 + offset, 2 + offset] * 3


EAGER_GUARDED = """
import tensorflow as tf

seen = []


def step(x):
    if tf.executing_eagerly() and tf.reduce_sum(x) > 0:
        seen.append(float(x.numpy().sum()))
    if not tf.executing_eagerly():
        x = x * 2.0
    else:
        seen.append(bool(not tf.reduce_all(x > 0)))
    return x
"""


def test_a_branch_only_eager_execution_takes_never_runs_traced() -> None:
    import tensorflow as tf

    module = load_module(EAGER_GUARDED)
    x = tf.constant([1.0, 2.0])
    assert module.step(x).numpy().tolist() == [1.0, 2.0]
    assert module.seen == [3.0, False]
    traced = tf.function(module.step, autograph=False)
    assert traced(x).numpy().tolist() == [2.0, 4.0]  # `.numpy()` and `not` never ran
    assert module.seen == [3.0, False]
