import tensorflow as tf


def scaled_loss(y_true, y_pred):
    scale = tf.constant(1.0)
    error = tf.reduce_mean(tf.square(y_true - y_pred))
    if error > 0.2:
        scale = tf.constant(2.0)
        error = error - 0.1
    return error * scale
