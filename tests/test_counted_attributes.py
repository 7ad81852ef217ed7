"""TFR202 on an attribute given a value computed from its own, as
`self.step += 1` gives it: through a local name, or `self.step =
self.step + 1`. Set from anything else, a plain assignment is how layers
keep their parts and is left alone."""

from __future__ import annotations

from tests.counted_attributes import COUNTER_THROUGH_A_NAME

from tfrewrite.api import check_source

SELECT = ["TFR202"]


def _lines(source: str) -> list[int]:
    return [f.start.line for f in check_source(source, select=SELECT)]


def test_a_counter_kept_through_a_local_name() -> None:
    assert _lines(COUNTER_THROUGH_A_NAME) == [17]


def test_a_counter_read_in_the_value_itself() -> None:
    source = COUNTER_THROUGH_A_NAME.replace("self.step = step", "self.step = self.step + 2")
    assert _lines(source) == [17]


def test_an_attribute_set_from_something_else_is_left_alone() -> None:
    source = COUNTER_THROUGH_A_NAME.replace("step = self.step\n", "step = 0\n")
    assert _lines(source) == []


SCRATCH_ON_SELF = """
import tensorflow as tf


class Routing(tf.keras.layers.Layer):
    def call(self, x):
        self.logits = tf.zeros_like(x)
        for _ in range(3):
            self.logits = self.logits + tf.nn.softmax(x)
        return self.logits * x


@tf.function
def route(layer, x):
    return layer(x)
"""


def test_an_attribute_set_afresh_in_each_call_first_is_scratch_state() -> None:
    """Bound at the start of every call, then updated from itself: nothing
    an earlier call left is read."""
    assert _lines(SCRATCH_ON_SELF) == []
