"""TFR201 on an attribute a method hands back: `self.x0, loss =
self.step(self.x0)` rebinds `self.x0` to the very object the step was
given when the step returns its parameter unchanged (it updates the
variable in place), so traced code reading `self.x0` sees no new value.
A step that returns a new value (`tf.identity(x0)`) does rebind it."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

SOLVER = """
import numpy as np
import tensorflow as tf


class Base:
    def __init__(self, start):
        self.x0 = np.clip(start, 0.0, 1.0)


class Solver(Base):
    def __init__(self, start):
        super().__init__(start)
        self.x0 = tf.Variable(tf.convert_to_tensor(self.x0, dtype=tf.float32))

    @tf.function
    def loss_fn(self, x0):
        return tf.reduce_sum(tf.square(x0 - tf.cast(self.x0 > 0.5, x0.dtype)))

    def train_step(self, x0, n):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(x0) * n
        grads = tape.gradient(loss, x0)
        self.optimizer.apply_gradients(zip([grads], [x0]))
        return x0, n, loss

    def fit(self, steps):
        self.optimizer = tf.keras.optimizers.Adam(0.01)
        for _ in range(steps):
            self.x0, n, loss = self.train_step(self.x0, 1.0)
        return loss
"""


def _lines(source: str) -> list[int]:
    findings = check_source(textwrap.dedent(source), select=["TFR201"])
    return [f.start.line for f in findings]


@pytest.mark.parametrize(
    "call",
    ["self.train_step(self.x0, 1.0)", "self.train_step(n=1.0, x0=self.x0)"],
)
def test_an_attribute_handed_back_unchanged_is_not_rebound(call: str) -> None:
    assert _lines(SOLVER.replace("self.train_step(self.x0, 1.0)", call)) == []


def test_an_attribute_given_a_new_value_by_the_step_is_rebound() -> None:
    returned_anew = SOLVER.replace("return x0, n, loss", "return tf.identity(x0), n, loss")
    assert _lines(returned_anew) == [18]


def test_an_attribute_passed_for_another_parameter_is_rebound() -> None:
    swapped = SOLVER.replace(
        "self.train_step(self.x0, 1.0)", "self.train_step(tf.zeros([3]), self.x0)"
    )
    assert _lines(swapped) == [18]
