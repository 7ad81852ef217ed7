"""A name an enclosing `isinstance` test proves a Python container or
scalar is no tensor in that branch: a loss function returning a tensor or a
tuple of them, handled by `if isinstance(loss, tuple) is False: ... else:
list(loss)`, is not iteration over a tensor."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.type_guards import python_instance_guard

SOURCE = """
import tensorflow as tf


@tf.function
def reduced(y, loss_fn):
    loss = tf.abs(loss_fn(y, y))
    if {test}:
        loss = tf.reduce_mean(loss)
    else:
        loss = list(loss)
    return loss
"""


@pytest.mark.parametrize(
    "test",
    [
        "isinstance(loss, tuple) is False",
        "not isinstance(loss, (list, tuple))",
        "isinstance(loss, tuple) == False",
    ],
)
def test_the_branch_the_test_proves_a_tuple_is_not_reported(test: str) -> None:
    source = textwrap.dedent(SOURCE).replace("{test}", test)
    assert check_source(source, select=["TFR108"]) == []


def test_a_test_of_a_class_of_the_project_proves_nothing() -> None:
    source = textwrap.dedent(SOURCE).replace("{test}", "not isinstance(loss, Pair)")
    assert [f.start.line for f in check_source(source, select=["TFR108"])] == [11]


def test_an_unguarded_iteration_is_reported() -> None:
    source = textwrap.dedent(SOURCE).replace("{test}", "y is None")
    assert [f.start.line for f in check_source(source, select=["TFR108"])] == [11]


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("isinstance(x, list)", ("x", True)),
        ("isinstance(x, (int, float)) is True", ("x", True)),
        ("not isinstance(x, dict)", ("x", False)),
        ("isinstance(x, tuple) is False", ("x", False)),
        ("not isinstance(x, tuple) is False", ("x", True)),
        ("isinstance(x, tf.Tensor)", None),
        ("isinstance(self.x, list)", None),
        ("x is None", None),
    ],
)
def test_what_a_test_proves(test: str, expected: tuple[str, bool] | None) -> None:
    assert python_instance_guard(cst.parse_expression(test)) == expected


def test_a_guard_inside_a_loop_proves_the_same() -> None:
    source = """
    import tensorflow as tf


    @tf.function
    def reduced(y, loss_fn):
        total = 0.0
        for _ in range(3):
            loss = tf.abs(loss_fn(y, y))
            if not isinstance(loss, (list, tuple)):
                total += tf.reduce_mean(loss)
            else:
                total += sum(list(loss))
        return total
    """
    assert check_source(textwrap.dedent(source), select=["TFR108"]) == []
