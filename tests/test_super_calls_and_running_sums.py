"""Two facts blind sets showed missing.

- A method a traced override reaches through `super()` runs traced too
  (`@tf.function def latent(self): ...; return super().latent()`): the
  base class's `np.random` draws run once, at trace time (TFR102,
  `tests/tf/test_super_calls_tf.py`). A base of Keras' own is not the
  project's code.
- A running sum written `total = total + loss` is one, as `total += loss`
  is: divided by the number of batches, a short last batch is
  over-weighted (TFR306).
"""

from __future__ import annotations

import textwrap

from tfrewrite.api import check_source

LATENT = """
import numpy as np
import tensorflow as tf


class Sampler:
    def latent(self, n):
        return np.random.randn(n, 2).astype("float32")


class TracedSampler(Sampler):
    @tf.function
    def latent(self, n):
        return super().latent(n) * 2.0


class Layer(tf.keras.layers.Dense):
    def call(self, x):
        return super().call(x)
"""

TOTALS = """
import tensorflow as tf


@tf.function
def train_step(batch):
    return tf.reduce_mean(batch)


def train(dataset, epochs):
    for epoch in range(epochs):
        total = 0.0
        batches = 0
        for batch in dataset:
            total = total + train_step(batch)
            batches += 1
        print("loss", total / batches)
"""


def test_a_base_method_reached_through_super_runs_traced() -> None:
    findings = check_source(textwrap.dedent(LATENT), select=["TFR102"])
    assert [f.start.line for f in findings] == [8]


def test_a_sum_written_as_an_addition_to_itself_is_a_running_sum() -> None:
    findings = check_source(textwrap.dedent(TOTALS), select=["TFR306"])
    assert [f.start.line for f in findings] == [17]
