"""TFR103 under TensorFlow: NumPy array methods after `.numpy()` in a print.

The original runs eagerly (where `.numpy()` has a value); its rewrite runs
traced, with and without AutoGraph, and prints on every call what the
original printed (compared as `tests/tf/test_print_rewrites.py` compares:
the same text around the numbers, the same numbers as float32). The refused
methods are shown to print differently from the tensor `tf.print` would show.
"""

from __future__ import annotations

import sys
import textwrap

import pytest
import tensorflow as tf

from .equivalence import load_module, python_function, run_eagerly
from .fdcapture import capture_fds
from .test_print_rewrites import assert_same_printed, printed, rewrite

CALLS = [
    (tf.constant([[1.5, -2.25, 3.0], [0.5, 4.0, -1.0]]),),
    (tf.constant([[0.1, 0.2, 0.3], [-0.7, 0.0, 2.5]]),),
    (tf.constant([[-3.0, -1.0, -0.5], [1e-3, 7.25, 2.0]]),),
]

FOLDED = """\
import tensorflow as tf

@tf.function
def step(x: tf.Tensor):
    y = tf.abs(tf.cast(x, tf.float32))
    loss = tf.reduce_mean(y)
    print("max", y.numpy().max())
    print("column means", y.numpy().mean(axis=0))
    print("chain", y.numpy().max(0).sum())
    print("sum", float(y.numpy().sum()))
    print("truncated", int(y.numpy().sum()))
    print("loss", loss.numpy().item(), loss.numpy().tolist())
    print("max", y.numpy().max().item())
    print("first row", y.numpy()[0], "row maxima", y.numpy().max(axis=1)[0])
    print(f"max={y.numpy().max()}")
    print("std", y.numpy().std(), "min", y.numpy().min(axis=1))
    return loss
"""

FORMATTED = """\
import tensorflow as tf

@tf.function
def step(x: tf.Tensor):
    y = tf.cast(x, tf.float32) - 1.0
    print("mean %.3f" % y.numpy().mean())
    print(f"sum {y.numpy().sum():.2f}, max {y.numpy().max():.4f}")
    print("truncated", int(y.numpy().sum()))
    return y
"""


def _assert_prints_as_eager(source: str, unsafe: bool) -> str:
    """Rewrite `source`, then check the rewrite traced (with and without
    AutoGraph) prints on every call what the original printed eagerly."""
    rewritten_source = rewrite(source, unsafe=unsafe)
    assert ".numpy()" not in rewritten_source
    original = load_module(textwrap.dedent(source)).step
    expected = printed(lambda *a: run_eagerly(original, *a), CALLS)
    for autograph in (True, False):
        traced = tf.function(
            python_function(load_module(rewritten_source).step), autograph=autograph
        )
        assert_same_printed(expected, printed(traced, CALLS))
    return rewritten_source


def test_reductions_item_and_indexing_print_as_eager() -> None:
    rewritten = _assert_prints_as_eager(FOLDED, unsafe=False)
    assert 'tf.print("max", tf.reduce_max(y), output_stream=sys.stdout)' in rewritten
    assert "tf.cast(tf.reduce_sum(y), tf.int64)" in rewritten


def test_formatted_reductions_print_as_eager() -> None:
    """A precision on a folded reduction (unsafe: it assumes a float tensor),
    and `int` of a negative sum, which truncates toward zero both ways."""
    rewritten = _assert_prints_as_eager(FORMATTED, unsafe=True)
    assert "tf.strings.as_string(tf.reduce_mean(y), precision=3)" in rewritten


def test_an_array_method_left_on_the_tensor_fails_traced() -> None:
    """What printing `y.max()` for `y.numpy().max()` did: a tensor has no
    NumPy methods."""
    with capture_fds(), pytest.raises(AttributeError):
        tf.function(lambda y: tf.print(y.max()))(CALLS[0][0])


def _eager_and_tf_print(value, shown) -> tuple[str, str]:
    """What Python `print` shows for `value(t)` eagerly, and what `tf.print`
    shows for `shown(t)` traced."""
    tensor = tf.constant([0.5, 1.0])
    (python_line,) = printed(lambda: print(value(tensor)), [()])

    @tf.function
    def traced(t):
        tf.print(shown(t), output_stream=sys.stdout)

    (tf_line,) = printed(lambda: traced(tensor), [()])
    return python_line, tf_line


def test_tolist_of_an_array_prints_a_python_list() -> None:
    """Why `.tolist()` of an array is refused: a Python list, commas and all."""
    python_line, tf_line = _eager_and_tf_print(lambda t: t.numpy().tolist(), lambda t: t)
    assert python_line == "[0.5, 1.0]"
    assert tf_line == "[0.5 1]"


def test_item_of_a_one_element_array_prints_a_scalar() -> None:
    """Why `.item()` of a value not known to be a scalar is refused: shape
    [1] prints as a scalar through `.item()`, as `[0.5]` through tf.print."""
    python_line, tf_line = _eager_and_tf_print(lambda t: t[:1].numpy().item(), lambda t: t[:1])
    assert python_line == "0.5"
    assert tf_line == "[0.5]"
