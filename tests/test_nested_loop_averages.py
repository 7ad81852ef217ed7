"""TFR306 reads a sum and its count by the loop that holds them: a
validation pass nested in the training loop that sums one value per image
and counts the images (`num += 1`) averages over its own passes, not over
the training batches (no finding). Summed in the nested loop but counted
per training batch, it is a per-batch average (the finding)."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

LOOP = """
import tensorflow as tf


def train(model, train_ds, val_images, step):
    total_train = 0.0
    for i, batch in enumerate(train_ds):
        total_train += step(batch)
        total_val = 0.0
        num = 0
        for image in val_images:
            total_val += model(tf.expand_dims(image, 0))
            {count}
        val_loss = total_val / num
"""


def _lines(count: str) -> list[int]:
    source = textwrap.dedent(LOOP.replace("{count}", count))
    return [f.start.line for f in check_source(source, select=["TFR306"])]


def test_a_nested_pass_counting_its_own_items_is_not_reported() -> None:
    assert _lines("num += 1") == []


def test_a_nested_sum_counted_per_training_batch_is() -> None:
    source = LOOP.replace("            {count}\n", "").replace(
        "        val_loss = total_val / num", "        num += 1\n        val_loss = total_val / num"
    )
    found = check_source(textwrap.dedent(source), select=["TFR306"])
    assert [f.start.line for f in found] == [14]
