"""TFR303 on gradient accumulation: a tape block in a loop over
mini-batches whose gradients the loop sums, with one update after the
loop. Each pass runs its forward and backward pass eagerly, op by op; it
is reported without a fix (the sum stays in the loop). A loop that moves
an input along its gradient (an adversarial example) before a model's
update elsewhere sums nothing, and is not reported."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

ACCUMULATED = """
import tensorflow as tf


def train_accumulated(model, optimizer, x, y, parts=4):
    variables = model.trainable_variables
    total = [tf.zeros_like(v) for v in variables]
    size = x.shape[0] // parts
    for i in range(parts):
        part = slice(i * size, (i + 1) * size)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((model(x[part]) - y[part]) ** 2)
        grads = tape.gradient(loss, variables)
        total = [t + g for t, g in zip(total, grads)]
    optimizer.apply_gradients(zip([t / parts for t in total], variables))
"""

ADVERSARIAL = """
import tensorflow as tf


def adversarial_step(model, optimizer, x, y, steps=3):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_mean((model(x) - y) ** 2)
        grad = tape.gradient(loss, x)
        x = x + 0.01 * tf.sign(grad)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x, training=True) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def test_a_loop_summing_its_tapes_gradients_is_reported_without_a_fix() -> None:
    [finding] = check_source(textwrap.dedent(ACCUMULATED), select=["TFR303"])
    assert finding.start.line == 11
    assert finding.fix is None
    assert "sums its gradients for one update after it" in finding.message


def test_a_loop_moving_an_input_along_its_gradient_is_not() -> None:
    assert check_source(textwrap.dedent(ADVERSARIAL), select=["TFR303"]) == []
