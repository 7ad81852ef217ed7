import tensorflow as tf


@tf.function
def scaled(y_true, y_pred):
    factor = 1
    if tf.reduce_mean(y_pred) > 0.5:
        factor = 10
    return tf.reduce_mean(y_true) * 2.0 * factor


PROBES = [
    ("scaled", (tf.ones([3]), tf.ones([3]))),
    ("scaled", (tf.ones([3]), tf.zeros([3]))),
]
