"""TFR306 on a mean over batches written as a running sum of fractions:
each batch's loss divided by the number of batches before it is added
(`total += loss / float(n_batches)`), the count bound once in the function
as examples over batch size (`n_batches = n // batch_size`). A mini-batch
loop stepping by the batch size feeds a short last batch, which then
weighs as much as a full one. Dividing by a count of examples, or a loop
that stops at whole batches, is left alone."""

from __future__ import annotations

from tfrewrite.api import check_source

SOURCE = """
import tensorflow as tf


def train_epoch(model, optimizer, x, y, batch_size):
    n = x.shape[0]
    n_mb = {count}
    total = 0.0
    for {loop}
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        total += loss / float(n_mb)
    return total
"""


def _lines(
    count: str = "n // batch_size", loop: str = "start in range(0, n, batch_size):"
) -> list[int]:
    source = SOURCE.format(count=count, loop=loop).lstrip()
    return [f.start.line for f in check_source(source, select=["TFR306"])]


def test_fractions_of_the_number_of_batches_sum_to_a_per_batch_mean() -> None:
    assert _lines() == [14]


def test_a_count_of_examples_is_no_number_of_batches() -> None:
    assert _lines(count="x.shape[0]") == []


def test_a_loop_over_whole_batches_is_exact() -> None:
    whole = "i in range(n_mb):\n        start = i * batch_size"
    assert _lines(loop=whole) == []
