"""TFR202 and a set-up method: `build` filling its object's own list runs
once by design (Keras, or the flag that guards its call, sees to it), even
when the first call comes from traced code; the same append in a method
that runs on every call is Python state updated once per trace."""

from __future__ import annotations

from tfrewrite.api import check_source

SUMS = """
import tensorflow as tf


class GradientSums:
    def __init__(self):
        self.slots = []
        self.built = False

    def {method}(self, variables):
        for v in variables:
            self.slots.append(tf.Variable(tf.zeros_like(v), trainable=False))
        self.built = True

    def add(self, grads, variables):
        if not self.built:
            self.{method}(variables)
        for g, slot in zip(grads, self.slots):
            slot.assign_add(g)


weights = tf.Variable([1.0, 2.0])
sums = GradientSums()


@tf.function
def step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(weights * x)
    sums.add(tape.gradient(loss, [weights]), [weights])
"""


def test_build_filling_its_own_list_is_set_up() -> None:
    assert check_source(SUMS.format(method="build"), select=["TFR202"]) == []


def test_the_same_append_in_another_method_is_reported() -> None:
    (finding,) = check_source(SUMS.format(method="grow"), select=["TFR202"])
    assert "`self.slots.append(...)` mutates Python state" in finding.message
