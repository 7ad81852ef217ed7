"""TFR306 follows a loop over an attribute of a loader object built from a
class of another module (`for x in loader.valid_ds`): when every dataset
the class batches drops the remainder, no batch is short and a per-batch
average is exact (no finding); when one keeps it, the finding stays."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.projects import check_project, found_lines

LOADER = """
    import tensorflow as tf


    class Loader:
        def __init__(self, n, batch_size):
            data = tf.data.Dataset.range(n)
            self.train_ds = data.batch(batch_size, drop_remainder=True)
            self.valid_ds = data.take(n // 4).batch(batch_size{valid})
"""

TRAIN = """
    import tensorflow as tf
    from data.loader import Loader


    def evaluate(step_fn):
        loader = Loader(100, 8)
        total = 0
        n_batches = 0
        for batch in loader.valid_ds:
            total += step_fn(batch)
            n_batches += 1
        total /= n_batches
        return total
"""


def _found(tmp_path: Path, valid: str) -> list[tuple[str, int]]:
    files = {
        "data/__init__.py": "",
        "data/loader.py": LOADER.replace("{valid}", valid),
        "train.py": TRAIN,
    }
    return found_lines(check_project(tmp_path, files, ("TFR306",)))


def test_a_loader_dropping_every_remainder_feeds_full_batches(tmp_path: Path) -> None:
    assert _found(tmp_path, ", drop_remainder=True") == []


@pytest.mark.parametrize("valid", ["", ", drop_remainder=False"])
def test_a_loader_keeping_one_remainder_keeps_the_finding(tmp_path: Path, valid: str) -> None:
    assert _found(tmp_path, valid) == [("train.py", 12)]
