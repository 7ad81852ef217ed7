"""Sources shared by the fast and TensorFlow tests of `len()` of a tensor in
traced code: of a tensor an op computes, of a parameter every call site
gives one tensor (`noise_for(labels)`), and of a parameter given a tuple."""

LENGTHS = """
import tensorflow as tf


@tf.function
def tiled_state(x, h0):
    rows = tf.reshape(x, [-1, 3])
    return tf.tile(h0, [len(rows), 1])


@tf.function
def pair_sum(inputs):
    assert isinstance(inputs, tuple) and len(inputs) == 2
    count = len(inputs)
    first, second = inputs
    return (first + second) * count


@tf.function
def noise_for(labels):
    return tf.zeros((len(labels), 2))


def run():
    data = tf.ones((4, 3))
    h0 = tf.constant([[1.0, 2.0]])
    labels = tf.constant([1, 2, 3])
    return tiled_state(data, h0), pair_sum((data, data)), noise_for(labels)
"""
