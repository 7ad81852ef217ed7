import tensorflow as tf


def scaled_loss(y_true, y_pred):
    scale = tf.constant(1.0)
    error = tf.reduce_mean(tf.square(y_true - y_pred))
    error = tf.cond(error > 0.2, lambda: error - 0.1, lambda: error)
    return error * scale
