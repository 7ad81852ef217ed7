"""A step may leave its tape to a helper: `loss, grads = self.grad(x, y)`
then `apply_gradients` is a train step (`FunctionInfo.trains`), also when
the helper differentiates with respect to what another method returns
(`tape.gradient(loss, self.training_variables())`). The helper alone is
no step: the function that applies its gradients is."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source
from tfrewrite.facts.index import build_index

SOURCE = """
import tensorflow as tf


class Solver:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def training_variables(self):
        return self.model.trainable_variables

    def grad(self, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(x) - y))
        grads = tape.gradient(loss, self.training_variables())
        return loss, grads

    def optimization_step(self, x, y):
        loss, grads = self.grad(x, y)
        self.optimizer.apply_gradients(zip(grads, self.training_variables()))
        return loss

    def fit(self, x, y, epochs):
        for _ in range(epochs):
            self.optimization_step(x, y)
"""


@pytest.mark.parametrize(
    ("function", "trains"),
    [
        ("Solver.optimization_step", True),
        ("Solver.grad", False),
        ("Solver.training_variables", False),
        ("Solver.fit", False),
    ],
)
def test_applying_a_helpers_gradients_trains(function: str, trains: bool) -> None:
    index = build_index(textwrap.dedent(SOURCE), "solver.py", "solver")
    assert index.functions[function].trains is trains


def test_the_step_called_from_a_loop_is_decorated() -> None:
    [finding] = check_source(textwrap.dedent(SOURCE), select=["TFR302"])
    assert finding.start.line == 19 and "`optimization_step`" in finding.message
