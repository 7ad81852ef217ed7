"""A Keras learning-rate schedule runs traced: the optimizer calls it with
its step count inside the traced train step. Python state it reads (a count
another method keeps) is frozen at the first trace (TFR201)."""

from __future__ import annotations

from tfrewrite.api import check_source

# A schedule that counts steps in Python, advanced by a callback's method.
COUNTED = """\
import tensorflow as tf


class DecayByCount(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, rate):
        self.rate = rate
        self.count = 0

    def advance(self):
        self.count += 1

    def __call__(self, step):
        return self.rate / (1.0 + self.count)
"""

# The same decay read from the step the optimizer passes.
FROM_STEP = COUNTED.replace(
    "return self.rate / (1.0 + self.count)",
    "return self.rate / (1.0 + tf.cast(step, tf.float32))",
)


def test_python_state_read_by_a_schedule_is_reported():
    [finding] = check_source(COUNTED, select=["TFR201"])
    assert finding.start.line == 13
    assert "`self.count`" in finding.message and "DecayByCount.__call__" in finding.message


def test_a_schedule_computed_from_its_step_is_left_alone():
    assert check_source(FROM_STEP) == []
