"""Sources shared by the fast and TensorFlow tests of a `tf.Variable` a
traced method tests by `if`, wrapped with `tf.function(func=...)`."""

VARIABLE_FLAG = """
import tensorflow as tf


class Runner:
    def __init__(self):
        self.scale = tf.Variable([[1.0], [2.0], [3.0]])
        self.fitting = tf.Variable(False, trainable=False)
        self.graph_step = tf.function(func=self.step)

    def step(self, x):
        if self.fitting:
            return tf.reduce_sum(tf.matmul(x, self.scale)) * 2.0
        else:
            return tf.reduce_sum(tf.matmul(x, self.scale))


def run(batches):
    runner = Runner()
    results = []
    for x in batches:
        runner.fitting.assign(True)
        results.append(runner.graph_step(x))
        runner.fitting.assign(False)
        results.append(runner.graph_step(x))
    return results
"""
