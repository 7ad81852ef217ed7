"""TFR207: an `except` clause for an error TensorFlow's ops raise, in code
that runs traced. A loss helper a traced step calls updates a tensor in a
`try` and falls back when the indices are out of range; traced, the `try`
only builds the op, and its error is raised when the graph runs. Reported
wherever the helper runs traced; left alone in eager code and for Python
errors."""

from __future__ import annotations

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf
{imports}

def scatter_loss(targets, indices, values):
    try:
        updated = tf.tensor_scatter_nd_update(targets, indices, values)
    except {caught}:
        updated = targets
    return tf.reduce_mean(updated)


{decorator}
def step(targets, indices, values):
    return scatter_loss(targets, indices, values)
"""


def _found(
    caught: str = "tf.errors.InvalidArgumentError",
    decorator: str = "@tf.function",
    imports: str = "",
) -> list[tuple[int, str]]:
    source = SOURCE.format(caught=caught, decorator=decorator, imports=imports).lstrip()
    return [(f.start.line, f.message) for f in check_source(source, select=["TFR207"])]


def test_an_op_error_caught_in_a_helper_of_a_traced_step() -> None:
    found = _found()
    assert [line for line, _ in found] == [7]
    assert found[0][1].startswith(
        "`except tf.errors.InvalidArgumentError` in traced `scatter_loss` never catches"
    )


def test_an_op_error_in_a_tuple_or_through_errors_impl() -> None:
    assert [line for line, _ in _found("(ValueError, tf.errors.OpError)")] == [7]
    imports = "from tensorflow.python.framework import errors_impl"
    assert [line for line, _ in _found("errors_impl.OutOfRangeError", imports=imports)] == [7]


def test_eager_code_and_python_errors_are_left_alone() -> None:
    assert _found(decorator="# eager") == []
    assert _found(caught="ValueError") == []
    assert _found(caught="Exception") == []


def test_a_handler_raising_again_on_every_path_is_left_alone() -> None:
    source = SOURCE.format(
        caught="tf.errors.InvalidArgumentError as error", decorator="@tf.function", imports=""
    ).replace(
        "        updated = targets\n",
        "        if 'shape' in str(error):\n"
        "            raise ValueError('targets and indices disagree') from error\n"
        "        else:\n"
        "            raise\n",
    )
    assert [f.code for f in check_source(source.lstrip(), select=["TFR207"])] == []
    falls_back = source.replace("        else:\n            raise\n", "")
    assert [f.code for f in check_source(falls_back.lstrip(), select=["TFR207"])] == ["TFR207"]
