import tensorflow as tf


def scaled_loss(y_true, y_pred):
    scale = tf.constant(1.0)
    error = tf.reduce_mean(tf.square(y_true - y_pred))

    def above():
        return tf.constant(2.0), error - 0.1

    scale, error = tf.cond(error > 0.2, above, lambda: (scale, error))
    return error * scale
