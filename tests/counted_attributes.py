"""A traced step keeping a Python counter on `self` through a local name
(`step = self.step`, `step += 1`, `self.step = step`): the count moves once
per trace, not once per call."""

COUNTER_THROUGH_A_NAME = """
import tensorflow as tf


class Logger(tf.Module):
    def __init__(self):
        super().__init__()
        self.step = 0
        self.total = tf.Variable(0.0)

    @tf.function
    def log(self, values):
        step = self.step
        for _ in range(2):
            self.total.assign_add(tf.reduce_sum(values))
            step += 1
        self.step = step
        return self.total
"""
