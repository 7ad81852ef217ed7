"""TFR306 asks whether a loop can meet a short final batch. A loop zipped
with `range(n)`, `n` a floor division of the data's size by the batch size,
reads `n` whole batches and stops before the short one: averaging its
per-batch means is exact. Averaging the sizes of items (`len(t)` per
trajectory) is a mean size, not a mean of per-batch values."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

LOOP = """
    import numpy as np
    import tensorflow as tf

    images = np.zeros((1000, 8), "float32")
    batch_size = 64
    valid = tf.data.Dataset.from_tensor_slices(images).batch(batch_size)
    steps = {count}


    def evaluate(model):
        losses = []
        for step, batch in zip(range(steps), valid):
            losses.append(float(tf.reduce_mean(model(batch))))
        return np.mean(losses)
"""


def _found(tmp_path: Path, count: str) -> list[tuple[str, int]]:
    files = {"evaluate.py": LOOP.replace("{count}", count)}
    return found_lines(check_project(tmp_path, files, ("TFR306",)))


def test_a_loop_over_a_whole_number_of_batches_is_exact(tmp_path: Path) -> None:
    assert _found(tmp_path, "int(len(images) / batch_size)") == []
    assert _found(tmp_path, "len(images) // batch_size") == []


def test_one_rounding_up_meets_the_short_batch(tmp_path: Path) -> None:
    assert _found(tmp_path, "-(-len(images) // batch_size) + 1") == [("evaluate.py", 14)]
    assert _found(tmp_path, "int(np.ceil(len(images) / batch_size))") == [("evaluate.py", 14)]


SIZES = """
    import numpy as np
    import tensorflow as tf


    def report(model, trajectory_batch, test_batches):
        mean_length = np.mean([len(traj) for traj in trajectory_batch])
        mean_loss = np.mean([model.evaluate(b) for b in test_batches])
        return mean_length, mean_loss
"""


def test_a_mean_of_item_sizes_is_no_per_batch_average(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"report.py": SIZES}, ("TFR306",))
    assert found_lines(found) == [("report.py", 7)]
