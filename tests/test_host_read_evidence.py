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


# A sampler whose helper is handed what NumPy computed: a host value, never
# a tensor (NumPy on a tensor in traced code raises where it is called, which
# TFR104 reports there), so the helper's own NumPy calls are not on tensors.
SAMPLER = """
import numpy as np
import tensorflow as tf


class Sampler(tf.keras.Model):
    def softmax(self, z):
        return np.exp(z) / np.sum(np.exp(z))

    def sample(self, logits, temperature=0.8):
        scaled = np.log(logits) / temperature
        return self.softmax(scaled)

    def call(self, x):
        return x
"""


def test_what_numpy_computes_is_handed_on_as_a_host_value() -> None:
    index = build_index(textwrap.dedent(SAMPLER), "sampler.py", "sampler")
    handed = {site.callee: site.args for site in index.call_sites}
    assert handed["sampler.Sampler.softmax"] == "p"


def test_numpy_on_what_numpy_computed_is_no_finding() -> None:
    from tfrewrite.api import check_source

    source = textwrap.dedent(SAMPLER).replace("return x\n", "return self.sample(x)\n")
    findings = check_source(source, select=["TFR104"])
    assert [f.start.line for f in findings] == [11]  # `np.log(logits)` on the call's tensor
