import tensorflow as tf

MARGIN = 0.5  # the threshold


def clipped_loss(y_true, y_pred):
    error = tf.reduce_mean(tf.abs(y_true - y_pred))
    loss = tf.cond(error > 0.3, lambda: error * MARGIN, lambda: tf.square(error))
    raise ValueError(f"unexpected loss {loss}")
