import numpy as np
import tensorflow as tf


@tf.function
def accuracy(y_true, y_pred):
    hits = tf.equal(y_true, tf.round(y_pred))
    m = np.mean(hits)
    return m * tf.reduce_mean(y_pred)


PROBES = [
    ("accuracy", (tf.constant([1.0, 0.0], tf.float64), tf.constant([0.9, 0.8], tf.float64))),
]
