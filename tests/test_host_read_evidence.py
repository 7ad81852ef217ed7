"""What a call site hands on: `x.numpy()` (and `.item()`, `.tolist()`) is
a NumPy or Python value on the host, and an assignment's value is read
before its names are bound, so `image = trim(image)` hands `trim` what
`image` held before (here the NumPy array), not what `trim` returns."""

from __future__ import annotations

import textwrap

from tfrewrite.facts.index import build_index

SOURCE = """
import numpy as np
import tensorflow as tf


def bounds(array):
    return np.where(array != 0)


def trim(array):
    return array[np.ix_(*bounds(array))]


def preprocess(image, boxes):
    image = image.numpy()
    image = trim(image)
    size = tf.reduce_sum(boxes)
    size = scale(size)
    return image, size


def scale(size):
    return size * 2
"""


def test_a_host_read_hands_on_a_python_value_and_the_old_binding() -> None:
    index = build_index(textwrap.dedent(SOURCE), "prep.py", "prep")
    handed = {site.callee: site.args for site in index.call_sites}
    assert handed["prep.trim"] == "p"
    assert handed["prep.scale"] == "s"
