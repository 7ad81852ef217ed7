import tensorflow as tf


@tf.function
def loss(y_true, y_pred):
    total = 0.0
    if tf.reduce_sum(y_true) > 0:
        total = tf.reduce_mean(y_pred)
    return total


PROBES = [
    ("loss", (tf.ones([3], tf.float64), tf.ones([3], tf.float64))),
    ("loss", (-tf.ones([3], tf.float64), tf.ones([3], tf.float64))),
]
