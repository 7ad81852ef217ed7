"""A parameter a traced `call` turns into a count (`current = len(self.blocks)
- steps`) that bounds a Python `range`: the caller passes a Python int (a
growing model's phase), so a test on it is a Python `if`, not a tensor's
(TFR101). A count computed from two parameters, or bound twice, says nothing
of either."""

from __future__ import annotations

from tfrewrite.api import check_source

PROGRESSIVE = """
import tensorflow as tf


class Critic(tf.keras.Model):
    def __init__(self, depth):
        super().__init__()
        self.blocks = [tf.keras.layers.Dense(8) for _ in range(depth)]
        self.out = tf.keras.layers.Dense(1)

    def call(self, x, phase):
        current = len(self.blocks) - phase
        if phase > 0:
            for i in range({start}, len(self.blocks)):
                x = self.blocks[i](x)
        return self.out(x)
"""


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(source, select=["TFR101"])]


def test_a_range_bounded_by_a_count_of_the_parameter() -> None:
    assert _lines(PROGRESSIVE.replace("{start}", "current + 1")) == []


def test_without_the_range_the_parameter_is_a_likely_tensor() -> None:
    assert _lines(PROGRESSIVE.replace("{start}", "0")) == [13]


def test_a_count_of_two_parameters_says_nothing_of_either() -> None:
    source = PROGRESSIVE.replace("def call(self, x, phase):", "def call(self, x, phase, shift):")
    source = source.replace("len(self.blocks) - phase", "shift - phase")
    assert _lines(source.replace("{start}", "current + 1")) == [13]
