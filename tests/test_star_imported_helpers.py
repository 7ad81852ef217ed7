"""A module that names no TensorFlow is set aside before pass 1 unless
traced code refers to it; one another module star-imports gives that module
names (`np` of `from utils import *`) its own code reads, so it is indexed
too. Then `rnd = np.random.randint(2)`, which the script's loop draws anew
for each step, is a plain value the traced step reads frozen (TFR201)."""

from __future__ import annotations

from pathlib import Path

from tests.projects import check_project, found_lines

UTILS = """
    import glob

    import numpy as np


    def load(pattern):
        return [np.load(path) for path in glob.glob(pattern)]
"""

TRAIN = """
    import tensorflow as tf
    from utils import *


    @tf.function
    def train_step(x):
        return tf.reduce_mean(x) if rnd == 0 else tf.reduce_sum(x)


    if __name__ == "__main__":
        for iteration in range(10):
            rnd = np.random.randint(2)
            train_step(tf.ones(3))
"""


def test_a_star_imported_module_without_tensorflow_gives_its_names(tmp_path: Path) -> None:
    found = check_project(tmp_path, {"utils.py": UTILS, "train.py": TRAIN}, ("TFR201",))
    assert found_lines(found) == [("train.py", 7)]
