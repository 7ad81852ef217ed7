"""A step that unpacks what an object of unknown class returns (`loss, mse
= loss_fn(y, pred)` for a `loss_fn` the step is handed) is not proven safe
to decorate: a Keras loss object returns one tensor, which unpacks eagerly
along its first axis but raises when traced (`tests/tf/
test_unpacked_results_tf.py`). TFR302's fix is then unsafe, and says why;
a function the file defines returns what its `return` says."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source
from tfrewrite.findings import Applicability

STEP = """
import tensorflow as tf


def pair_loss(y, pred):
    return tf.reduce_mean(tf.square(y - pred)), tf.reduce_mean(tf.abs(y - pred))


def train(model, loss_fn, optimizer, batches):
    def optimize_step(x, y):
        with tf.GradientTape() as tape:
            pred = model(x, training=True)
            loss, mae = {callee}(y, pred)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss, mae

    for x, y in batches:
        optimize_step(x, y)
"""


def test_unpacking_a_handed_objects_result_makes_the_decoration_unsafe() -> None:
    [finding] = check_source(textwrap.dedent(STEP.format(callee="loss_fn")), select=["TFR302"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.UNSAFE
    assert "unpacks what `loss_fn(...)` returns" in finding.fix.message


def test_unpacking_what_a_function_of_the_file_returns_stays_safe() -> None:
    [finding] = check_source(textwrap.dedent(STEP.format(callee="pair_loss")), select=["TFR302"])
    assert finding.fix is not None and finding.fix.applicability is Applicability.SAFE
