"""Sources shared by the fast and TensorFlow tests of `for` loops only
AutoGraph can run traced."""

COLLAPSE = """
import tensorflow as tf


@tf.function
def collapse(logits):
    best = tf.math.argmax(logits, axis=-1)
    kept = tf.TensorArray(tf.int64, size=0, dynamic_size=True)
    for index in best:
        kept = kept.write(kept.size(), index * 2)
    return kept.stack()


@tf.function
def row_means(x):
    rows = tf.shape(x)[0]
    means = tf.TensorArray(tf.float32, size=rows)
    for i in range(rows):
        means = means.write(i, tf.reduce_mean(x[i]))
    return means.stack()


@tf.function
def doubled(x):
    total = tf.zeros_like(x)
    for _ in tf.range(2):
        total += x
    return total
"""
