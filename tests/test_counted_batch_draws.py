"""TFR306 and loops that go over a count: `for step in range(steps)`, also
through a progress bar bound by a `with` (`with tqdm(range(steps)) as
pbar: for step in pbar:`). Each pass drawing its batch from an object that
hands out batches of the size asked (`batcher.next_batch()`,
`buffer.sample(64)`) ends by its count, not by running out of data: no
batch is short, and the running average is exact. `next(iterator)` over a
batched dataset does run out, and its last batch may be short."""

from __future__ import annotations

import textwrap

import pytest

from tfrewrite.api import check_source

SOURCE = textwrap.dedent(
    """
    import tensorflow as tf
    from tqdm import tqdm


    @tf.function
    def train_step(model, optimizer, batch):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(batch[0]) - batch[1]))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    def train(model, optimizer, batcher, steps):
        total_loss = 0.0
        with tqdm(range(steps)) as pbar:
            for step in pbar:
                batch = DRAW
                total_loss += train_step(model, optimizer, batch)
        return total_loss / steps
    """
)


@pytest.mark.parametrize("draw", ["batcher.next_batch()", "batcher.sample(64)"])
def test_a_counted_loop_drawing_from_a_batcher_averages_whole_batches(draw: str) -> None:
    assert check_source(SOURCE.replace("DRAW", draw), select=["TFR306"]) == []


def test_a_counted_loop_taking_the_next_element_of_a_dataset_may_end_short() -> None:
    source = SOURCE.replace("DRAW", "next(batcher)")
    [finding] = check_source(source, select=["TFR306"])
    assert "`total_loss` sums one value per batch" in finding.message
