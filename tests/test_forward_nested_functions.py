"""A nested function named before its `def` (a traced distributed step
handing `strategy.run` the train step defined under it) is that function:
the step runs traced, in a replica context, and is no undecorated step for
TFR302 to decorate."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

MAIN = """
import tensorflow as tf


def main(strategy, model, optimizer, batches):
    @tf.function
    def distributed_train_step(x, y):
        return strategy.run(train_step, args=(x, y))

    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in batches:
        distributed_train_step(x, y)
"""


def test_a_step_handed_to_strategy_run_before_its_def_runs_traced() -> None:
    assert check_source(textwrap.dedent(MAIN), select=["TFR302", "TFR303"]) == []
    # Printing a tensor in it is printing in traced code.
    printing = MAIN.replace("        return loss\n", "        print(loss)\n        return loss\n")
    [found] = check_source(textwrap.dedent(printing), select=["TFR103"])
    assert found.start.line == 15
