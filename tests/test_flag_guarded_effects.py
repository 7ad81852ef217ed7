"""TFR202: a `self` flag tested and set in traced code around per-call
effects (`if self.first: self.first = False; self.mean.assign(m)`): the test
runs while tracing, so the trace keeps the branch and its variable writes run
on every call. A branch that only creates state once (`if self.v is None:
self.v = tf.Variable(...)`) is the set-up tracing expects: not reported."""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

REFERENCE_NORM = """
import tensorflow as tf


class ReferenceNorm(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.first = True
        self.mean = tf.Variable(tf.zeros([input_shape[-1]]), trainable=False)

    def call(self, x, training=False):
        batch_mean = tf.reduce_mean(x, axis=0)
        if self.first and training:
            self.first = False
            self.mean.assign(batch_mean)
        return x - self.mean
"""

LAZY_STATE = """
import tensorflow as tf


class Accumulator(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.total = None

    def call(self, x):
        if self.total is None:
            self.total = tf.Variable(tf.zeros_like(x), trainable=False)
        self.total.assign_add(x)
        return self.total
"""


def test_a_flag_set_in_the_branch_it_guards_around_variable_writes_is_reported() -> None:
    [finding] = check_source(textwrap.dedent(REFERENCE_NORM), select=["TFR202"])
    assert finding.start.line == 13 and finding.fix is None
    assert "`self.first` is tested and set in traced `ReferenceNorm.call`" in finding.message
    assert "`self.mean.assign(...)` runs on every call" in finding.message


def test_state_created_once_behind_a_flag_is_not_reported() -> None:
    assert check_source(textwrap.dedent(LAZY_STATE), select=["TFR202"]) == []


def test_a_flag_in_a_set_up_method_is_not_reported() -> None:
    # `build` runs once, by design: its own `built` guard changes nothing.
    source = """
    import tensorflow as tf


    class ScaledEmbedding(tf.keras.layers.Layer):
        def __init__(self, scale):
            super().__init__()
            self.embedding = tf.keras.layers.Embedding(10, 4)
            self.scale = scale
            self.ready = False

        def build(self, input_shape):
            if not self.ready:
                self.embedding.build(input_shape)
                self.embedding.embeddings.assign(self.embedding.embeddings / self.scale)
                self.ready = True

        def call(self, inputs):
            return self.embedding(inputs) * self.scale
    """
    assert check_source(textwrap.dedent(source), select=["TFR202"]) == []
