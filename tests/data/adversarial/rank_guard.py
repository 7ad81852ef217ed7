import tensorflow as tf


@tf.function
def squeeze_batch(x):
    if tf.rank(x) == 3:
        x = tf.squeeze(x, 0)
    return x * 2.0


PROBES = [
    ("squeeze_batch", (tf.ones([1, 2, 2]),)),
    ("squeeze_batch", (tf.ones([2, 2]),)),
]
