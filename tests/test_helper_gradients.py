"""A step may leave its tape to a helper: `loss, grads = self.grad(x, y)`
then `apply_gradients` is a train step (`FunctionInfo.trains`), also when
the helper differentiates with respect to what another method returns
(`tape.gradient(loss, self.training_variables())`). The helper alone is
no step: the function that applies its gradients is. A step may also hand
its open tape to a helper with what it differentiates (`self._descend(tape,
total)`): the helper takes and applies the gradients, and what the step
handed it is the tape's loss."""

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


HANDED_TAPE = """
import tensorflow as tf


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _descend(self, tape, total):
        grads = tape.gradient(total, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))

    def step(self, x, y):
        with tf.GradientTape() as tape:
            total = self.loss(y, self.model(x, training=True))
        self._descend(tape, total)
        return total

    @tf.function
    def loss(self, y, pred):
        return tf.reduce_mean(tf.square(y - pred))

    def fit(self, data):
        for x, y in data:
            self.step(x, y)
{evaluation}"""

EVALUATION = """
    def evaluate(self, data):
        for x, y in data:
            print(float(self.loss(y, self.model(x))))
"""


def test_a_step_handing_its_tape_to_a_helper_trains() -> None:
    index = build_index(textwrap.dedent(HANDED_TAPE.format(evaluation="")), "t.py", "t")
    assert index.functions["Trainer.step"].hands_tape and index.functions["Trainer.step"].trains
    assert not index.functions["Trainer._descend"].trains
    assert [t.callee for t in index.tape_losses] == ["t.Trainer.loss"]


def test_the_decorator_moves_from_the_handed_loss_to_the_step() -> None:
    found = check_source(textwrap.dedent(HANDED_TAPE.format(evaluation="")))
    assert sorted((f.code, f.start.line) for f in found) == [("TFR301", 20), ("TFR302", 14)]


def test_a_loss_method_an_eager_loop_also_calls_keeps_its_decorator() -> None:
    """`self.loss(...)` in an evaluation loop runs eagerly there: its own
    decorator traces it, and is not redundant once the step is traced."""
    source = textwrap.dedent(HANDED_TAPE.format(evaluation=EVALUATION))
    source = source.replace("    def step(self", "    @tf.function\n    def step(self")
    assert check_source(source, select=["TFR301"]) == []
    without = source.replace(EVALUATION.strip("\n").split("\n")[2], "            pass")
    assert [f.code for f in check_source(without, select=["TFR301"])] == ["TFR301"]
